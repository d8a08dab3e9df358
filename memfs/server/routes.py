"""The ``/v1`` endpoints: each one checks access, calls the pair's verb, returns its document.

No behaviour lives here. A route translates the request into one call on the pair (or
the store) and the result into the document ``--json`` prints (``memfs/documents.py``);
``about("field")`` names which input an error from the core is about. Routes are plain
``def``: FastAPI runs them on its thread pool, and ``Host.pair`` serialises the requests
of one pair while other pairs proceed in parallel.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response

from memfs import documents
from memfs.ids import check_id
from memfs.server.auth import HostDep, Pair, Who
from memfs.server.errors import about
from memfs.server.models import ContextIn, MessagesIn, PinIn, RevertIn, SearchIn

router = APIRouter(prefix="/v1")
Doc = dict[str, Any]
PAIR = "/pairs/{user}/{character}"
Status = Literal["active", "stale", "expired", "deleted"]
DREAM_WAIT = 30.0
"""How long ``POST .../dream`` waits for a dream of the pair that is already running."""


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("memfs")
    except PackageNotFoundError:
        return "unknown"


@router.get("/health", tags=["server"])
def health(host: HostDep) -> Doc:
    """Liveness, and the dream queue's counters (no key needed, no memory shown)."""
    return {"ok": True, "version": version(), **host.status()}


@router.get("/pairs", tags=["pairs"])
def list_pairs(host: HostDep, who: Who) -> Doc:
    """The pairs this key may see."""
    return documents.pairs(documents.pair(u, c, f"{u}/{c}") for u, c in host.visible_pairs(who))


@router.put(PAIR, tags=["pairs"])
def init_pair(ref: Pair, host: HostDep, response: Response) -> Doc:
    """Create the pair (idempotent): 201 when created, 200 when it existed."""
    who, user, character = ref
    _, created = host.init(who, user, character)
    response.status_code = 201 if created else 200
    return documents.pair(user, character, f"{user}/{character}", created)


# -- pins and cards ----------------------------------------------------------------------


@router.get(PAIR + "/pins", tags=["pins"])
def list_pins(ref: Pair, host: HostDep) -> Doc:
    with host.pair(*ref) as pair:
        return documents.pins(pair.pins())


@router.post(PAIR + "/pins", tags=["pins"])
def add_pin(ref: Pair, body: PinIn, host: HostDep) -> Doc:
    with host.pair(*ref) as pair, about("text"):
        sha = pair.pin(body.text)
        return documents.pin_added(body.text, sha, pair.pins())


@router.delete(PAIR + "/pins/{n}", tags=["pins"])
def remove_pin(ref: Pair, n: Annotated[int, Path(ge=1)], host: HostDep) -> Doc:
    with host.pair(*ref) as pair, about("n", missing=404):
        removed = pair.unpin(n)
        return documents.pin_removed(removed, pair.repo.head(), pair.pins())


@router.get(PAIR + "/cards", tags=["cards"])
def list_cards(ref: Pair, host: HostDep,
               status: Status | None = None) -> Doc:
    with host.pair(*ref) as pair:
        return documents.cards(pair.cards(status))


@router.get(PAIR + "/cards/{card_id}", tags=["cards"])
def show_card(ref: Pair, card_id: str, host: HostDep) -> Doc:
    with host.pair(*ref) as pair, about("id", missing=404):
        return documents.card(pair.card(card_id))


# -- the conversation ----------------------------------------------------------------------


@router.post(PAIR + "/messages", tags=["turn"])
def add_messages(ref: Pair, body: MessagesIn, host: HostDep) -> Doc:
    """Append messages to history (durable first); may fire a compaction and a dream."""
    if body.session is not None:
        with about("session"):
            check_id(body.session, "session id")
    with host.pair(*ref) as pair, about("messages"):
        added = pair.add_messages([m.model_dump(exclude_none=True) for m in body.messages],
                                  session=body.session)
        return documents.messages(added)


@router.post(PAIR + "/context", tags=["turn"])
def context(ref: Pair, body: ContextIn, host: HostDep) -> Doc:
    """What the model should see for this message (nothing is appended)."""
    with host.pair(*ref) as pair, about("message"):
        return documents.context(pair.context(body.message))


@router.post(PAIR + "/search", tags=["turn"])
def search(ref: Pair, body: SearchIn, host: HostDep) -> Doc:
    with host.pair(*ref) as pair, about("query"):
        hits = pair.search(body.query, k=body.k, include_stale=body.include_stale,
                           explain=body.explain)
        return documents.search(body.query, hits)


# -- the history of memory -----------------------------------------------------------------


@router.get(PAIR + "/log", tags=["history"])
def log(ref: Pair, host: HostDep,
        n: Annotated[int, Query(ge=1, le=1000)] = 20) -> Doc:
    with host.pair(*ref) as pair:
        return documents.log(pair.log(n))


@router.get(PAIR + "/commits/{rev:path}", tags=["history"])
def show_commit(ref: Pair, rev: str, host: HostDep) -> Doc:
    with host.pair(*ref) as pair, about("rev", missing=404):
        return documents.show(rev, pair.show(rev))


@router.get(PAIR + "/diff", tags=["history"])
def diff(ref: Pair, host: HostDep, rev: str | None = None) -> Doc:
    """Uncommitted hand edits, or what ``rev`` changed."""
    with host.pair(*ref) as pair, about("rev", missing=404):
        return documents.diff(rev, pair.diff(rev))


@router.post(PAIR + "/revert", tags=["history"])
def revert(ref: Pair, body: RevertIn, host: HostDep) -> Doc:
    with host.pair(*ref) as pair, about("rev", missing=404):
        return documents.reverted(body.rev, pair.revert(body.rev))


# -- maintenance ---------------------------------------------------------------------------


@router.post(PAIR + "/dream", tags=["maintenance"])
def dream(ref: Pair, host: HostDep) -> Doc:
    """Dream every pending window now (waits for a dream of this pair already running)."""
    from memfs.agent.dream.runner import run_pending

    with host.pair(*ref, locked=False) as pair:
        run = run_pending(pair, wait=DREAM_WAIT)
        return documents.dream(run.busy, run.results)


@router.post(PAIR + "/check", tags=["maintenance"])
def check(ref: Pair, host: HostDep) -> Doc:
    """Validate every file of the pair; ``ok`` false lists each problem."""
    with host.pair(*ref) as pair:
        return documents.check(pair.check())

