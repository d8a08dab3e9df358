"""Hybrid search over a pair's memory that knows which record is still true.

Status comes first: a stale card ("the meeting is on Thursday") is not a weaker version of
the active one ("moved to Friday"), it is a record of what *was* true, so by default only
active cards compete (plus the summary and past messages, which have no status). Plans past
their ``expires`` date count as expired even before dreaming rewrites the file. With
``include_stale`` stale and expired cards come back too, marked and demoted; ``deleted``
never does. Among the eligible records, the signals of ``memfs.ranking`` are fused, and
``k`` hits are ``k`` distinct pieces of information: repeated text is one hit that says how
often it was said, and one topic cannot fill every slot (``memfs.ranker``). Each hit
carries its signals so ``--explain`` can show why it ranked where it did.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memfs.blas import one_thread
from memfs.embed_memo import expect_text
from memfs.index import open_index, refresh
from memfs.ranker import rank, topic_query
from memfs.ranking import Weights
from memfs.search_types import KINDS, TIME_SCOPES, Query, SearchHit, make_query

if TYPE_CHECKING:
    from memfs.store import MemoryPair

__all__ = ["DEFAULT_WEIGHTS", "KINDS", "TIME_SCOPES", "Query", "SearchHit", "make_query",
           "constraint_search", "rank", "search", "with_weights"]

DEFAULT_WEIGHTS = Weights()


def search(pair: MemoryPair, query: str, k: int = 5, include_stale: bool = False,
           time_scope: str = "any", entities: Sequence[str] = (),
           memory_types: Sequence[str] = (), now: dt.datetime | None = None,
           explain: bool = False, kinds: Sequence[str] = KINDS,
           weights: Weights | None = None, exclude: Collection[str] = ()) -> list[SearchHit]:
    """The ``k`` best records for ``query`` in ``pair``'s memory (index refreshed first).

    ``explain`` is accepted for symmetry with the CLI: signals are always filled in.
    ``exclude``: message ids never to return (the context passes its window).
    """
    q = make_query(query, k, include_stale, time_scope, entities, memory_types, now, kinds,
                   exclude)
    index = open_index(pair.root, pair.store.embedder)
    weights = weights or DEFAULT_WEIGHTS
    topic = topic_query(q.text, weights)  # embedded with the turn's new message, if any
    expect_text(index.embedder, q.text, *([topic] if topic else []))
    with one_thread():
        refresh(index)
        return rank(index, q, weights)


def constraint_search(pair: MemoryPair, request: str, domains: Sequence[str], k: int = 3,
                      now: dt.datetime | None = None,
                      exclude: Collection[str] = ()) -> list[SearchHit]:
    """What the user said (or a card says) they cannot or will not do in ``domains``,
    for a request for a suggestion (see ``memfs.constraints``)."""
    from memfs.constraints import rank_constraints

    q = make_query(request, k, now=now or pair.now(), exclude=exclude)
    index = open_index(pair.root, pair.store.embedder)
    with one_thread():
        refresh(index)
        return rank_constraints(index, q, domains)


def with_weights(base: Weights | None = None, **changes: Any) -> Weights:
    """A copy of the default weights with some changed (benchmarks, tuning)."""
    return replace(base or DEFAULT_WEIGHTS, **changes)
