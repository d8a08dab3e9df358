"""Long messages are embedded in pieces as well as whole.

One vector for a 90-word message averages everything in it: "…can you recommend sandals?
By the way, I keep my old sneakers in a shoe rack in the closet" is mostly about sandals,
and a question about the sneakers misses it. So a message longer than ``MIN_WORDS`` also
gets a vector per piece of about ``PIECE_WORDS`` words (whole sentences), and its semantic
score is the best of the whole and its pieces. Pieces are derived data, cached by content
hash like every vector; short messages (most chat) have none and cost nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

MIN_WORDS = 40
PIECE_WORDS = 30
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def pieces(text: str) -> list[str]:
    """Consecutive sentences grouped to about ``PIECE_WORDS`` words; [] for short text."""
    if len(text.split()) <= MIN_WORDS:
        return []
    out: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in (s.strip() for s in _SENTENCE.split(text)):
        if not sentence:
            continue
        words = len(sentence.split())
        if current and size + words > PIECE_WORDS:
            out.append(" ".join(current))
            current, size = [], 0
        current.append(sentence)
        size += words
    if current:
        out.append(" ".join(current))
    return out if len(out) > 1 else []


@dataclass
class Pieces:
    """Piece vectors of the index's long messages, each with its row (rows never decrease)."""

    vectors: npt.NDArray[np.float16]
    parent: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))

    @classmethod
    def empty(cls, dim: int) -> Pieces:
        return cls(np.zeros((0, dim), dtype=np.float16))

    def add(self, rows: list[int], vectors: npt.NDArray[np.floating]) -> None:
        if rows:
            self.vectors = np.concatenate([self.vectors, np.asarray(vectors, np.float16)])
            self.parent = np.concatenate([self.parent, np.array(rows, dtype=np.int32)])

    def best(self, sims: npt.NDArray[np.float32], rows: int) -> npt.NDArray[np.float32]:
        """Per row: the best piece similarity (-inf for rows without pieces)."""
        out = np.full(rows, -np.inf, dtype=np.float32)
        if len(self.parent):
            starts = np.flatnonzero(np.r_[True, self.parent[1:] != self.parent[:-1]])
            out[self.parent[starts]] = np.maximum.reduceat(sims, starts)
        return out
