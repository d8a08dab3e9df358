"""Who is calling: the ``Authorization: Bearer <key>`` of every request.

Routes take ``Who`` (the key's record) and ``HostDep`` (the process's ``Host``) as
dependencies; the inspector (``/ui/``) uses the same two, so one key reaches the same
memory everywhere. The key check itself is ``Host.principal`` (keys: ``memfs/keys.py``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from memfs.runtime.host import Host, Principal


async def get_host(request: Request) -> Host:
    host: Host = request.app.state.host
    return host


BEARER = HTTPBearer(auto_error=False, description="A key from `memfs key add --user USER`.")
"""Declares the scheme in the OpenAPI document (the Authorize button of /docs); the key
itself is checked by ``Host.principal``, which also gives the error shape."""


async def authenticate(request: Request, _: Annotated[HTTPAuthorizationCredentials | None,
                                                      Depends(BEARER)]) -> Principal:
    """The caller's key (401 through ``NoKeyError`` when it has none that is valid).

    ``async`` on purpose, like ``pair_access``: a refused request is answered on the event
    loop and never waits for a worker thread."""
    host: Host = request.app.state.host
    return host.principal(request.headers.get("authorization"))


HostDep = Annotated[Host, Depends(get_host)]
Who = Annotated[Principal, Depends(authenticate)]


async def pair_access(user: str, character: str, host: HostDep, who: Who) -> PairRef:
    """The pair in the path, if this key may reach it (403 before any file is touched)."""
    host.allow(who, user, character)
    return who, user, character


PairRef = tuple[Principal, str, str]
Pair = Annotated[PairRef, Depends(pair_access)]
