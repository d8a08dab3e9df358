"""Who is at the browser: the API key kept in a cookie, and the forms it may post.

A browser cannot send ``Authorization: Bearer`` on a plain link, so the inspector asks
for the key once (``/ui/login``) and keeps it in a cookie that scripts cannot read
(``HttpOnly``), that is sent to ``/ui`` only (``Path``), over HTTPS only when the server
is reached over HTTPS (``Secure``), and not on cross-site subrequests (``SameSite=Lax``).
Every request checks it exactly as the API checks a Bearer key (``Host.principal``), so
``memfs key rm`` locks a browser out at its next click and a user's key opens only that
user's pairs. A request that carries ``Authorization`` itself is checked on that instead.

Forms are protected from other sites (CSRF) twice: every POST must carry the token of a
second cookie (``SameSite=Strict``, so another site's form arrives without it) in a hidden
field, and a POST whose ``Origin`` is not this server is refused.

With no keys at all the server is open, and ``memfs serve`` only allows that on loopback.
A browser adds one danger there: a web page can point its own host name at 127.0.0.1 (DNS
rebinding) and read the answers. So open mode also requires the ``Host`` header and the
client to be loopback.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.responses import Response

from memfs.errors import AccessError
from memfs.runtime.host import Host, OpenAccess, Principal
from memfs.server.auth import HostDep, PairRef

KEY_COOKIE = "memfs_key"
CSRF_COOKIE = "memfs_csrf"
CSRF_FIELD = "csrf"
KEY_MAX_AGE = 30 * 24 * 3600
"""A login lasts 30 days in that browser (``Log out`` or ``memfs key rm`` ends it sooner)."""
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


class CsrfError(AccessError):
    """A form post without this page's token, or from another site."""


def principal(request: Request, host: Host) -> Principal:
    """The caller, from ``Authorization`` or the login cookie (``NoKeyError`` if neither)."""
    header = request.headers.get("authorization")
    cookie = request.cookies.get(KEY_COOKIE)
    who = host.principal(header or (f"Bearer {cookie}" if cookie else None))
    if isinstance(who, OpenAccess):
        _require_loopback(request)
    return who


async def viewer(request: Request, host: HostDep) -> Principal:
    """Dependency: who is at the browser. ``async`` like the API's ``authenticate``: a
    refused request is answered on the event loop, never waiting for a worker thread."""
    return principal(request, host)


async def pair_view(user: str, character: str, host: HostDep,
                    who: Annotated[Principal, Depends(viewer)]) -> PairRef:
    """Dependency: the pair in the path, if this browser's key may see it (before any
    file is touched); routes then open it with ``host.pair(*ref)``."""
    host.allow(who, user, character)
    return who, user, character


Viewer = Annotated[Principal, Depends(viewer)]
UiPair = Annotated[PairRef, Depends(pair_view)]


def check_key(host: Host, key: str) -> Principal:
    """The principal of a key typed on the login page (``NoKeyError`` when it is not one)."""
    return host.principal(f"Bearer {key.strip()}")


def _require_loopback(request: Request) -> None:
    client = request.client.host if request.client else ""
    host_name = urlsplit(f"//{request.headers.get('host', '')}").hostname or ""
    if not (_is_loopback(client) and host_name in _LOOPBACK_NAMES):
        raise AccessError("this server has no API keys, so it serves localhost only "
                          "(open it as http://127.0.0.1:PORT/ui/, or add a key)")


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


# -- cookies -------------------------------------------------------------------------------


def remember_key(request: Request, response: Response, key: str) -> None:
    response.set_cookie(KEY_COOKIE, key.strip(), max_age=KEY_MAX_AGE, path="/ui",
                        httponly=True, samesite="lax", secure=request.url.scheme == "https")


def forget_key(response: Response) -> None:
    response.delete_cookie(KEY_COOKIE, path="/ui")


def csrf_token(request: Request) -> str:
    """This browser's form token (made on its first page; ``set_csrf`` stores it)."""
    token = request.cookies.get(CSRF_COOKIE)
    if not token:
        token = getattr(request.state, "csrf", None) or secrets.token_urlsafe(32)
        request.state.csrf = token
    return token


def set_csrf(request: Request, response: Response) -> None:
    """Store a token made during this request in its cookie (``SameSite=Strict``)."""
    token = getattr(request.state, "csrf", None)
    if token and not request.cookies.get(CSRF_COOKIE):
        response.set_cookie(CSRF_COOKIE, token, path="/ui", httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")


def check_csrf(request: Request, sent: str | None) -> None:
    """Refuse a form post that did not come from one of this server's pages."""
    origin = request.headers.get("origin")
    if origin and urlsplit(origin).netloc != request.headers.get("host"):
        raise CsrfError(f"a form from {origin} may not change this memory")
    cookie = request.cookies.get(CSRF_COOKIE) or ""
    if not (cookie and sent and hmac.compare_digest(cookie, sent)):
        raise CsrfError("this form has expired or came from another page: reload the page "
                        "and try again (nothing was changed)")
