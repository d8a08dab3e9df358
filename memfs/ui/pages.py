"""The inspector's read-only pages (GET): they work without JavaScript and change nothing.

Each route opens the pair for this browser's key, asks the core for a view model
(``memfs.timeline``, ``memfs.changes``, ``memfs.undo``, ``memfs.stories``,
``memfs.explain``, ``memfs.agent.dream.review``) and renders a template. Confirmation
pages for the actions (undo, mark wrong, reject) are here too: they show exactly what the
action would do, and their form posts to ``memfs.ui.actions``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse

from memfs import revisions
from memfs.agent.dream import review
from memfs.cards import STATUSES
from memfs.changes import commit_changes
from memfs.explain import explain, layers
from memfs.server.auth import HostDep
from memfs.store import MemoryPair
from memfs.stories import source_messages, story
from memfs.timeline import entry, timeline
from memfs.ui.browser import UiPair, Viewer
from memfs.ui.render import page
from memfs.undo import preview_revert

router = APIRouter(prefix="/ui", include_in_schema=False)
_SHA = re.compile(r"[0-9a-f]{7,40}")
PAIR = "/{user}/{character}"
NOTICES = {"pinned": "Pinned.", "unpinned": "Pin removed.", "edited": "Pins saved.",
           "reverted": "Undone.", "wrong": "Card marked wrong: it is never retrieved again.",
           "accepted": "Dream accepted: it is part of memory now.",
           "rejected": "Dream rejected: nothing of it was kept.", "unchanged": "Nothing changed."}


def nav(request: Request, pair: MemoryPair, section: str) -> dict[str, Any]:
    """What every pair page shows around its content: the pair, the section, the notice."""
    done = request.query_params.get("done") or ""
    commit = request.query_params.get("commit", "")
    return {"pair": pair, "section": section, "waiting": len(review.proposals(pair)),
            "notice": NOTICES.get(done),
            "notice_commit": commit if done in NOTICES and _SHA.fullmatch(commit) else ""}


@router.get("/", response_class=HTMLResponse)
def pairs(request: Request, host: HostDep, who: Viewer) -> HTMLResponse:
    return page(request, "pairs.html", pairs=host.visible_pairs(who), who=who.describe())


@router.get(PAIR, response_class=HTMLResponse)
def home(request: Request, ref: UiPair, host: HostDep,
         p: Annotated[int, Query(ge=1, le=1_000_000)] = 1) -> HTMLResponse:
    """The timeline: every change, newest first, a page at a time."""
    with host.pair(*ref) as pair:
        return page(request, "timeline.html", timeline=timeline(pair.repo, p),
                    proposals=review.proposals(pair), **nav(request, pair, "timeline"))


@router.get(PAIR + "/commits/{sha}", response_class=HTMLResponse)
def commit(request: Request, ref: UiPair, host: HostDep, sha: str) -> HTMLResponse:
    """What one commit did (a dream: its cards and summary), the raw diff one click away."""
    with host.pair(*ref) as pair:
        shown = entry(pair.repo, sha)
        return page(request, "commit.html", entry=shown,
                    change=commit_changes(pair.repo, shown.sha),
                    diff=revisions.diff(pair.repo, shown.sha), **nav(request, pair, "timeline"))


@router.get(PAIR + "/commits/{sha}/diff", response_class=PlainTextResponse)
def commit_diff(ref: UiPair, host: HostDep, sha: str) -> PlainTextResponse:
    with host.pair(*ref) as pair:
        return PlainTextResponse(revisions.show(pair.repo, sha))


@router.get(PAIR + "/revert/{sha}", response_class=HTMLResponse)
def confirm_revert(request: Request, ref: UiPair, host: HostDep, sha: str) -> HTMLResponse:
    """Exactly what undoing the commit would do, before it is done."""
    with host.pair(*ref) as pair:
        shown = entry(pair.repo, sha)
        return page(request, "revert.html", entry=shown,
                    preview=preview_revert(pair.repo, shown.sha), **nav(request, pair, "timeline"))


@router.get(PAIR + "/pins", response_class=HTMLResponse)
def pins(request: Request, ref: UiPair, host: HostDep) -> HTMLResponse:
    with host.pair(*ref) as pair:
        return pins_page(request, pair)


def pins_page(request: Request, pair: MemoryPair, *, status: int = 200, error: str = "",
              draft: str | None = None, add_error: str = "", add_text: str = "") -> HTMLResponse:
    """The pins editor; after a refused edit, with the problem and the person's text."""
    saved = pair.repo.read_worktree("system/pins.md") or ""
    return page(request, "pins.html", status=status, pins=pair.pins(), saved=saved,
                draft=saved if draft is None else draft, error=error, add_error=add_error,
                add_text=add_text, hand_edit=bool(pair.uncommitted("system/pins.md")),
                **nav(request, pair, "pins"))


@router.get(PAIR + "/cards", response_class=HTMLResponse)
def cards(request: Request, ref: UiPair, host: HostDep,
          status: Annotated[str, Query(pattern="^(active|stale|expired|deleted)$")] = "active",
          ) -> HTMLResponse:
    with host.pair(*ref) as pair:
        every = pair.cards()
        counts = {s: sum(1 for c in every if c.status == s) for s in STATUSES}
        shown = sorted((c for c in every if c.status == status),
                       key=lambda c: c.updated or c.created, reverse=True)
        return page(request, "cards.html", cards=shown, showing=status, counts=counts,
                    **nav(request, pair, "cards"))


@router.get(PAIR + "/cards/{card_id}", response_class=HTMLResponse)
def card(request: Request, ref: UiPair, host: HostDep, card_id: str,
         confirm: bool = False) -> HTMLResponse:
    """A card, its story (the supersede chain) and the messages it came from; with
    ``confirm``, the page that asks before marking it wrong."""
    with host.pair(*ref) as pair:
        the_card = pair.card(card_id)
        return page(request, "card.html", card=the_card, story=story(pair.cards(), card_id),
                    sources=source_messages(pair, the_card), confirm=confirm,
                    **nav(request, pair, "cards"))


@router.get(PAIR + "/ask", response_class=HTMLResponse)
def ask(request: Request, ref: UiPair, host: HostDep,
        q: Annotated[str, Query(max_length=2000)] = "",
        message: Annotated[str, Query(max_length=8000)] = "") -> HTMLResponse:
    """Search with the per-signal explanation, and what the model would see for a message."""
    with host.pair(*ref) as pair:
        hits = pair.search(q, k=8, include_stale=True, explain=True) if q.strip() else []
        ctx = pair.context(message) if message.strip() else None
        return page(request, "ask.html", q=q, message=message,
                    hits=[(h, explain(h)) for h in hits], ctx=ctx,
                    layers=layers(ctx) if ctx else [], **nav(request, pair, "ask"))


@router.get(PAIR + "/proposals/{proposal_id}", response_class=HTMLResponse)
def proposal(request: Request, ref: UiPair, host: HostDep, proposal_id: str,
             confirm: bool = False) -> HTMLResponse:
    """A dream waiting for review: what it would remember; Accept, or Reject (confirmed)."""
    with host.pair(*ref) as pair:
        found = review.get(pair, proposal_id)
        return page(request, "proposal.html", proposal=found, change=found.changes(pair.repo),
                    diff=found.diff(pair.repo), confirm=confirm,
                    **nav(request, pair, "timeline"))
