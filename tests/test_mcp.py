"""MCP, with the official SDK's own client: over stdio against a spawned ``memfs mcp``, and
over streamable HTTP against a real uvicorn on 127.0.0.1 behind the API keys.

What an agent relies on: the nine tools exist and act on memory (a pin shows up in the
context the model is given, a revert undoes it), the pins file and cards are resources,
a bad argument is a tool error of one line, and a connection never reaches a pair other
than the one its URL (and key) names.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memfs import gitio
from memfs.app import MemoryStore
from tests._serve import bearer, live_server, make_host
from tests.conftest import card_text

TOOLS = {"memory_context", "search_memory", "remember", "pin", "unpin", "list_pins",
         "list_cards", "memory_log", "revert_memory"}


def _doc(result: Any) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def _error(result: Any) -> str:
    assert result.is_error
    text: str = result.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return text


async def _every_tool(client: Client, user: str, character: str) -> None:
    """The whole walk (stdio): every tool, both kinds of resource, the errors."""
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
    pinned = _doc(await client.call_tool("pin", {"text": "Allergic to peanuts"}))
    assert pinned["pins"] == [{"n": 1, "text": "Allergic to peanuts"}]
    unpinned = _doc(await client.call_tool("unpin", {"n": 1}))
    assert (unpinned["removed"], unpinned["pins"]) == ("Allergic to peanuts", [])
    log = _doc(await client.call_tool("memory_log", {"n": 5}))["commits"]
    assert log[0]["subject"].startswith("pin: remove")
    _doc(await client.call_tool("revert_memory", {"rev": log[0]["sha"]}))  # the pin is back
    assert _doc(await client.call_tool("list_pins", {}))["pins"][0]["text"] == "Allergic to peanuts"
    added = _doc(await client.call_tool("remember", {"messages": [
        {"role": "user", "content": "Hello Mira!"}, {"role": "assistant", "content": "Hi!"}]}))
    assert [m["role"] for m in added["added"]] == ["user", "assistant"]
    context = _doc(await client.call_tool("memory_context", {"message": "Hello again"}))
    assert "Allergic to peanuts" in context["system"]
    assert context["messages"] == [{"role": "user", "content": "Hello Mira!"},
                                   {"role": "assistant", "content": "Hi!"},
                                   {"role": "user", "content": "Hello again"}]
    cards = _doc(await client.call_tool("list_cards", {"status": "active"}))["cards"]
    assert [c["id"] for c in cards] == ["c-1a2b3c"]
    assert "no pin 4" in _error(await client.call_tool("unpin", {"n": 4}))
    assert _error(await client.call_tool("memory_log", {"n": 0})).startswith("memory_log: n:")
    assert "role" in _error(await client.call_tool("remember", {"messages": [
        {"role": "robot", "content": "x"}]}))
    assert "no such revision" in _error(await client.call_tool("revert_memory", {"rev": "nope"}))
    await _resources(client, user, character)


async def _resources(client: Client, user: str, character: str) -> None:
    uris = {str(r.uri) for r in (await client.list_resources()).resources}
    base = f"memfs://{user}/{character}"
    assert uris == {f"{base}/system/pins.md", f"{base}/cards/c-1a2b3c.md"}
    card = (await client.read_resource(f"{base}/cards/c-1a2b3c.md")).contents[0]
    assert "Alex runs on Sundays." in card.text  # type: ignore[union-attr]
    for foreign in (f"memfs://sam/{character}/system/pins.md", f"{base}/.git/config",
                    f"{base}/history/s-1.jsonl"):
        with pytest.raises(Exception, match="not a memfs resource|serves|no such|failed"):
            await client.read_resource(foreign)


async def _over_http(client: Client, user: str, character: str) -> None:
    """The HTTP walk: the tools that need the index, and the pair the URL names."""
    assert {t.name for t in (await client.list_tools()).tools} == TOOLS
    _doc(await client.call_tool("pin", {"text": "Allergic to peanuts"}))
    _doc(await client.call_tool("remember", {"messages": [
        {"role": "user", "content": "We sailed to the island on Saturday"}]}))
    hits = _doc(await client.call_tool("search_memory", {"query": "sailed island", "k": 3}))
    assert hits["hits"][0]["text"] == "We sailed to the island on Saturday"
    assert _error(await client.call_tool("search_memory", {"query": "x", "k": 0})) == \
        "search_memory: k: input should be greater than or equal to 1"
    context = _doc(await client.call_tool("memory_context", {"message": "Hello"}))
    assert "Allergic to peanuts" in context["system"]
    await _resources(client, user, character)


def _with_card(store: MemoryStore, user: str, character: str) -> None:
    pair = store.pair(user, character)
    pair.repo.commit({"cards/c-1a2b3c.md": card_text("c-1a2b3c", "Alex runs on Sundays.")},
                     "card", "add c-1a2b3c", gitio.USER)


def test_mcp_over_stdio_with_a_spawned_memfs_mcp(isolated_env: Path) -> None:
    _with_card(MemoryStore(isolated_env), "alex", "mira")
    memfs = shutil.which("memfs", path=str(Path(sys.executable).parent)) or "memfs"
    params = StdioServerParameters(
        command=memfs, args=["-u", "alex", "-c", "mira", "mcp"],
        env={"MEMFS_HOME": str(isolated_env), "HF_HUB_OFFLINE": "1",
             **{k: v for k, v in os.environ.items() if k.startswith("GIT_")}})

    async def main() -> None:
        async with Client(params) as client:
            await _every_tool(client, "alex", "mira")

    asyncio.run(main())


def test_mcp_over_http_on_a_real_uvicorn_behind_the_keys(isolated_env: Path) -> None:
    host = make_host(isolated_env)
    _with_card(host.store, "alex", "mira")
    host.store.pair("sam", "mira")
    alex, sam = host.keys.add("alex")[1], host.keys.add("sam")[1]

    async def main(base: str) -> None:
        url = f"{base}/v1/pairs/alex/mira/mcp"
        async with httpx2.AsyncClient(headers=bearer(alex), timeout=120) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            await _over_http(client, "alex", "mira")
        async with httpx2.AsyncClient() as http:
            ask = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            assert (await http.post(url, json=ask)).status_code == 401
            refused = await http.post(url, json=ask, headers=bearer(sam))
            assert refused.status_code == 403 and refused.json()["field"] == "user"
            missing = await http.post(f"{base}/v1/pairs/alex/nobody/mcp", json=ask,
                                      headers=bearer(alex))
            assert missing.status_code == 404

    with live_server(host) as base:
        asyncio.run(main(base))
