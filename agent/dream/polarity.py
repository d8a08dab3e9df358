"""Is a plan on, or only spoken of? A plan's polarity read from its embedding.

A dated sentence can name a plan the user will not carry out: one called off, skipped, to be
missed, or only wished for. ``cardtext.called_off`` reads a negation in the dated clause; chat
says the same thing in many other ways ("... after all", "... is what I'll miss", "was going to
..."), and a phrase list fitted to the sentences seen never covers the next split's. Here the
sentence is compared, by cosine similarity, with two small sets of prototype sentences written
in general terms (no data set's sentence, copied or paraphrased): ``ON`` (a plan the user
will carry out) and ``OFF`` (a plan that will not happen, or not with the user in it).
``off_score`` is the mean of the two best similarities to ``OFF`` minus the same for ``ON``;
the learned extractor writes no plan card from a sentence whose score is above
``learned.PLAN_OFF_MARGIN`` (chosen on the dev splits' leave-one-split-out numbers, see
BENCHMARKS.md, issue 13's eighth round).
"""

from __future__ import annotations

import numpy as np

from memfs.embed import Embedder

ON = (
    "I'm going to the event on Friday.",
    "I have an appointment next week.",
    "we've booked the trip for the weekend",
    "I'll be at the meeting on Monday",
    "I'm doing the course starting next month",
    "the party is on Saturday and I'm going",
    "I'm flying out on the 3rd",
    "we're definitely still on for dinner tomorrow",
    "my interview is on Thursday",
    "I'm finally doing it next weekend",
    "the appointment got moved to the 9th",
    "the trip is postponed until next month",
    "my sister's recital is on the 18th and I'll be there",
)
OFF = (
    "I'm not going to the event after all.",
    "the trip is off, we cancelled it",
    "I'm skipping the meeting on Monday",
    "I'll have to miss the class this week",
    "we were going to travel but that's not happening now",
    "I wish I could go to the concert on Saturday",
    "I had planned to go, but not any more",
    "I can't make it to the dinner tomorrow",
    "the party is happening without me",
    "so much for the weekend plans, they fell through",
    "I'll be missing the match this week",
    "our weekend away is cancelled",
    "I won't be there on Friday",
)

_CACHE: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}


def _vectors(embedder: Embedder) -> tuple[np.ndarray, np.ndarray]:
    key = (getattr(embedder, "name", type(embedder).__name__), id(embedder))
    if key not in _CACHE:
        vecs = np.asarray(embedder.embed(list(ON + OFF)), dtype=np.float32)
        _CACHE[key] = (vecs[: len(ON)], vecs[len(ON):])
    return _CACHE[key]


def _top2(sims: np.ndarray) -> np.ndarray:
    return np.asarray(np.sort(sims, axis=-1)[..., -2:].mean(axis=-1))


def off_score(vectors: np.ndarray, embedder: Embedder) -> np.ndarray:
    """Per row of ``vectors`` (L2-normalised sentence embeddings): how much more it reads as a
    plan that is off than as one that is on (positive: off)."""
    on, off = _vectors(embedder)
    v = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    return np.asarray(_top2(v @ off.T) - _top2(v @ on.T), dtype=np.float32)
