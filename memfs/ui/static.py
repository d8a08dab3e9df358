"""The inspector's one stylesheet (``templates/ui/inspector.css``), served without a key:
it holds no memory, and the login page needs it before any key is known."""

from __future__ import annotations

from functools import lru_cache

from fastapi import APIRouter
from fastapi.responses import Response

from memfs.assets import read_template

router = APIRouter(prefix="/ui/static", include_in_schema=False)


@lru_cache(maxsize=1)
def _css() -> str:
    return read_template("ui/inspector.css")


@router.get("/inspector.css")
def stylesheet() -> Response:
    return Response(_css(), media_type="text/css",
                    headers={"Cache-Control": "max-age=3600"})
