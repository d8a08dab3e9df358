"""The memory inspector: ``/ui/``, a page where a person sees, edits and undoes what their
companion remembers. An adapter over the same core as the CLI, the API and MCP.

- ``browser``: who is at the browser (the API key in an HttpOnly cookie, checked exactly
  like a Bearer key; form tokens against other sites; open mode for localhost only);
- ``pages``: the read-only pages (GET), which work without JavaScript, and the pages
  that confirm an action before it is taken;
- ``actions``: the form POSTs, each one verb of the core, then a redirect;
- ``render``: Jinja2 templates from ``templates/ui/``, rendered on the server.

``install(app)`` adds the inspector to the application ``memfs.server.app.create_app``
made (``memfs serve`` does this); errors under ``/ui/`` are answered as pages (a missing
key by the login page) while the API keeps its JSON errors.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException

from memfs.errors import MemfsError, NoKeyError
from memfs.runtime.http import status_for

Handler = Callable[[Request, Any], "Response | Awaitable[Response]"]


def install(app: FastAPI) -> FastAPI:
    """Mount the inspector's routes on ``app``; pages answer its errors under ``/ui``."""
    from memfs.ui import actions, pages, static

    app.include_router(static.router)
    app.include_router(actions.router)
    app.include_router(pages.router)
    for kind in (MemfsError, HTTPException, RequestValidationError):
        _answer_as_pages(app, kind)
    return app


def create_app(host: Any, **options: Any) -> FastAPI:
    """``memfs.server.app.create_app(host, ...)`` with the inspector installed."""
    from memfs.server.app import create_app as api_app

    return install(api_app(host, **options))


def _answer_as_pages(app: FastAPI, kind: type[Exception]) -> None:
    api_handler = app.exception_handlers.get(kind)

    async def handler(request: Request, exc: Exception) -> Response:
        if request.url.path == "/ui" or request.url.path.startswith("/ui/"):
            return error_page(request, exc)
        if api_handler is None:
            raise exc
        answer = api_handler(request, exc)
        return await answer if isinstance(answer, Awaitable) else answer

    app.add_exception_handler(kind, handler)


def error_page(request: Request, exc: Exception) -> Response:
    """An error as a page: a missing key sends a browser to the login page."""
    from memfs.ui.render import page

    if isinstance(exc, NoKeyError) and request.method == "GET":
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/ui/login?next={quote(target)}", status_code=303)
    if isinstance(exc, MemfsError):
        status, message = status_for(exc), str(exc)
    elif isinstance(exc, HTTPException):
        status = exc.status_code
        message = "no such page" if status == 404 else str(exc.detail)
    else:
        assert isinstance(exc, RequestValidationError)
        status, message = 400, _validation_message(exc)
    return page(request, "error.html", status=status, status_code=status, message=message)


def _validation_message(exc: RequestValidationError) -> str:
    first = dict(exc.errors()[0]) if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "request"
    return f"{where}: {str(first.get('msg', 'is invalid')).lower()}"
