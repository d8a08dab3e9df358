"""Suggestions must respect what the user cannot or will not do, however it was said.

"Which cocktail should I order?" shares no word and little meaning with "three years
without a single drink now", yet that sentence is the one thing the reply must not miss.
A plain search for the request finds cocktails; so for a request for a suggestion the
retrieval plan also names the **domains** it touches (food, drink, activity, gift, place;
``classify_request`` decides them from the embedding when no model planned the turn), and
``rank_constraints`` looks in those domains for the user's constraints and preferences:
rows close to prototype constraint statements of the domain (written in general terms:
health, diet, belief, fear, money, access), close to the request, and salient (the
write-time score of ``memfs.salience``). Context assembly gives them a few of its slots.

Calibrated on ``agent/evals/data/constraint_dev.jsonl``; measured on the blind
``constraint_probes.jsonl`` (``memfs eval constraints``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memfs.embed import Embedder
from memfs.index_items import KIND_CODES
from memfs.pair_index import PairIndex
from memfs.ranker import eligibility
from memfs.search_types import Query, SearchHit, effective_status, make_hit

DOMAINS = ("food", "drink", "activity", "gift", "place")

REQUESTS: dict[str, tuple[str, ...]] = {
    "food": ("What should I cook for dinner?", "Can you suggest a recipe?",
             "Recommend somewhere to eat.", "Any snack ideas?", "What should I bake?",
             "What should I order to eat tonight?"),
    "drink": ("What should I drink?", "Recommend a cocktail.", "Suggest a drink to order.",
              "What should I have to drink at the party?"),
    "activity": ("What should we do this weekend?", "Suggest something fun to do.",
                 "Any ideas for an outing or an activity?", "What should I do tonight?"),
    "gift": ("What gift should I buy for her?", "Present ideas for his birthday?",
             "What should I give them?"),
    "place": ("Where should I go on holiday?", "Recommend a place to stay.",
              "Suggest somewhere to visit.", "Where should we go out?"),
}
"""What a request for a suggestion in each domain sounds like (to classify a request)."""

TOPICS: dict[str, tuple[str, ...]] = {
    "food": ("Food and eating.", "Meals, snacks and cooking.", "What I eat."),
    "drink": ("Drinks.", "What I drink.", "Having something to drink."),
    "activity": ("Things to do for fun.", "Going out and doing activities.",
                 "Sports, outings and hobbies."),
    "gift": ("Presents for someone.", "What they would like to receive.",
             "Buying a gift."),
    "place": ("Places to go and stay.", "Travelling somewhere.", "Where we go."),
}
"""What each domain is about, as a topic (a constraint must be about the domain)."""

CLASSIFY_THRESHOLD = 0.45
"""A request belongs to a domain when its best cosine to that domain's requests is at
least this, or it is the best domain and within ``CLASSIFY_MARGIN`` of the best."""
CLASSIFY_MARGIN = 0.05


LIMITS: tuple[str, ...] = (
    "I can't have that, it makes me ill.", "I'm allergic to it.",
    "My doctor told me to stay away from it.", "I gave it up for good.",
    "That's off limits for me now.", "It's against my beliefs, so I never do it.",
    "That frightens me, so I avoid it.", "It makes me anxious and I have to leave.",
    "My body can't cope with that any more.", "I'm not able to do that because of my condition.",
    "I can't afford much at the moment.", "I can't get there on my own.",
    "She can't stand it.", "He isn't allowed to have that.",
    "We always have to take them with us.",
)
"""What a constraint sounds like in any domain: a limit, whatever its cause (health,
belief, fear, money, access, dependents; for the user or the person a gift is for)."""
NEWS: tuple[str, ...] = (
    "We had a takeaway last night.", "I tried a new recipe today.",
    "My friend is moving away and I'm sad.", "I'm learning a new language.",
    "Work was stressful this week.", "I went to a concert at the weekend.",
    "I bought a new jacket.", "I'm so tired today.", "The weather has been awful.",
    # "can't" and complaints that are not limits
    "I can't wait for the weekend.", "I couldn't stop laughing.",
    "A colleague is really annoying me at work.",
)
"""Personal news that is not a limit: what salient small talk sounds like."""


@dataclass(frozen=True)
class ConstraintWeights:
    """Tuned on ``constraint_dev.jsonl`` and the spent ``constraint_probes.jsonl``
    (1,600 messages of small talk, one constraint per domain per pair; BENCHMARKS.md,
    issue 12, second round). Salient small talk ("we ordered fish and chips, no regrets")
    used to fill the slots: salience says a line is personal, not that it is a limit,
    so ``limit`` (a constraint's margin over personal news) decides among salient lines."""

    topic: float = 0.3
    """Best cosine to the domains' ``TOPICS``: is it about the domain?"""
    request: float = 0.6
    """Cosine to the request itself (a cocktail is nearer to drinking than to bread)."""
    salience: float = 0.8
    """Write-time salience (``memfs.salience``): a personal statement, not small talk."""
    limit: float = 0.5
    """Best cosine to ``LIMITS`` minus best cosine to ``NEWS``: a limit, not news."""
    floor: float = 0.65
    """Rows scoring below this (without ``limit``) are not constraints of the domain at all."""
    pool: int = 200
    """``limit`` is computed for this many of the best rows by the other signals."""
    dup_threshold: float = 0.93
    """Cosine at or above which a constraint hit is a repeat of a better one (and dropped)."""


_VECTORS: dict[tuple[str, str], npt.NDArray[np.float32]] = {}


def _prototypes(embedder: Embedder, table: dict[str, tuple[str, ...]], domain: str,
                kind: str) -> npt.NDArray[np.float32]:
    key = (embedder.name, f"{kind}:{domain}")
    if key not in _VECTORS:
        _VECTORS[key] = np.asarray(embedder.embed(list(table[domain])), dtype=np.float32)
    return _VECTORS[key]


def classify_request(embedder: Embedder, text: str) -> tuple[str, ...]:
    """The suggestion domains ``text`` asks about (may be empty)."""
    qvec = np.asarray(embedder.embed([text])[0], dtype=np.float32)
    best = {d: float((_prototypes(embedder, REQUESTS, d, "request") @ qvec).max())
            for d in DOMAINS}
    top = max(best.values())
    return tuple(d for d in DOMAINS if best[d] >= CLASSIFY_THRESHOLD
                 or (best[d] == top and top >= CLASSIFY_THRESHOLD - CLASSIFY_MARGIN))


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
    if w.limit and len(rows):
        limit = _limit(index, rows)
        signals["limit"] = np.zeros(len(request), dtype=np.float32)
        signals["limit"][rows] = limit
        score = score.copy()
        score[rows] += w.limit * limit
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


def _limit(index: PairIndex, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """For ``rows``: best cosine to a limit minus best cosine to personal news."""
    vecs = np.asarray(index.vectors[rows], dtype=np.float32)
    fixed = index.cached_embedder()
    limits = _prototypes(fixed, {"any": LIMITS}, "any", "limit")
    news = _prototypes(fixed, {"any": NEWS}, "any", "news")
    out: npt.NDArray[np.float32] = ((vecs @ limits.T).max(axis=1)
                                    - (vecs @ news.T).max(axis=1)).astype(np.float32)
    return out
