"""Does a sentence end a standing fact? A change told against the old value, read from its embedding.

A single-valued slot (name, pronouns, job, home, partner) changes in chat far more often by
naming the old value than by stating the new one: "the user and dmitri are done", "quit the
call centre, starting as a teaching assistant on monday", "out of muggia, flat in san giacomo
now". Such a sentence is a card, but not of the old card's slot (a relationship, a fact, a
plan), and its cosine to the old card is under ``Thresholds.supersede``, so on the dev splits
62 of 71 missed supersedes had the right new card written *beside* the old one, which stayed
active and was still believed (stop 33).

Here the sentence is compared, by cosine similarity, with small sets of prototype sentences
written in general terms (no data set's sentence, copied or paraphrased), as
``polarity.off_score`` does for plans: per slot, sentences that end or replace that slot
(``ENDS``), and one set of sentences that mention a standing fact without changing it
(``STAYS``: the partner's mother visiting, a busy day at work). ``change_scores`` is, per slot,
the mean of the two best similarities to that slot's ``ENDS`` minus the same for ``STAYS``.
``extract_semantic._replaced`` lets a sentence of any slot replace an active card of a slot
when this score clears ``Thresholds.change_margin`` and the two cards' cosine clears
``Thresholds.change_floor`` (the sentence must be about *that* value). Both numbers were chosen
on the dev splits (BENCHMARKS.md, stop 33).
"""

from __future__ import annotations

import numpy as np

from memfs.embed import Embedder

ENDS: dict[str, tuple[str, ...]] = {
    "partner": (
        "we broke up.",
        "my boyfriend and I split up last week",
        "she and I are over now.",
        "I'm single again since the break-up",
        "we got divorced this year",
        "he left me",
        "we called off the engagement",
    ),
    "home": (
        "we moved out of our old flat and into a new place",
        "I don't live in that city anymore, we moved away",
        "I left the town after years there",
        "we've just moved to a new house across the country",
        "I live somewhere else now",
        "I moved back in with my parents",
    ),
    "job": (
        "I quit my job at the bakery.",
        "I don't work at the hospital any more.",
        "I left that company and started somewhere new.",
        "these days I work as a carpenter instead",
        "I got made redundant",
        "I got promoted to manager",
        "I changed jobs, I'm a teacher now",
    ),
    "name": (
        "I go by a different name now.",
        "call me by my new name from now on",
        "I've changed my name",
    ),
    "pronouns": (
        "I use different pronouns now",
        "I've come out as non-binary, they/them now",
        "please use he/him for me from now on",
    ),
}
"""Per single-valued slot: sentences that make its old value untrue. A pet is not here: a new
pet does not replace the old one, and "the vet moved her appointment" read as an ending."""

STAYS: tuple[str, ...] = (
    "I still work at the hospital.",
    "my girlfriend made me dinner last night",
    "work was busy today at the shop",
    "we've lived here for ten years",
    "my dog loves the beach",
    "my boss was in a good mood today",
    "my partner and I are going away next weekend",
    "my husband's mum is visiting on Friday",
    "the flat is freezing this week",
    "I love my job at the library",
    "my cat slept on my keyboard all morning",
    "my boyfriend's sister thinks I should relax",
)

_CACHE: dict[tuple[str, int], tuple[dict[str, np.ndarray], np.ndarray]] = {}


def _vectors(embedder: Embedder) -> tuple[dict[str, np.ndarray], np.ndarray]:
    key = (getattr(embedder, "name", type(embedder).__name__), id(embedder))
    if key not in _CACHE:
        texts = [s for slot in ENDS.values() for s in slot] + list(STAYS)
        vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
        ends: dict[str, np.ndarray] = {}
        at = 0
        for slot, sentences in ENDS.items():
            ends[slot] = vecs[at: at + len(sentences)]
            at += len(sentences)
        _CACHE[key] = (ends, vecs[at:])
    return _CACHE[key]


def _top2(sims: np.ndarray) -> np.ndarray:
    return np.asarray(np.sort(sims, axis=-1)[..., -2:].mean(axis=-1))


def change_scores(vectors: np.ndarray, embedder: Embedder) -> list[dict[str, float]]:
    """Per row of ``vectors`` (L2-normalised sentence embeddings), per slot of ``ENDS``: how
    much more it reads as ending that slot's value than as mentioning a standing fact
    (positive: an ending)."""
    ends, stays = _vectors(embedder)
    v = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    if not len(v):
        return []
    stay = _top2(v @ stays.T)
    per_slot = {slot: _top2(v @ e.T) - stay for slot, e in ends.items()}
    return [{slot: float(s[i]) for slot, s in per_slot.items()} for i in range(len(v))]
