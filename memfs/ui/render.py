"""Rendering the inspector's pages: Jinja2 templates from ``templates/ui/``, on the server.

Autoescaping is on for every template: card bodies, pins and messages are the user's (or
a model's) text and are shown, never interpreted. Templates only lay out what the view
models in the core computed; every page gets the form token and the pair it is about.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse

from memfs.assets import template_dir
from memfs.ui.browser import CSRF_FIELD, csrf_token, set_csrf


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(str(template_dir())) / "ui")),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["when"] = when
    env.filters["short"] = lambda sha: str(sha)[:10]
    return env


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Template ``name`` as a response, with the form token set for this browser."""
    context.setdefault("pair", None)
    context.setdefault("notice", None)
    html = environment().get_template(name).render(
        request=request, csrf=csrf_token(request), csrf_field=CSRF_FIELD, **context)
    response = HTMLResponse(html, status_code=status)
    set_csrf(request, response)
    return response


def when(value: dt.datetime | dt.date | str | None) -> str:
    """A time as people read it: ``2026-11-05 09:12 UTC``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return value.isoformat()
