"""memfs over MCP (the official ``mcp`` SDK), for agents: Claude Desktop/Code, local models.

- ``tools``: the nine tools (``memory_context``, ``search_memory``, ``remember``, ``pin``,
  ``unpin``, ``list_pins``, ``list_cards``, ``memory_log``, ``revert_memory``), each a
  thin call into the pair's verbs;
- ``resources``: ``memfs://{user}/{character}/{path}`` for the pins file and each card;
- ``stdio``: ``memfs mcp``, one pair per process, chosen by ``-u/-c``;
- ``http``: streamable HTTP at ``/v1/pairs/{user}/{character}/mcp`` inside ``memfs serve``,
  behind the same keys as the HTTP API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memfs.mcp.tools import MemfsMCP, Resolve
    from memfs.runtime.host import Host


def build_server(host: Host, resolve: Resolve) -> MemfsMCP:
    """The MCP server: tools and resources over ``host``, for the pair ``resolve`` names."""
    from memfs.mcp import resources
    from memfs.mcp.tools import MemfsMCP

    server = MemfsMCP(host, resolve)
    resources.install(server)
    return server
