"""Who is calling: the ``Authorization: Bearer <key>`` of every request.

Routes take ``Who`` (the key's record) and ``HostDep`` (the process's ``Host``) as
dependencies; the inspector (``/ui/``) uses the same two, so one key reaches the same
memory everywhere. The key check itself is ``Host.principal`` (keys: ``memfs/keys.py``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from memfs.runtime.host import Host, Principal


def get_host(request: Request) -> Host:
    host: Host = request.app.state.host
    return host


def authenticate(request: Request) -> Principal:
    """The caller's key (401 through ``NoKeyError`` when it has none that is valid)."""
    return get_host(request).principal(request.headers.get("authorization"))


HostDep = Annotated[Host, Depends(get_host)]
Who = Annotated[Principal, Depends(authenticate)]
