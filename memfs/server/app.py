"""The FastAPI application of ``memfs serve``, built around one ``Host``.

``create_app(host)`` is the factory every entry point uses (``memfs serve``, the tests
over ASGI, the load test): routes under ``/v1``, OpenAPI at ``/docs``, the error shapes,
the body limit, and the MCP endpoint at ``/v1/pairs/{user}/{character}/mcp``. Other
adapters add their routers to the returned app (the inspector mounts ``/ui/``).

Lifetime: at start-up, pairs with undreamed windows are handed to the dream queue; at
shutdown (uvicorn has already let in-flight requests finish) the queue stops, running
dreams finish, and the rest stay pending on disk for the next start.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio.to_thread
from fastapi import FastAPI

from memfs.runtime.host import Host
from memfs.server import errors
from memfs.server.guard import DEFAULT_MAX_BODY, Guard
from memfs.server.routes import router, version

DESCRIPTION = """Long-term memory for AI companions: one git repository of Markdown per
(user, character) pair. Every request needs `Authorization: Bearer <key>` (`memfs key add
--user U`); a user's key reaches only that user's pairs. Response bodies are the documents
`memfs ... --json` prints; errors are `{"error": "...", "field": "..."}` with a 4xx status."""


def create_app(host: Host, *, max_body: int = DEFAULT_MAX_BODY, mcp: bool = True) -> FastAPI:
    """The application for ``host``; ``mcp=False`` leaves out the MCP endpoint."""
    mount = None
    if mcp:
        from memfs.mcp.http import McpMount

        mount = McpMount(host)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if mount is not None:
                await stack.enter_async_context(mount.running())
            host.resume_pending()
            try:
                yield
            finally:
                await anyio.to_thread.run_sync(host.close)

    app = FastAPI(title="memfs", version=version(), description=DESCRIPTION,
                  lifespan=lifespan)
    app.state.host = host
    errors.install(app)
    app.include_router(router)
    if mount is not None:
        mount.install(app)
    app.add_middleware(Guard, max_body=max_body)
    return app
