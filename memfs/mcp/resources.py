"""MCP resources: the pins file and each card, as ``memfs://{user}/{character}/{path}``.

Listing names the files of the connection's pair at committed HEAD (what the model's
context is built from); reading returns one of them at HEAD. Only ``system/pins.md`` and
``cards/<id>.md`` are resources, and only of the connection's own pair: any other URI is
"not found", so a resource URI cannot be a way around the key.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import ListResourcesResult, PaginatedRequestParams, Resource

from memfs.errors import MemfsError
from memfs.ids import ID_PATTERN
from memfs.mcp.tools import MemfsMCP, open_pair

TEMPLATE = "memfs://{user}/{character}/{+path}"
PINS = "system/pins.md"


def uri(user: str, character: str, path: str) -> str:
    return f"memfs://{user}/{character}/{path}"


def install(server: MemfsMCP) -> None:
    """The template (for reading) and a listing that knows the connection's pair."""
    server.resource(TEMPLATE, name="memory-file", mime_type="text/markdown",
                    description="A memfs file: system/pins.md or cards/<id>.md")(read_file)

    async def list_resources(ctx: ServerRequestContext[Any, Any],
                             params: PaginatedRequestParams | None) -> ListResourcesResult:
        return ListResourcesResult(resources=await anyio.to_thread.run_sync(_listing, server, ctx))

    server._lowlevel_server.add_request_handler(  # the public hook of the low-level server
        "resources/list", PaginatedRequestParams, list_resources)


def _listing(server: MemfsMCP, request: ServerRequestContext[Any, Any]) -> list[Resource]:
    ctx: Context[Any, Any] = Context(request_context=request, mcp_server=server)
    try:
        with open_pair(ctx) as pair:
            cards = pair.cards()
            user, character = pair.user, pair.character
    except MemfsError:
        return []
    found = [Resource(uri=uri(user, character, PINS), name="pins", mime_type="text/markdown",
                      description="The user's pins: in context on every turn.")]
    found += [Resource(uri=uri(user, character, c.path), name=c.id, mime_type="text/markdown",
                       description=f"{c.type} card ({c.status})") for c in cards]
    return found


def read_file(user: str, character: str, path: str, ctx: Context[Any, Any]) -> str:
    """One memory file of the connection's pair, at committed HEAD."""
    if not _is_memory_file(path):
        raise ResourceNotFoundError(f"{uri(user, character, path)}: not a memfs resource "
                                    "(system/pins.md or cards/<id>.md)")
    try:
        with open_pair(ctx) as pair:
            if (pair.user, pair.character) != (user, character):
                raise ResourceNotFoundError(f"{uri(user, character, path)}: this connection "
                                            f"serves {pair.user}/{pair.character} only")
            text = pair.repo.read_head(path)
    except MemfsError as exc:
        raise ResourceError(" ".join(str(exc).split())) from None
    if text is None:
        raise ResourceNotFoundError(f"{uri(user, character, path)}: no such file at HEAD")
    return text


def _is_memory_file(path: str) -> bool:
    if path == PINS:
        return True
    folder, _, name = path.partition("/")
    return folder == "cards" and name.endswith(".md") and \
        ID_PATTERN.fullmatch(name[:-3]) is not None
