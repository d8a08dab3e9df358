"""Hybrid search over a pair's memory that knows which record is still true.

Status comes first: a stale card ("the meeting is on Thursday") is not a weaker version of
the active one ("moved to Friday"), it is a record of what *was* true, so by default only
active cards compete (plus the summary and past messages, which have no status). Plans past
their ``expires`` date count as expired even before dreaming rewrites the file. With
``include_stale`` stale and expired cards come back too, marked and demoted; ``deleted``
never does. Among the eligible records, the signals of ``memfs.ranking`` are fused, and each
hit carries them so ``--explain`` can show why it ranked where it did.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from memfs.errors import BadInputError
from memfs.index import PairIndex, open_index, refresh
from memfs.index_items import KIND_CODES, STATUS_CODES, Item
from memfs.ranking import (
    Floats,
    Weights,
    entity_match,
    fuse,
    names,
    recency,
    similarities,
    tokenize,
    top_candidates,
)

if TYPE_CHECKING:
    from memfs.store import MemoryPair

TIME_SCOPES = ("any", "most_recent", "past")
KINDS = ("card", "message", "summary")
DEFAULT_WEIGHTS = Weights()


@dataclass
class SearchHit:
    """One retrieved record and why it ranked: ``signals`` holds every fused signal."""

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

    def to_json(self) -> dict[str, Any]:
        """The ``search --json`` shape of a hit."""
        return {"id": self.id, "kind": self.kind, "path": self.path, "status": self.status,
                "score": round(self.score, 6), "text": self.text,
                "signals": {k: round(v, 6) for k, v in self.signals.items()}}


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


def search(pair: MemoryPair, query: str, k: int = 5, include_stale: bool = False,
           time_scope: str = "any", entities: Sequence[str] = (),
           memory_types: Sequence[str] = (), now: dt.datetime | None = None,
           explain: bool = False, kinds: Sequence[str] = KINDS,
           weights: Weights | None = None) -> list[SearchHit]:
    """The ``k`` best records for ``query`` in ``pair``'s memory (index refreshed first).

    ``explain`` is accepted for symmetry with the CLI: signals are always filled in.
    """
    q = make_query(query, k, include_stale, time_scope, entities, memory_types, now, kinds)
    index = open_index(pair.root, pair.store.embedder)
    refresh(index)
    return rank(index, q, weights or DEFAULT_WEIGHTS)


def make_query(text: str, k: int, include_stale: bool = False, time_scope: str = "any",
               entities: Sequence[str] = (), memory_types: Sequence[str] = (),
               now: dt.datetime | None = None, kinds: Sequence[str] = KINDS) -> Query:
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
                 tuple(kinds), when)


def rank(index: PairIndex, q: Query, weights: Weights) -> list[SearchHit]:
    """Score every eligible item of ``index`` for ``q``; best ``q.k`` first."""
    if not index.position:
        return []
    cands, semantic, lexical_n = _candidates(index, q, max(50, 4 * q.k))
    items = [index.items[i] for i in cands]
    if not items:
        return []
    signals = _signals(items, semantic, lexical_n, q, weights)
    scores = fuse(signals, weights)
    status = [_effective_status(item, q, index.is_outdated(item)) for item in items]
    factor = np.array([1.0 if s == "active" else weights.stale_factor for s in status],
                      dtype=np.float32)
    if not np.all(factor == 1.0):
        signals["status_factor"] = factor
    scores = scores * factor
    if q.time_scope == "most_recent":
        scores = _prefer_newest(index, cands, items, scores, signals, weights)
    order = np.argsort(-scores, kind="stable")[:q.k]
    return [_hit(items[j], status[j], float(scores[j]),
                 {name: float(arr[j]) for name, arr in signals.items()}) for j in order]


def _candidates(index: PairIndex, q: Query,
                pool: int) -> tuple[np.ndarray[Any, Any], Floats, Floats]:
    """The ``pool`` best eligible items by meaning and by words, with both raw signals.

    Written to touch each 100k-long array as few times as possible: this is the hot path.
    """
    eligible = _eligibility(index, q)
    qvec = index.embedder.embed([q.text])[0]
    semantic = similarities(index.vectors, qvec)
    semantic[~eligible] = -np.inf
    lexical = index.bm25.scores(tokenize(q.text))
    matched = np.flatnonzero(lexical)
    matched = matched[eligible[matched]]
    lex = lexical[matched]
    top_lex = float(lex.max()) if lex.size else 0.0
    by_words = matched[top_candidates([lex], pool)] if lex.size else matched
    cands = np.union1d(top_candidates([semantic], pool), by_words)
    cands = cands[(semantic[cands] > 0) | (lexical[cands] > 0)]
    lexical_n = lexical[cands] / top_lex if top_lex > 0 else np.zeros(len(cands), np.float32)
    return cands, semantic[cands], lexical_n.astype(np.float32)


def _eligibility(index: PairIndex, q: Query) -> np.ndarray[Any, Any]:
    """Which items may be returned: status first, then dates, then the kinds asked for."""
    if q.include_stale:
        eligible = index.status < STATUS_CODES["deleted"]
    else:
        eligible = index.status == STATUS_CODES["active"]
    if not q.include_stale:
        eligible &= index.expires >= q.now.astimezone(dt.timezone.utc).date().toordinal()
    if set(q.kinds) != set(KINDS):
        eligible &= np.isin(index.kinds, [KIND_CODES[k] for k in q.kinds])
    if not q.include_stale and index.outdated:
        eligible[index.outdated_positions()] = False
    return eligible


def _effective_status(item: Item, q: Query, outdated: bool = False) -> str:
    """A card's status as of ``q.now``: an active plan past ``expires`` counts as expired;
    a message whose only cards are stale or expired counts as stale."""
    if item.kind == "message":
        return "stale" if outdated else "active"
    if item.kind != "card":
        return "active"
    today = q.now.astimezone(dt.timezone.utc).date().isoformat()
    if item.status == "active" and item.expires is not None and item.expires < today:
        return "expired"
    return item.status


def _signals(items: list[Item], semantic: Floats, lexical: Floats, q: Query,
             weights: Weights) -> dict[str, Floats]:
    now = q.now.timestamp()
    ages = np.array([(now - i.time) / 86400.0 for i in items], dtype=np.float32)
    query_names = names(q.text) | {e.lower() for e in q.entities}
    out = {
        "semantic": np.maximum(semantic, 0.0).astype(np.float32),
        "bm25": lexical.astype(np.float32),
        "entity": entity_match(query_names, [frozenset(i.entities) for i in items]),
        "salience": np.array([i.salience for i in items], dtype=np.float32),
    }
    if q.time_scope != "past":
        floor = 0.0 if q.time_scope == "most_recent" else weights.recency_floor
        out["recency"] = recency(ages, weights.half_life_days, floor)
    if q.memory_types:
        out["type_match"] = np.array([1.0 if i.kind == "card" and i.type in q.memory_types
                                      else 0.0 for i in items], dtype=np.float32)
    return out


def _prefer_newest(index: PairIndex, cands: np.ndarray[Any, Any], items: list[Item],
                   scores: Floats, signals: dict[str, Floats], weights: Weights) -> Floats:
    """``most_recent``: a record with a newer near-duplicate among the candidates yields."""
    vecs = index.vectors[cands].astype(np.float32)
    sims = vecs @ vecs.T
    times = np.array([i.time for i in items])
    newer = (sims >= weights.similar_threshold) & (times[None, :] > times[:, None])
    has_newer = newer.any(axis=1).astype(np.float32)
    signals["newer_similar"] = has_newer
    return scores * np.where(has_newer > 0, weights.newer_similar_factor, 1.0).astype(np.float32)


def _hit(item: Item, status: str, score: float, signals: dict[str, float]) -> SearchHit:
    ts = None
    if item.kind == "message":
        ts = dt.datetime.fromtimestamp(item.time, dt.timezone.utc).isoformat().replace(
            "+00:00", "Z")
    return SearchHit(id=item.id, kind=item.kind, path=item.path, status=status, score=score,
                     text=item.text, signals=signals, ts=ts, session=item.session,
                     turn=item.turn, type=item.type)


def with_weights(base: Weights | None = None, **changes: float) -> Weights:
    """A copy of the default weights with some changed (benchmarks, tuning)."""
    return replace(base or DEFAULT_WEIGHTS, **changes)
