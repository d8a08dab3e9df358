"""The shapes of a search: the validated ``Query`` and the ``SearchHit`` it returns.

Kept apart from the ranking (``memfs.ranker``) so that adapters, context assembly and the
Python API can name them without importing numpy-heavy code paths.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memfs.errors import BadInputError
from memfs.index_items import Item

TIME_SCOPES = ("any", "most_recent", "past")
KINDS = ("card", "message", "summary")


@dataclass
class SearchHit:
    """One retrieved record and why it ranked: ``signals`` holds every fused signal.

    A hit is one piece of information: ``count`` is how many times its text was said
    (identical and near-identical copies collapsed into it, ``collapsed`` names some of
    them) between ``first_said`` and ``last_said``; ``neighbour`` is the previous or next
    turn when that turn belongs with it (the answer to a question, the question an answer
    replies to)."""

    id: str
    kind: str
    path: str
    status: str
    score: float
    text: str
    signals: dict[str, float] = field(default_factory=dict)
    ts: str | None = None
    session: str | None = None
    turn: int | None = None
    type: str | None = None
    role: str | None = None
    count: int = 1
    first_said: str | None = None
    last_said: str | None = None
    collapsed: list[str] = field(default_factory=list)
    neighbour: dict[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``search --json`` shape of a hit (DESIGN.md's fields, then issue 12's)."""
        out: dict[str, Any] = {
            "id": self.id, "kind": self.kind, "path": self.path, "status": self.status,
            "score": round(self.score, 6), "text": self.text,
            "signals": {k: round(v, 6) for k, v in self.signals.items()},
            "count": self.count}
        if self.kind == "message":
            out.update(ts=self.ts, role=self.role)
        if self.count > 1:
            out.update(first_said=self.first_said, last_said=self.last_said,
                       collapsed=self.collapsed)
        if self.neighbour is not None:
            out["neighbour"] = self.neighbour
        return out


@dataclass(frozen=True)
class Query:
    text: str
    k: int = 5
    include_stale: bool = False
    time_scope: str = "any"
    entities: tuple[str, ...] = ()
    memory_types: tuple[str, ...] = ()
    kinds: tuple[str, ...] = KINDS
    now: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
    exclude: frozenset[str] = frozenset()
    """Message ids never returned: the context's window, which the model sees anyway.
    Excluded before ranking, so k slots are not spent on them (asking for k + the window
    and dropping it after cost ~190 hits per search with a full window)."""


def make_query(text: str, k: int, include_stale: bool = False, time_scope: str = "any",
               entities: Sequence[str] = (), memory_types: Sequence[str] = (),
               now: dt.datetime | None = None, kinds: Sequence[str] = KINDS,
               exclude: Iterable[str] = ()) -> Query:
    """Validate search arguments (BadInputError names the bad one)."""
    if not isinstance(text, str) or not text.strip():
        raise BadInputError("query: must be a non-empty string")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise BadInputError(f"k: must be a whole number of at least 1 (got {k!r})")
    if time_scope not in TIME_SCOPES:
        raise BadInputError(f"time_scope: must be one of {', '.join(TIME_SCOPES)} "
                            f"(got {time_scope!r})")
    if any(kind not in KINDS for kind in kinds):
        raise BadInputError(f"kinds: each must be one of {', '.join(KINDS)} (got {list(kinds)})")
    when = now or dt.datetime.now(dt.timezone.utc)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return Query(text, k, include_stale, time_scope, tuple(entities), tuple(memory_types),
                 tuple(kinds), when, frozenset(exclude))


def effective_status(item: Item, now: dt.datetime, outdated: bool = False) -> str:
    """A card's status as of ``now``: an active plan past ``expires`` counts as expired;
    a message whose only cards are stale or expired counts as stale."""
    if item.kind == "message":
        return "stale" if outdated else "active"
    if item.kind != "card":
        return "active"
    today = now.astimezone(dt.timezone.utc).date().isoformat()
    if item.status == "active" and item.expires is not None and item.expires < today:
        return "expired"
    return item.status


def make_hit(item: Item, status: str, score: float, signals: dict[str, float]) -> SearchHit:
    ts = None
    if item.kind == "message":
        ts = dt.datetime.fromtimestamp(item.time, dt.timezone.utc).isoformat().replace(
            "+00:00", "Z")
    return SearchHit(id=item.id, kind=item.kind, path=item.path, status=status, score=score,
                     text=item.text, signals=signals, ts=ts, session=item.session,
                     turn=item.turn, type=item.type, role=item.role)
