"""``memfs mcp``: one pair over stdio, for an agent that starts memfs as its subprocess.

Whoever can start the process can already read the pair's files, so no key is asked;
the pair is fixed for the process (``-u/-c`` or ``$MEMFS_USER``/``$MEMFS_CHARACTER``) and
the tools cannot name another. stdout carries only MCP messages; logs go to stderr.
"""

from __future__ import annotations

from typing import Any

from memfs.app import MemoryStore
from memfs.config import Config
from memfs.mcp import build_server
from memfs.mcp.tools import PairRef
from memfs.runtime.host import Host, OpenAccess
from memfs.runtime.model import SharedEmbedder


def run_stdio(config: Config, user: str, character: str) -> None:
    """Serve the pair until the client closes stdin."""
    store = MemoryStore(config.home, config=config, embedder=SharedEmbedder(config.embed_model))
    host = Host(store, allow_open=True)
    ref: PairRef = (OpenAccess(), user, character)

    def resolve(ctx: Any) -> PairRef:
        return ref

    build_server(host, resolve).run("stdio")
