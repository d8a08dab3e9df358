"""The inspector's actions (form POSTs): each checks the form token, calls one verb of the
core — the same one the CLI calls — and redirects to a page that shows the result.

Pins: ``MemoryPair.pin``/``unpin``/``edit_pins`` (``edit_pins`` validates before it writes
and refuses to overwrite a file that changed since the editor opened). Undo:
``MemoryPair.revert``. Mark wrong: ``MemoryPair.mark_wrong``. Review:
``memfs.agent.dream.review.accept``/``reject``. A refused pin is shown inline on the pins
page (status 400) with the person's text kept; other refusals show the error page.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from memfs.agent.dream import review
from memfs.errors import BadInputError, ConflictError, NoKeyError
from memfs.server.auth import HostDep
from memfs.ui.browser import UiPair, check_csrf, check_key, forget_key, remember_key
from memfs.ui.pages import pins_page
from memfs.ui.render import page

router = APIRouter(prefix="/ui", include_in_schema=False)
PAIR = "/{user}/{character}"
Csrf = Annotated[str, Form(max_length=200)]
Text = Annotated[str, Form(max_length=100_000)]


def done(ref: tuple[object, str, str], what: str, commit: str | None = None,
         where: str = "") -> RedirectResponse:
    """Post/redirect/get: the page that shows the result, with a notice."""
    url = f"/ui/{quote(ref[1])}/{quote(ref[2])}{where}?done={what}"
    if commit:
        url += f"&commit={commit}"
    return RedirectResponse(url, status_code=303)


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/ui/") -> HTMLResponse:
    return page(request, "login.html", next=_local(next), error="")


@router.post("/login")
def login(request: Request, host: HostDep, key: Annotated[str, Form(max_length=500)],
          csrf: Csrf, next: Annotated[str, Form(max_length=2000)] = "/ui/") -> Response:
    check_csrf(request, csrf)
    try:
        check_key(host, key)
    except NoKeyError as exc:
        return page(request, "login.html", status=401, next=_local(next), error=str(exc))
    response = RedirectResponse(_local(next), status_code=303)
    remember_key(request, response, key)
    return response


@router.post("/logout")
def logout(request: Request, csrf: Csrf) -> Response:
    check_csrf(request, csrf)
    response = RedirectResponse("/ui/login", status_code=303)
    forget_key(response)
    return response


def _local(target: str) -> str:
    """Only ever redirect within the inspector (no open redirect through ``next``)."""
    return target if target.startswith("/ui/") and not target.startswith("//") else "/ui/"


# -- pins ---------------------------------------------------------------------------------


@router.post(PAIR + "/pins")
def add_pin(request: Request, ref: UiPair, host: HostDep, text: Text, csrf: Csrf) -> Response:
    check_csrf(request, csrf)
    with host.pair(*ref) as pair:
        try:
            sha = pair.pin(text)
        except BadInputError as exc:
            return pins_page(request, pair, status=400, add_error=str(exc), add_text=text)
        return done(ref, "pinned" if sha else "unchanged", sha, "/pins")


@router.post(PAIR + "/pins/{number}/remove")
def remove_pin(request: Request, ref: UiPair, host: HostDep, number: int, text: Text,
               csrf: Csrf) -> Response:
    """Remove pin ``number``, if it is still the pin the page showed (``text``)."""
    check_csrf(request, csrf)
    with host.pair(*ref) as pair:
        current = pair.pins()
        if not 1 <= number <= len(current) or current[number - 1] != text:
            raise ConflictError("the pins changed since this page was shown; nothing was "
                                "removed (reload the pins page)")
        pair.unpin(number)
        return done(ref, "unpinned", pair.repo.head(), "/pins")


@router.post(PAIR + "/pins/edit")
def edit_pins(request: Request, ref: UiPair, host: HostDep, text: Text, base: Text,
              csrf: Csrf) -> Response:
    check_csrf(request, csrf)
    with host.pair(*ref) as pair:
        try:
            sha = pair.edit_pins(_lines(text), expected=_lines(base))
        except (BadInputError, ConflictError) as exc:
            return pins_page(request, pair, status=400 if isinstance(exc, BadInputError)
                             else 409, error=str(exc), draft=text)
        return done(ref, "edited" if sha else "unchanged", sha, "/pins")


def _lines(text: str) -> str:
    """A textarea sends CRLF line ends; the file keeps LF and ends with one."""
    text = text.replace("\r\n", "\n")
    return text if not text or text.endswith("\n") else text + "\n"


# -- undo, mark wrong, review ---------------------------------------------------------------


@router.post(PAIR + "/revert/{sha}")
def revert(request: Request, ref: UiPair, host: HostDep, sha: str, csrf: Csrf) -> Response:
    check_csrf(request, csrf)
    with host.pair(*ref) as pair:
        commit = pair.revert(sha)
        return done(ref, "reverted", commit, f"/commits/{commit}")


@router.post(PAIR + "/cards/{card_id}/wrong")
def mark_wrong(request: Request, ref: UiPair, host: HostDep, card_id: str,
               csrf: Csrf) -> Response:
    check_csrf(request, csrf)
    with host.pair(*ref) as pair:
        commit = pair.mark_wrong(card_id)
        return done(ref, "wrong", commit, f"/cards/{card_id}")


@router.post(PAIR + "/proposals/{proposal_id}/accept")
def accept(request: Request, ref: UiPair, host: HostDep, proposal_id: str,
           csrf: Csrf) -> Response:
    check_csrf(request, csrf)
    with host.pair(*ref) as pair:
        commit = review.accept(pair, proposal_id)
        return done(ref, "accepted", commit, f"/commits/{commit}")


@router.post(PAIR + "/proposals/{proposal_id}/reject")
def reject(request: Request, ref: UiPair, host: HostDep, proposal_id: str,
           csrf: Csrf) -> Response:
    check_csrf(request, csrf)
    with host.pair(*ref) as pair:
        commit = review.reject(pair, proposal_id)
        return done(ref, "rejected", commit)
