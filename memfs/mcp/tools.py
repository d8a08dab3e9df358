"""The MCP tools and resources of memfs: the same verbs as the CLI and the HTTP API.

Each tool is a few lines: open the connection's pair, call one verb on it, return the
document ``--json`` prints (``memfs/documents.py``). Arguments are typed and bounded, so
the SDK validates them before the tool runs; a ``MemfsError`` becomes a ``ToolError``,
and a validation failure is rewritten to one line (``search_memory: k: ...``), which is
what a model can read and correct.

Which pair a call is about is not an argument: a stdio server serves the pair of
``-u/-c``; over HTTP the connection's URL (``/v1/pairs/{user}/{character}/mcp``, checked
against the key by ``memfs/mcp/http.py``) decides. A model therefore cannot ask for
another user's memory, whatever it puts in the arguments.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memfs import documents
from memfs.errors import MemfsError
from memfs.runtime.host import Host, Principal
from memfs.store import MemoryPair

PairRef = tuple[Principal, str, str]
Resolve = Callable[["Context[Any, Any] | None"], PairRef]
"""Who is asking about which pair, for this call (from the transport)."""

INSTRUCTIONS = """Long-term memory for this conversation (memfs): pins the user wants always
remembered, memory cards written from past conversations, and every past message.
Call memory_context with the user's new message to see what you should know for it;
search_memory to look something up; remember to store the exchange; pin for facts the
user asks you to always keep in mind."""

Doc = dict[str, Any]
F = TypeVar("F", bound=Callable[..., Doc])


class MemfsMCP(MCPServer):
    """An MCP server whose tools act on the pair ``resolve`` names for each call."""

    def __init__(self, host: Host, resolve: Resolve) -> None:
        super().__init__(name="memfs", instructions=INSTRUCTIONS, log_level="WARNING")
        self.host = host
        self.resolve = resolve
        for tool in TOOLS:
            self.add_tool(tool)

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        """As the SDK's, with an argument that fails validation told in one line."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(f"{name}: {_one_line(cause)}") from cause
            raise


def _one_line(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "arguments"
    reason = "is required" if first["type"] == "missing" else first["msg"].lower()
    return f"{where}: {reason}"


@contextmanager
def open_pair(ctx: Context[Any, Any]) -> Iterator[MemoryPair]:
    """This call's pair, held for the call (per-pair lock, key checked again)."""
    server = ctx.mcp_server
    assert isinstance(server, MemfsMCP)
    who, user, character = server.resolve(ctx)
    with server.host.pair(who, user, character) as pair:
        yield pair


def tool_errors(fn: F) -> F:
    """A memfs error is a tool error: one line the model can act on, no traceback."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Doc:
        try:
            return fn(*args, **kwargs)
        except MemfsError as exc:
            raise ToolError(" ".join(str(exc).split())) from None

    return wrapper  # type: ignore[return-value]


class Turn(BaseModel):
    """One message to remember."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: str
    ts: str | None = Field(None, description="ISO-8601 time; now when omitted.")


Text = Annotated[str, Field(min_length=1)]
K = Annotated[int, Field(ge=1, le=100, description="How many hits.")]


@tool_errors
def memory_context(message: Text, ctx: Context[Any, Any]) -> Doc:
    """What you should see for the user's new message: system/ (persona, pins), the
    summary, memories retrieved for it, and the recent messages, within the budget."""
    with open_pair(ctx) as pair:
        return documents.context(pair.context(message))


@tool_errors
def search_memory(query: Text, ctx: Context[Any, Any], k: K = 5,
                  include_stale: bool = False) -> Doc:
    """Search memory cards, the summary and past messages; outdated cards only with
    include_stale (they are marked)."""
    with open_pair(ctx) as pair:
        return documents.search(query, pair.search(query, k=k, include_stale=include_stale))


@tool_errors
def remember(messages: Annotated[list[Turn], Field(min_length=1, max_length=1000)],
             ctx: Context[Any, Any], session: str | None = None) -> Doc:
    """Append messages (user and assistant turns) to the conversation history."""
    with open_pair(ctx) as pair:
        return documents.messages(pair.add_messages(
            [m.model_dump(exclude_none=True) for m in messages], session=session))


@tool_errors
def pin(text: Text, ctx: Context[Any, Any]) -> Doc:
    """Pin a fact the user wants always kept in mind (it is in context on every turn)."""
    with open_pair(ctx) as pair:
        return documents.pin_added(text, pair.pin(text), pair.pins())


@tool_errors
def unpin(n: Annotated[int, Field(ge=1, description="The pin's number in list_pins.")],
          ctx: Context[Any, Any]) -> Doc:
    """Remove pin number n (as list_pins numbers them)."""
    with open_pair(ctx) as pair:
        removed = pair.unpin(n)
        return documents.pin_removed(removed, pair.repo.head(), pair.pins())


@tool_errors
def list_pins(ctx: Context[Any, Any]) -> Doc:
    """The user's pins, numbered."""
    with open_pair(ctx) as pair:
        return documents.pins(pair.pins())


@tool_errors
def list_cards(ctx: Context[Any, Any],
               status: Literal["active", "stale", "expired", "deleted"] | None = None) -> Doc:
    """Long-term memory cards (all, or those with one status)."""
    with open_pair(ctx) as pair:
        return documents.cards(pair.cards(status))


@tool_errors
def memory_log(ctx: Context[Any, Any],
               n: Annotated[int, Field(ge=1, le=1000)] = 20) -> Doc:
    """The latest changes to memory, newest first (dreams show as one merge each)."""
    with open_pair(ctx) as pair:
        return documents.log(pair.log(n))


@tool_errors
def revert_memory(rev: Text, ctx: Context[Any, Any]) -> Doc:
    """Undo one change to memory (a commit from memory_log; a dream: the whole dream)."""
    with open_pair(ctx) as pair:
        return documents.reverted(rev, pair.revert(rev))


TOOLS = (memory_context, search_memory, remember, pin, unpin, list_pins, list_cards,
         memory_log, revert_memory)
