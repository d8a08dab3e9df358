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


@dataclass(frozen=True)
class ConstraintWeights:
    """Tuned on ``constraint_dev.jsonl`` (grid, 1,600 messages of small talk, one constraint
    per domain per pair: 9/15 dev constraints first or in the top 3 of this ranking). A
    third signal, cosine to general constraint statements ("that makes me ill, so I avoid
    it"), got weight 0 in that grid at 1,600 messages and was dropped."""

    topic: float = 0.3
    """Best cosine to the domains' ``TOPICS``: is it about the domain?"""
    request: float = 0.6
    """Cosine to the request itself (a cocktail is nearer to drinking than to bread)."""
    salience: float = 0.8
    """Write-time salience (``memfs.salience``): a personal statement, not small talk."""
    floor: float = 0.65
    """Rows scoring below this are not constraints of the domain at all."""


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
    topics = np.concatenate([_prototypes(index.embedder, TOPICS, d, "topic") for d in domains])
    request = index.similarities(index.query_vector(q.text))
    topic = np.full(len(request), -1.0, dtype=np.float32)
    for proto in topics:  # one pass per prototype: float16 rows, no copy of the matrix
        np.maximum(topic, index.similarities(proto), out=topic)
    score = w.request * request + w.topic * topic + w.salience * index.salience
    signals = {"semantic": request, "topic": topic}
    rows = np.flatnonzero(eligible & (score >= w.floor))
    rows = rows[np.argsort(-score[rows], kind="stable")]
    hits: list[SearchHit] = []
    for row in rows.tolist():
        item = index.items[row]
        if item.kind == "message" and item.role != "user":
            continue
        own = {name: float(arr[row]) for name, arr in signals.items()}
        own["salience"] = float(index.salience[row])
        hit = make_hit(item, effective_status(item, q.now, index.is_outdated(item)),
                       float(score[row]), own)
        hits.append(hit)
        if len(hits) >= q.k:
            break
    return hits
