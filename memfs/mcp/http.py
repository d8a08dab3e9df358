"""MCP over streamable HTTP inside ``memfs serve``: ``/v1/pairs/{user}/{character}/mcp``.

The endpoint checks the caller's key against the pair in the URL (401/403/404 as JSON,
as the HTTP API does) before the SDK sees the request, then records the pair in the ASGI
scope; each tool call reads it back from the request (``resolve``). Stateless mode with
JSON responses: every POST carries its own key and is answered on its own, so there are
no sessions to share between keys and nothing to clean up. The SDK's DNS-rebinding
check is on whenever the server runs open on loopback, where no key stands guard.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from memfs.errors import MemfsError
from memfs.mcp import build_server
from memfs.mcp.tools import PairRef
from memfs.runtime.host import Host, MissingPairError
from memfs.runtime.http import Send, field_for, send_error, status_for

PATH = "/v1/pairs/{user}/{character}/mcp"
SCOPE_KEY = "memfs.pair"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


class McpMount:
    """The ASGI endpoint, and the SDK session manager it hands checked requests to."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.server = build_server(host, resolve)
        self.manager = self._new_manager()

    def _new_manager(self) -> StreamableHTTPSessionManager:
        """A fresh SDK session manager (one runs once: an app started twice needs two)."""
        loopback = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=self.host.allow_open, allowed_hosts=loopback,
            allowed_origins=[f"http://{h}" for h in loopback])
        self.server.streamable_http_app(stateless_http=True, json_response=True,
                                        transport_security=security)
        return self.server.session_manager

    def install(self, app: FastAPI) -> None:
        app.router.routes.append(Route(PATH, endpoint=self, methods=["GET", "POST", "DELETE"],
                                       include_in_schema=False))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self.manager = self._new_manager()
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        params = scope.get("path_params", {})
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            scope[SCOPE_KEY] = self._check(headers.get("authorization"), params["user"],
                                           params["character"])
        except MemfsError as exc:
            await send_error(send, status_for(exc), str(exc), field_for(exc, "path"))
            return
        await self.manager.handle_request(scope, receive, send)

    def _check(self, authorization: str | None, user: str, character: str) -> PairRef:
        who = self.host.principal(authorization)
        self.host.allow(who, user, character)
        if not (self.host.store.home / user / character / ".git").is_dir():
            raise MissingPairError(user, character)
        return who, user, character


def resolve(ctx: Any) -> PairRef:
    """The pair the endpoint checked for this request."""
    request = ctx.request_context.request
    ref: PairRef = request.scope[SCOPE_KEY]
    return ref
