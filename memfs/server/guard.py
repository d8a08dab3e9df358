"""Refusals made before routing: oversized bodies and ids that are not ids.

The body limit (1 MB by default) is enforced on the bytes actually received, not only on
``Content-Length``, so a chunked upload cannot get around it; the body is read before the
route runs, so a refused request has touched nothing.

Pair and card ids are checked on the *raw* path: ``/v1/pairs/..%2Fx/mira/pins`` would
otherwise be decoded to ``/v1/pairs/../x/mira/pins`` and merely miss every route. Here it
is answered as what it is, an invalid ``user`` id.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import unquote

from memfs.errors import InvalidIdError
from memfs.ids import check_id
from memfs.runtime.http import send_error

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEFAULT_MAX_BODY = 1_000_000
_ID_SEGMENTS = {2: "user", 3: "character"}
"""Positions in ``v1/pairs/<user>/<character>/...`` that must be ids."""


class Guard:
    """ASGI middleware: the body limit and the raw-path id check."""

    def __init__(self, app: ASGIApp, max_body: int = DEFAULT_MAX_BODY) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = path_refusal(scope)
        if refusal is not None:
            await send_error(send, 400, *refusal)
            return
        if scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body:
            await send_error(send, 413, self._too_big(), "body")
            return
        body = await self._read(receive)
        if body is None:
            await send_error(send, 413, self._too_big(), "body")
            return
        await self.app(scope, _replay(body, receive), send)

    def _too_big(self) -> str:
        return f"body: larger than the limit of {self.max_body} bytes"

    async def _read(self, receive: Receive) -> bytes | None:
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def path_refusal(scope: Scope) -> tuple[str, str] | None:
    """(error, field) when a pair path names an invalid id, else None."""
    raw = scope.get("raw_path") or scope.get("path", "").encode()
    segments = raw.decode("latin-1").split("?", 1)[0].strip("/").split("/")
    if segments[:2] != ["v1", "pairs"]:
        return None
    checks = dict(_ID_SEGMENTS)
    if len(segments) > 5 and segments[4] == "cards":
        checks[5] = "id"
    for position, field in checks.items():
        if position < len(segments):
            try:
                check_id(unquote(segments[position]), f"{field} id" if field != "id" else "card id")
            except InvalidIdError as exc:
                return str(exc), field
    return None


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
