"""Does a new card make an old one untrue? A learned pairwise decision, beside the slot rule.

The slot rule (``extract_semantic._replaced``) replaces an old card when the new sentence reads
as the same single-valued slot (job, home, partner, name, pronouns). People rarely tell a change in
a slot's own words: "out of muggia, flat in san giacomo now" reads as a plain fact, "quit the petrol
station in bodø in march, …" as a home, "me and dmitri are done" as a fact. On the spent dev windows
main made 58 of 194 expected supersedes, and in 111 of the 136 misses no candidate of the window
fell in the old card's class (BENCHMARKS.md, stop 38). What such sentences share is not wording:
they are near the old card, they often name its place, employer or person, they read as an ending
or a change, and both read as some single slot.

This module reads a (candidate, active card) pair as a few such numbers and a logistic regression
(``data/supersede.npz``, fit by ``python -m memfs.agent.dream.fit_supersede`` on the spent dev
windows' expected supersedes) says whether the candidate replaces the card. It is asked only when
the slot rule finds nothing, and only of the user's own cards of ``KINDS``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from memfs.agent.dream.polarity import off_score
from memfs.agent.dream.prototypes import Prototypes, Scores
from memfs.agent.dream.rules.lexicon import STOPWORDS

from memfs.cards import Card
from memfs.embed import Embedder

DATA_PATH = Path(__file__).parent / "data" / "supersede.npz"
KINDS = ("fact", "relationship", "preference")
"""The types of old card the decision may replace: a plan or an event is retired, not replaced."""
CHANGED = ("I don't work there anymore.", "I left that job.", "I quit my job.", "I was let go.", "I retired.",
           "I moved away.", "I don't live there anymore.", "I've moved house.", "We moved to a new place.",
           "We broke up.", "We're not together anymore.", "We split up.", "It's over between us.",
           "We got divorced.", "We got engaged.", "We got married.", "I changed my name.",
           "I go by a different name now.", "I use different pronouns now.", "I stopped doing that.",
           "I gave it up.", "I started a new job.", "I don't do that any more.", "That's all in the past now.",
           "Not anymore.")
"""A standing fact of the user's that changed or ended, in general words (no slot's value)."""
KEPT = ("I still work there.", "I'm still at the same job.", "I still live in the same place.",
        "We're still together.", "Nothing has changed.", "Same as always.", "It's the same as ever.",
        "I'm staying where I am.", "Still going strong.", "As usual.", "Things are fine there.",
        "I still do that every week.", "Someone I know is moving.", "My friend changed jobs.",
        "A friend of mine split up with her boyfriend.", "Their family is visiting.",
        "We're having people over this weekend.")
"""What stays as it was, and other people's changes: talk that names the old card's things."""
_CHANGE_VECTORS: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def change_score(vectors: np.ndarray, embedder: Embedder) -> np.ndarray:
    """Per row (L2-normalised sentence embeddings): how much more it reads as a standing fact that
    changed or ended (``CHANGED``) than as one that stays or as someone else's (``KEPT``); the mean
    of the two best cosines of each."""
    if embedder.name not in _CHANGE_VECTORS:
        _CHANGE_VECTORS[embedder.name] = (np.asarray(embedder.embed(list(CHANGED)), dtype=np.float32),
                                          np.asarray(embedder.embed(list(KEPT)), dtype=np.float32))
    changed, kept = _CHANGE_VECTORS[embedder.name]
    v = np.atleast_2d(np.asarray(vectors, dtype=np.float32))

    def top2(sims: np.ndarray) -> np.ndarray:
        return np.sort(sims, axis=1)[:, -2:].mean(axis=1)

    return np.asarray(top2(v @ changed.T) - top2(v @ kept.T), dtype=np.float32)


_WORD = re.compile(r"[^\W\d_][\w'-]{2,}")
_NOT_CONTENT = frozenset({"user", "user's", "users", "their", "they", "them", "works", "lives", "live", "work",
                          "uses", "likes", "name", "named", "called"})


class Candidate(Protocol):
    """What the decision reads of a candidate card (``extract_semantic.Cand``)."""

    vector: np.ndarray
    body: str
    sentence: str
    type: str
    own: bool


def content_words(text: str) -> frozenset[str]:
    """The words of ``text`` that can name a place, an employer or a person: not stopwords, not
    the card's own scaffolding ("the user", "works", "lives")."""
    words = {w.lower().strip("'-") for w in _WORD.findall(text)}
    return frozenset(w for w in words if w not in STOPWORDS and w not in _NOT_CONTENT and len(w) > 2)


N_FEATURES = 16


def features(cand: Candidate, cand_scores: Scores, off: float, change: float, card: Card,
             card_words: frozenset[str], card_scores: Scores, sim: float, nearest: bool,
             single: frozenset[str]) -> np.ndarray:
    """One row: how near the two are, whether the candidate names what the old card is about,
    whether both read as one single slot, whether the sentence reads as an ending, and whose."""
    said = content_words(cand.sentence or cand.body)
    shared = len(card_words & said)
    both_single = max((min(cand_scores[k], card_scores[k]) for k in single), default=0.0)
    old_best = card_scores.best()[0]
    return np.array([
        sim,
        float(nearest),
        shared / max(1, len(card_words)),
        float(shared > 0),
        both_single,
        float(old_best in single),
        float(cand_scores.best()[0] == old_best),
        off,
        float(cand.own),
        float(cand.type == card.type),
        float(card.type == "preference"),
        float(card.type == "relationship"),
        float(cand.type == "relationship"),
        float(shared > 0) * off,
        change * 10.0,
        float(shared > 0) * change * 10.0,
    ], dtype=np.float32)


@dataclass(frozen=True)
class Model:
    """The regression (``w``, ``b``) and the probability from which a pair is a supersede."""

    w: np.ndarray
    b: float
    threshold: float

    def p(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-(np.atleast_2d(x) @ self.w + self.b))))

    def save(self, path: Path = DATA_PATH) -> None:
        np.savez(path, w=self.w.astype(np.float32), b=np.float32(self.b), threshold=np.float32(self.threshold))

    @classmethod
    def load(cls, path: Path = DATA_PATH) -> Model | None:
        try:
            with np.load(path) as data:
                w = np.asarray(data["w"], dtype=np.float32)
                if w.shape != (N_FEATURES,):
                    return None
                return cls(w, float(data["b"]), float(data["threshold"]))
        except (OSError, KeyError, ValueError):
            return None


_SHIPPED: dict[str, Model | None] = {}


def shipped_model() -> Model | None:
    """``data/supersede.npz``, loaded once; None when absent (the slot rule alone decides)."""
    key = str(DATA_PATH)
    if key not in _SHIPPED:
        _SHIPPED[key] = Model.load(DATA_PATH)
    return _SHIPPED[key]


class Decider:
    """For one window: per candidate, the probability that it replaces each active card (0 for a
    card the decision may not replace)."""

    def __init__(self, model: Model, protos: Prototypes, embedder: Embedder, active: Sequence[Card],
                 card_vecs: np.ndarray, single: frozenset[str]) -> None:
        self.model, self.protos, self.embedder = model, protos, embedder
        self.active, self.single = active, single
        self.card_scores = protos.score(card_vecs)
        self.card_words = [content_words(c.body) | {e.lower() for e in c.entities if e.lower() != "user"}
                           for c in active]
        self.allowed = np.array([c.type in KINDS for c in active], dtype=bool)

    def rows(self, cand: Candidate, sims: np.ndarray) -> np.ndarray:
        """The feature rows of ``cand`` against every active card."""
        vec = np.asarray(cand.vector, dtype=np.float32)[None, :]
        cand_scores = self.protos.score(vec)[0]
        off = float(off_score(vec, self.embedder)[0])
        change = float(change_score(vec, self.embedder)[0])
        top = int(np.argmax(sims)) if len(sims) else -1
        return np.stack([features(cand, cand_scores, off, change, card, words, scores, float(sims[i]), i == top,
                                  self.single)
                         for i, (card, words, scores) in enumerate(zip(self.active, self.card_words,
                                                                       self.card_scores, strict=True))]) \
            if len(self.active) else np.zeros((0, N_FEATURES), dtype=np.float32)

    def __call__(self, cand: Candidate, sims: np.ndarray) -> np.ndarray:
        if not len(self.active):
            return np.zeros(0)
        p = self.model.p(self.rows(cand, sims))
        return np.where(self.allowed, p, 0.0)
