"""Suggestions must respect what the user cannot or will not do, however it was said.

"Which cocktail should I order?" shares no word and little meaning with "three years
without a single drink now", yet that sentence is the one thing the reply must not miss.
A plain search for the request finds cocktails; so for a request for a suggestion the
retrieval plan also names the **domains** it touches (food, drink, activity, gift, place;
``classify_request`` decides them from the embedding when no model planned the turn), and
``rank_constraints`` looks in those domains for the user's constraints and preferences:
rows about the domain, close to the request, salient (the write-time score of
``memfs.salience``), sounding like a limit rather than news, and above all close to one of
the *requested* domain's prototype limits (``memfs.constraint_domains``, the domain model:
one sentence per cause, in general terms). Context assembly gives them a few of its slots.

Calibrated on ``agent/evals/data/constraint_dev.jsonl`` and the spent blind sets
``constraint_probes.jsonl`` and ``constraint_probes2.jsonl``; ``constraint_probes3.jsonl``
is the blind set of the third round (``memfs eval constraints``). Whether a message is a
request at all (``classify_request``'s bars) is calibrated on ``request_dev.jsonl`` and the
spent sets' requests (issue 12, fifth round).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memfs.constraint_domains import (
    CASUAL,
    DOMAIN_LIMITS,
    DOMAINS,
    LIMITS,
    NEWS,
    NOT_REQUESTS,
    REQUESTS,
    TOPICS,
)
from memfs.embed import Embedder
from memfs.index_items import KIND_CODES
from memfs.pair_index import PairIndex
from memfs.ranker import eligibility
from memfs.search_types import Query, SearchHit, effective_status, make_hit
from memfs.similarity import dot

CLASSIFY_THRESHOLD = 0.45
"""A request belongs to a domain when its best cosine to that domain's requests is at
least this, or it is within ``CLASSIFY_MARGIN`` of the best domain and the best is near
the threshold."""
CLASSIFY_MARGIN = 0.05
IMPLICIT_MARGIN = 0.0
"""A request without suggestion or advice words ("what's good to sip at my desk?") needs
this much more than the threshold, unless ``REQUEST_MARGIN`` says it is a request. Was
0.10 (0.55) before issue 12f: 16 of blind4's 30 requests, which only imply a suggestion,
fell under it (BENCHMARKS.md, fifth round)."""
REQUEST_MARGIN = 0.12
"""A question is a request when its best cosine to a request exceeds its best cosine to
``NOT_REQUESTS`` (news, questions about the past or about what the assistant said, questions
of fact) by this much, whatever its cosine: "we're bored, what now?" is 0.51 nearer to a
request than to anything else. Calibrated on ``agent/evals/data/request_dev.jsonl``."""
WORDINGS = ("explicit", "advice", "implicit")

__all__ = ["DOMAINS", "DOMAIN_LIMITS", "LIMITS", "NEWS", "REQUESTS", "TOPICS", "WORDINGS",
           "ConstraintWeights", "classify_request", "rank_constraints"]

_ALL_REQUESTS = {d: REQUESTS[d] + CASUAL[d] for d in DOMAINS}


@dataclass(frozen=True)
class ConstraintWeights:
    """Tuned on ``constraint_dev.jsonl`` and the spent ``constraint_probes.jsonl`` and
    ``constraint_probes2.jsonl`` (1,600 and 200 messages of small talk, one constraint per
    domain per pair; BENCHMARKS.md, issue 12). Salience says a line is personal, not that
    it is a limit (``limit``), and a limit need not be one of *this* domain: the user's
    other constraints used to take the slots (a food limit for a concert), so
    ``domain_limit`` asks whether the line sounds like a limit of the requested domains."""

    topic: float = 0.3
    """Best cosine to the domains' ``TOPICS``: is it about the domain?"""
    request: float = 0.6
    """Cosine to the request itself (a cocktail is nearer to drinking than to bread)."""
    salience: float = 0.8
    """Write-time salience (``memfs.salience``): a personal statement, not small talk."""
    limit: float = 0.5
    """Best cosine to ``LIMITS`` minus best cosine to ``NEWS``: a limit, not news."""
    domain_limit: float = 2.0
    """Best cosine to the requested domains' ``DOMAIN_LIMITS``: a limit of this domain."""
    floor: float = 0.6
    """Rows scoring below this (by the first three signals) are not candidates at all."""
    pool: int = 400
    """``limit`` and ``domain_limit`` are computed for this many of the best rows by the
    other signals (at 1,600 messages the constraint is in the best 400 of ~600 user rows;
    a larger pool changed nothing on the dev sets)."""
    dup_threshold: float = 0.93
    """Cosine at or above which a constraint hit is a repeat of a better one (and dropped)."""


_VECTORS: dict[tuple[str, str], npt.NDArray[np.float32]] = {}


def _prototypes(embedder: Embedder, table: dict[str, tuple[str, ...]], domain: str,
                kind: str) -> npt.NDArray[np.float32]:
    key = (embedder.name, f"{kind}:{domain}")
    if key not in _VECTORS:
        _VECTORS[key] = np.asarray(embedder.embed(list(table[domain])), dtype=np.float32)
    return _VECTORS[key]


def classify_request(embedder: Embedder, text: str, wording: str = "advice") -> tuple[str, ...]:
    """The suggestion domains ``text`` asks about (may be empty), by how it is worded
    (``WORDINGS``). "explicit" ("suggest a winter sport"): at least its nearest domains,
    even below the threshold — missing a constraint costs more than three slots of a
    suggestion's context. "advice" and "implicit" (no suggestion or advice words: "what's
    good to sip at my desk?"): when the request is close to a domain's requests, or clearly
    nearer to a request than to anything that is not one (``REQUEST_MARGIN``). The
    prototypes are embedded once per model; ``text`` in one run (the turn's query rides
    along: ``memfs.embed_memo``)."""
    qvec = np.asarray(embedder.embed([text])[0], dtype=np.float32)
    best = {d: float((_prototypes(embedder, _ALL_REQUESTS, d, "request") @ qvec).max())
            for d in DOMAINS}
    top = max(best.values())
    if wording == "explicit":
        near = True
    else:
        other = float((_prototypes(embedder, {"any": NOT_REQUESTS}, "any", "not-request")
                       @ qvec).max())
        bar = CLASSIFY_THRESHOLD + (IMPLICIT_MARGIN if wording == "implicit" else
                                    -CLASSIFY_MARGIN)
        near = top >= bar or top - other >= REQUEST_MARGIN
    if not near:
        return ()
    return tuple(d for d in DOMAINS if best[d] >= top - CLASSIFY_MARGIN
                 or (wording != "implicit" and best[d] >= CLASSIFY_THRESHOLD))


def rank_constraints(index: PairIndex, q: Query, domains: Sequence[str],
                     weights: ConstraintWeights | None = None) -> list[SearchHit]:
    """Up to ``q.k`` rows that state a constraint or preference of ``domains``.

    Only what the user said and cards count: the assistant does not have constraints.
    """
    w = weights or ConstraintWeights()
    domains = [d for d in domains if d in DOMAINS]
    if not index.position or not domains:
        return []
    groups, _ = index.derived()
    eligible = eligibility(index, q) & groups.representative
    eligible &= index.kinds != KIND_CODES["summary"]
    fixed = index.cached_embedder()  # prototype sentences: from the pair's vector cache
    topics = np.concatenate([_prototypes(fixed, TOPICS, d, "topic") for d in domains])
    request = index.similarities(index.query_vector(q.text))
    topic = np.asarray(index.best_similarities(topics), dtype=np.float32)
    score = w.request * request + w.topic * topic + w.salience * index.salience
    signals = {"semantic": request, "topic": topic}
    rows = np.flatnonzero(eligible & (score >= w.floor))
    rows = _said_by_user(index, rows[np.argsort(-score[rows], kind="stable")],
                         max(w.pool, q.k))
    if (w.limit or w.domain_limit) and len(rows):
        limit, in_domain = _limits(index, rows, domains)
        for name, values in (("limit", limit), ("domain_limit", in_domain)):
            signals[name] = np.zeros(len(request), dtype=np.float32)
            signals[name][rows] = values
        score = score.copy()
        score[rows] += w.limit * limit + w.domain_limit * in_domain
        rows = rows[np.argsort(-score[rows], kind="stable")]
    hits: list[SearchHit] = []
    kept: list[int] = []
    for row in rows.tolist():
        if kept and w.dup_threshold <= 1.0:
            vec = np.asarray(index.vectors[row], dtype=np.float32)
            if float((np.asarray(index.vectors[kept], dtype=np.float32) @ vec).max()) \
                    >= w.dup_threshold:
                continue  # the same line said again in other words: one slot is enough
        item = index.items[row]
        own = {name: float(arr[row]) for name, arr in signals.items()}
        own["salience"] = float(index.salience[row])
        hits.append(make_hit(item, effective_status(item, q.now, index.is_outdated(item)),
                             float(score[row]), own))
        kept.append(row)
        if len(hits) >= q.k:
            break
    return hits


def _said_by_user(index: PairIndex, rows: npt.NDArray[np.int64],
                  n: int) -> npt.NDArray[np.int64]:
    """The first ``n`` of ``rows`` that are cards or the user's messages: the assistant
    does not have constraints."""
    out: list[int] = []
    for row in rows.tolist():
        item = index.items[row]
        if item.kind != "message" or item.role == "user":
            out.append(row)
            if len(out) >= n:
                break
    return np.array(out, dtype=np.int64)


def _limits(index: PairIndex, rows: npt.NDArray[np.int64], domains: Sequence[str]
            ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """For ``rows``: (best cosine to a limit minus best cosine to personal news, best
    cosine to a limit of ``domains``). One product over the pool, not over every row, on
    the float16 rows (``memfs.similarity.dot``): numpy's threaded BLAS took 7-30 ms for
    this 400 x 35 product inside a busy process, against ~0.3 ms single-threaded."""
    fixed = index.cached_embedder()
    protos = [_prototypes(fixed, {"any": LIMITS}, "any", "limit"),
              _prototypes(fixed, {"any": NEWS}, "any", "news"),
              *(_prototypes(fixed, DOMAIN_LIMITS, d, "domain-limit") for d in domains)]
    sims = dot(np.asarray(index.vectors[rows], dtype=np.float16), np.concatenate(protos))
    ends = np.cumsum([len(p) for p in protos])
    limit = sims[:, :ends[0]].max(axis=1) - sims[:, ends[0]:ends[1]].max(axis=1)
    in_domain = sims[:, ends[1]:].max(axis=1)
    return limit.astype(np.float32), in_domain.astype(np.float32)
