"""The second stage of the learned extractor: a verifier that keeps or drops each proposed card.

The first stage (``learned.Model``) decides per sentence, from the sentence and what is around
it; it cannot see the card it will write (the body in the third person with the sentence it
leans on, the type ``_typed`` settled on after its grammar gates, whether it came from a person
named in passing). Fresh splits showed where that costs precision: hypotheticals written as
boundaries, past plans called off, other people's opinions. The verifier is one logistic
regression over what is known once the card exists:

- the embedding of the card body (all-MiniLM-L6-v2, as the first stage);
- its type (one-hot over ``learned.TYPES``), whether it names anyone besides the user, whether
  it expires;
- the first stage's card probability, its distance above the threshold, the type probability
  and its margin over the second type, and whether the card is a person named in passing;
- the sentence's grammar flags (``learned.flags``).

It is fitted (``fit_learned.fit_verifier``) on the cards the first stage proposes on dev
windows it was *not* fitted on (each dev split's cards come from a first stage fitted on the
other splits), labelled by the extraction eval itself: a card that matches a reference is kept,
one that matches nothing is dropped, a ``forbidden`` (false) one is dropped with more weight.
Its threshold is chosen by an inner cross-validation over splits. Weights ship as
``data/verifier.npz``; without that file every proposed card is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from memfs.agent.dream.extract_semantic import Cand

from memfs.embed import Embedder

DATA_PATH = Path(__file__).parent / "data" / "verifier.npz"


@dataclass
class Proposal:
    """A card the first stage proposes, with what the verifier reads about it."""

    cand: Cand
    card_p: float
    """The first stage's card probability (1.0 for a person named in passing)."""
    threshold: float
    types: np.ndarray
    flags: np.ndarray
    people: bool = False


def verifier_features(proposals: Sequence[Proposal], embedder: Embedder, types: Sequence[str],
                      body: bool = True) -> np.ndarray:
    """One row per proposal (see the module docstring); with ``body``, the bodies' embeddings
    first (one batch)."""
    if not proposals:
        return np.zeros((0, 0), dtype=np.float32)
    bodies = (np.asarray(embedder.embed([p.cand.body for p in proposals]), dtype=np.float32) if body
              else np.zeros((len(proposals), 0), dtype=np.float32))
    rows = []
    for p, vec in zip(proposals, bodies, strict=True):
        ranked = np.sort(p.types)[::-1]
        rows.append(np.concatenate([
            vec, [float(p.cand.type == t) for t in types],
            [p.card_p, p.card_p - p.threshold, float(ranked[0]), float(ranked[0] - ranked[1]), float(p.people),
             float(len(p.cand.entities) > 1), float(p.cand.expires is not None)],
            p.flags]))
    return np.asarray(rows, dtype=np.float32)


@dataclass(frozen=True)
class Verifier:
    """Keep a proposed card whose first-stage probability is at least ``floor`` when
    ``sigmoid(x @ w + b) >= threshold``; ``body``: the features start with the body's embedding."""

    w: np.ndarray
    b: float
    threshold: float
    floor: float
    body: bool

    def scores(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-(x @ self.w + self.b))))

    def keep(self, proposals: Sequence[Proposal], embedder: Embedder, types: Sequence[str]) -> list[Proposal]:
        if not proposals:
            return []
        s = self.scores(verifier_features(proposals, embedder, types, self.body))
        return [p for p, score in zip(proposals, s, strict=True) if score >= self.threshold]

    def save(self, path: Path = DATA_PATH) -> None:
        np.savez_compressed(path, w=self.w.astype(np.float32), b=np.array(self.b), threshold=np.array(self.threshold),
                            floor=np.array(self.floor), body=np.array(self.body))

    @classmethod
    def load(cls, path: Path = DATA_PATH) -> Verifier:
        with np.load(path, allow_pickle=False) as data:
            return cls(data["w"], float(data["b"]), float(data["threshold"]), float(data["floor"]), bool(data["body"]))


_SHIPPED: list[Verifier | None] = []


def shipped_verifier() -> Verifier | None:
    """The verifier in ``data/verifier.npz`` (loaded once per process), or None without one."""
    if not _SHIPPED:
        _SHIPPED.append(Verifier.load() if DATA_PATH.exists() else None)
    return _SHIPPED[0]
