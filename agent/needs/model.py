"""A learned reading of whether a message is about the user's own life.

The offline plan searches memory when the message carries a cue it knows ("remember", "my",
a name memory holds, a request for a suggestion). On fresh probe sets written by hands that
never saw those cues, it searched for 10 of 20 messages that need memory (decision blind2) and
6 of 20 (blind3): people talk about their dog, their landlord, their knee and the results
they were waiting for without "I", "my" or a memory word. Patterns for that are phrase rules by
another name (stop 42, x-cue). This is a logistic regression over the message's
all-MiniLM-L6-v2 embedding (which the turn computes anyway for the suggestion classifier),
fitted by ``fit.py`` on the spent decision probes: the probability that the message is about
the user's own life, people, pets or past, and so needs memory unless the context answers it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memfs.embed import DEFAULT_MODEL, Embedder

DATA_PATH = Path(__file__).parent / "data" / "need_model.npz"


@dataclass(frozen=True)
class NeedModel:
    """Weights over the unit-length message vector; ``threshold``: the probability at which
    the plan searches, chosen by leave-one-set-out on the spent probe sets (``fit.py``)."""

    weights: npt.NDArray[np.float32]  # dim
    bias: float
    threshold: float

    def probability(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        z = np.atleast_2d(vectors).astype(np.float64) @ self.weights.astype(np.float64) + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-z)))

    def save(self, path: Path = DATA_PATH) -> None:
        np.savez_compressed(path, weights=self.weights.astype(np.float32), bias=np.array(self.bias),
                            threshold=np.array(self.threshold), model=np.array(DEFAULT_MODEL))

    @classmethod
    def load(cls, path: Path = DATA_PATH) -> NeedModel:
        with np.load(path, allow_pickle=False) as data:
            return cls(data["weights"], float(data["bias"]), float(data["threshold"]))


def unit_vectors(embedder: Embedder, texts: list[str]) -> npt.NDArray[np.float32]:
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    out: npt.NDArray[np.float32] = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
    return out


_SHIPPED: list[NeedModel] = []


def shipped() -> NeedModel:
    """``data/need_model.npz``, loaded once per process."""
    if not _SHIPPED:
        _SHIPPED.append(NeedModel.load())
    return _SHIPPED[0]


def needs_memory(embedder: Embedder, text: str) -> float:
    """The shipped model's probability that ``text`` is about the user's own life; 0.0 for an
    embedder it was not fitted on (a test's fake embedder, another model)."""
    model = shipped()
    if embedder.name != DEFAULT_MODEL or model.weights.shape[0] != embedder.dim:
        return 0.0
    return float(model.probability(unit_vectors(embedder, [text]))[0])


def reading(embedder: Embedder) -> tuple[Callable[[str], float], float]:
    """The shipped model as the offline plan takes it: ``(needs, need_threshold)`` for
    ``plan_offline`` (a turn, ``memfs eval decision --model``, the benches)."""
    return (lambda text: needs_memory(embedder, text)), shipped().threshold
