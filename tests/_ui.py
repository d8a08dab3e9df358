"""Helpers for the inspector's browser tests: Debian's chromium driven by Playwright, and a
pair history of thousands of commits built in one second (the server is ``tests/_serve.py``
``live_server``).

Playwright's own browser download is not available here (nor in CI), so the browser is
the system's ``chromium`` (Debian package ``chromium``), passed as ``executable_path``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from memfs.gitio import run_git
from memfs.store import MemoryPair

CHROMIUM = os.environ.get("MEMFS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@contextmanager
def chromium() -> Iterator[Any]:
    """One headless chromium for a test module (skips if the Debian package is missing)."""
    if not shutil.which(CHROMIUM):
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def long_history(pair: MemoryPair, commits: int, dream_every: int = 20) -> None:
    """Append ``commits`` first-parent commits to main with ``git fast-import`` (no hooks,
    one process): pin edits by the user, summary rewrites by the agent, and every
    ``dream_every``-th a dream merge that writes a card, like a pair used for a year."""
    head = run_git(pair.root, "rev-parse", "HEAD").strip()
    lines: list[str] = []
    parent = head
    for n in range(1, commits + 1):
        stamp = 1_767_225_600 + n * 3600
        if n % dream_every == 0:
            card = {f"cards/c-f{n:06d}.md": _card(n)}
            lines += _commit("refs/heads/fast-side", f":{n}000", parent,
                             f"card: write c-f{n:06d}", "memfs-dream", stamp, card)
            # fast-import does not merge: the merge's tree is its first parent's plus these
            lines += _commit("refs/heads/main", f":{n}", parent, "dream: 1 new card",
                             "memfs-dream", stamp, card, merge=f":{n}000",
                             trailers=f"Memfs-Actor: dream\nMemfs-Event: e-fast-{n}")
        else:
            who, path = ("user", "system/pins.md") if n % 2 else ("agent", "summary.md")
            body = f"- pin number {n}\n" if who == "user" else f"Summary version {n}.\n"
            kind = "pin" if who == "user" else "summary"
            lines += _commit("refs/heads/main", f":{n}", parent, f"{kind}: change {n}", who,
                             stamp, {path: body}, trailers=f"Memfs-Actor: {who}")
        parent = f":{n}"
    subprocess.run(["git", "fast-import", "--quiet"], cwd=pair.root,
                   input="".join(lines).encode(), check=True)
    run_git(pair.root, "update-ref", "-d", "refs/heads/fast-side")
    run_git(pair.root, "reset", "-q", "--hard", "HEAD")


def _commit(ref: str, mark: str, parent: str, subject: str, author: str, stamp: int,
            files: dict[str, str], *, merge: str | None = None, trailers: str = "") -> list[str]:
    message = f"{subject}\n\n{trailers}\n" if trailers else f"{subject}\n"
    ident = f"{author} <{author}@memfs.local> {stamp} +0000"
    out = [f"commit {ref}\nmark {mark}\nauthor {ident}\ncommitter {ident}\n",
           f"data {len(message.encode())}\n{message}", f"from {parent}\n"]
    if merge:
        out.append(f"merge {merge}\n")
    for path, text in files.items():
        out.append(f"M 100644 inline {path}\ndata {len(text.encode())}\n{text}\n")
    return out


def _card(n: int) -> str:
    return (f"---\nid: c-f{n:06d}\ntype: fact\nstatus: active\nentities: [user]\n"
            f"created: 2026-01-01T00:00:00Z\nsalience: 0.5\n---\nFact number {n}.\n")
