"""No key reaches another user's memory: 20 users, their pairs, every endpoint, every key.

Each pair holds a secret (a pin and a message only it has). Every endpoint of every pair
is tried with the key of every *other* user, over the ASGI app in-process (the MCP
endpoint included): each must be refused (403) with a body free of the secret, and
nothing on disk may change. The same matrix is not vacuous: each user's own key reads its
own secret, and an admin key reads everyone's.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
from pathlib import Path
from typing import Any

import httpx2

from memfs.history import append, parse_ts
from memfs.runtime.host import Host
from memfs.server.app import create_app
from tests._serve import bearer, make_host

USERS = [f"u{n:02d}" for n in range(20)]
PAIRS = [(u, "mira") for u in USERS] + [(u, "kai") for u in USERS[:2]]
MCP_CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "list_pins", "arguments": {}}}
ENDPOINTS: list[tuple[str, str, Any]] = [
    ("GET", "/pins", None), ("POST", "/pins", {"text": "x"}), ("DELETE", "/pins/1", None),
    ("GET", "/cards", None), ("GET", "/cards/c-000001", None),
    ("POST", "/messages", {"messages": [{"role": "user", "content": "x"}]}),
    ("POST", "/context", {"message": "what is my secret?"}),
    ("POST", "/search", {"query": "secret"}), ("GET", "/log", None),
    ("GET", "/commits/HEAD", None), ("GET", "/diff", None), ("POST", "/revert", {"rev": "HEAD"}),
    ("POST", "/dream", None), ("POST", "/check", None), ("PUT", "", None),
    ("POST", "/mcp", MCP_CALL),
]
MCP_HEADERS = {"accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}


def _make_pairs(host: Host) -> dict[tuple[str, str], str]:
    """Every pair, each with its own secret in its pins file and its history.

    One ``git init``, then copies (a commit per pair costs a hook process each); the
    secret pin is an uncommitted hand edit, which ``pins`` and ``diff`` show its owner."""
    first = host.store.pair(*PAIRS[0])
    for user, character in PAIRS[1:]:
        shutil.copytree(first.root, host.store.home / user / character, symlinks=True)
    marks = {}
    for user, character in PAIRS:
        mark = f"secret-{user}-{character}-{secrets.token_hex(4)}"
        root = host.store.home / user / character
        pins = root / "system" / "pins.md"
        pins.write_text(pins.read_text() + f"- {mark}\n")
        append(root, "s-20261101-01", "user", f"my secret is {mark}",
               parse_ts("2026-11-01T10:00:00Z"))
        marks[(user, character)] = mark
    return marks


def _disk(home: Path) -> dict[str, bytes]:
    """Every file of every pair except the derived .memfs/ state."""
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.glob("u*/*/**/*"))
            if p.is_file() and ".memfs" not in p.parts and "/.git/" not in str(p)}


async def _matrix(host: Host, keys: dict[str, str], marks: dict[tuple[str, str], str]
                  ) -> tuple[list[str], int]:
    app = create_app(host)
    leaks, tried = [], 0
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        for (user, character), mark in marks.items():
            base = f"/v1/pairs/{user}/{character}"
            for other in USERS:
                if other == user:
                    continue
                for method, path, body in ENDPOINTS:
                    response = await client.request(method, base + path, json=body,
                                                    headers={**bearer(keys[other]), **MCP_HEADERS})
                    tried += 1
                    if response.status_code not in (403, 404) or mark in response.text:
                        leaks.append(f"{other} {method} {base}{path}: {response.status_code}")
        for user in USERS:
            listed = (await client.get("/v1/pairs", headers=bearer(keys[user]))).json()["pairs"]
            if {p["user"] for p in listed} != {user}:
                leaks.append(f"{user} lists {listed}")
    return leaks, tried


async def _own_and_admin(host: Host, keys: dict[str, str],
                         marks: dict[tuple[str, str], str]) -> list[str]:
    app = create_app(host)
    seen = []
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app),
                                  base_url="http://127.0.0.1") as client:
        for (user, character), mark in marks.items():
            for key in (keys[user], keys["admin"]):
                response = await client.get(f"/v1/pairs/{user}/{character}/pins",
                                            headers=bearer(key))
                if response.status_code == 200 and mark in response.text:
                    seen.append(mark)
    return seen


def test_no_key_reaches_another_users_memory(isolated_env: Path) -> None:
    host = make_host(isolated_env, workers=1)
    marks = _make_pairs(host)
    keys = {user: host.keys.add(user)[1] for user in USERS}
    keys["admin"] = host.keys.add(None)[1]
    before = _disk(host.store.home)
    heads = {p: host.store.pair(*p, create=False).repo.head() for p in PAIRS}
    leaks, tried = asyncio.run(_matrix(host, keys, marks))
    assert tried == len(PAIRS) * (len(USERS) - 1) * len(ENDPOINTS)
    assert leaks == []
    assert _disk(host.store.home) == before
    assert {p: host.store.pair(*p, create=False).repo.head() for p in PAIRS} == heads
    assert len(asyncio.run(_own_and_admin(host, keys, marks))) == 2 * len(PAIRS)
