"""How a ``MemfsError`` looks over HTTP, for both HTTP adapters (the API and the MCP mount).

The body is always ``{"error": "<one line>", "field": "<the input at fault>"}``. The field
comes from the error itself when it knows (an invalid pair id, a bad card file), else
from the ``name: reason`` prefix memfs errors start with (``k: must be ...``,
``message 2: ts: ...``), else from what the caller says the input was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from memfs.errors import (
    AccessError,
    BadInputError,
    ConflictError,
    LLMError,
    LockError,
    MemfsError,
    NoKeyError,
    NotARepoError,
)

STATUSES: tuple[tuple[type[MemfsError], int], ...] = (
    (NoKeyError, 401), (AccessError, 403), (NotARepoError, 404), (BadInputError, 400),
    (ConflictError, 409), (LockError, 503), (LLMError, 502),
)
"""First match wins (subclasses before their bases); anything else is a 500."""

INPUT_FIELDS = frozenset({"text", "message", "messages", "query", "k", "include_stale",
                          "explain", "rev", "session", "n", "status", "id", "role", "content",
                          "ts", "time_scope", "user", "character"})

_MESSAGE_PREFIX = re.compile(r"message (\d+): (\w+):")
_PREFIX = re.compile(r"(\w+):")


def status_for(exc: MemfsError) -> int:
    for kind, status in STATUSES:
        if isinstance(exc, kind):
            return status
    return 500


def field_for(exc: MemfsError, default: str | None = None) -> str | None:
    """Which input the error is about (None: not about an input, e.g. a failure)."""
    known = getattr(exc, "field", None)
    if isinstance(known, str) and known in INPUT_FIELDS:
        return known
    text = str(exc)
    if match := _MESSAGE_PREFIX.match(text):
        return f"messages[{int(match[1]) - 1}].{match[2]}"
    if (match := _PREFIX.match(text)) and match[1] in INPUT_FIELDS:
        return match[1]
    if isinstance(exc, NoKeyError):
        return "authorization"
    if isinstance(exc, AccessError):
        return "user"
    return default


def error_document(message: str, field: str | None) -> dict[str, str | None]:
    """The one error shape: a single line, and the field it is about."""
    return {"error": " ".join(message.split()), "field": field}


Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


async def send_error(send: Send, status: int, message: str, field: str | None) -> None:
    """Answer a raw ASGI request with the error document (for code below the routing)."""
    body = json.dumps(error_document(message, field)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
