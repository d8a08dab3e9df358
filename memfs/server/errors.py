"""Every error the API returns is ``{"error": "<one line>", "field": "..."}``.

Only here do exceptions become statuses. A user mistake (a ``MemfsError``, a body that
fails validation, a path that matches no route) is answered with a 4xx and logged as
one access line, never a traceback; anything else is a bug, and keeps its traceback in
the log and a plain 500 for the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from memfs.errors import BadInputError, InvalidIdError, MemfsError
from memfs.runtime.http import error_document, field_for, status_for

log = logging.getLogger("memfs.server")


class ApiError(Exception):
    """An error whose status and field the route already knows."""

    def __init__(self, status: int, message: str, field: str | None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field


@contextmanager
def about(field: str, *, missing: int | None = None) -> Iterator[None]:
    """Bad input raised inside is about ``field``; ``missing`` is the status for a
    reference to something that does not exist (an unknown revision, card or pin)."""
    try:
        yield
    except InvalidIdError as exc:
        raise ApiError(400, str(exc), field) from None
    except BadInputError as exc:
        status = missing if missing and _is_missing(str(exc)) else 400
        raise ApiError(status, str(exc), field_for(exc, field)) from None


def _is_missing(message: str) -> bool:
    return any(word in message for word in ("no such", "there is no"))


def json_error(status: int, message: str, field: str | None) -> JSONResponse:
    return JSONResponse(error_document(message, field), status_code=status)


async def _memfs_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemfsError)
    status = status_for(exc)
    if status >= 500:
        log.error("%s %s failed: %s", request.method, request.url.path, exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    response = json_error(status, str(exc), field_for(exc, "body" if status < 500 else None))
    if headers:
        response.headers.update(headers)
    return response


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return json_error(exc.status, str(exc), exc.field)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    first: dict[str, Any] = dict(exc.errors()[0]) if exc.errors() else {}
    kind = first.get("type", "")
    if kind == "json_invalid":
        reason = (first.get("ctx") or {}).get("error", "could not parse it")
        return json_error(400, f"body: not valid JSON ({reason})", "body")
    field = loc_field(first.get("loc", ()))
    if kind == "missing":
        reason = "is required" if field != "body" else "is required (a JSON object)"
    elif kind == "extra_forbidden":
        reason = "is not a field of this request"
    elif field == "body" and kind in ("model_attributes_type", "dict_type", "model_type"):
        reason = "must be a JSON object (sent as Content-Type: application/json)"
    else:
        reason = str(first.get("msg", "is invalid")).lower()
    return json_error(422, f"{field}: {reason}", field)


def loc_field(loc: Sequence[Any]) -> str:
    """``("body", "messages", 0, "role")`` → ``messages[0].role``."""
    parts = list(loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc)
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return json_error(404, f"no such endpoint: {request.method} {request.url.path}", "path")
    if exc.status_code == 405:
        return json_error(405, f"{request.method} is not allowed on {request.url.path}",
                          "method")
    return json_error(exc.status_code, str(exc.detail), None)


def install(app: FastAPI) -> None:
    app.add_exception_handler(MemfsError, _memfs_error)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
