"""memfs: long-term memory for AI companions that a person can read, edit and undo.

The public API is this short list (pinned by ``tests/test_public_api.py``); everything
else is internal. ``SearchHit`` and ``Embedder`` are loaded on first use so that
``import memfs`` stays light (no numpy index, no torch, no ``memfs.agent``).
``MemoryStore`` is the composition root's (``memfs/app.py``): storage wired to the agent
layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memfs.app import MemoryStore
from memfs.cards import Card
from memfs.errors import (
    BadInputError,
    CardParseError,
    ConflictError,
    GitError,
    InvalidIdError,
    LLMError,
    LockError,
    MemfsError,
    NeedsKeyError,
    NotARepoError,
)
from memfs.llm import LLM
from memfs.store import MemoryPair

if TYPE_CHECKING:
    from memfs.embed import Embedder
    from memfs.search import SearchHit

__all__ = [
    "LLM",
    "BadInputError",
    "Card",
    "CardParseError",
    "ConflictError",
    "Embedder",
    "GitError",
    "InvalidIdError",
    "LLMError",
    "LockError",
    "MemfsError",
    "MemoryPair",
    "MemoryStore",
    "NeedsKeyError",
    "NotARepoError",
    "SearchHit",
]


def __getattr__(name: str) -> Any:
    if name == "SearchHit":
        from memfs.search import SearchHit

        return SearchHit
    if name == "Embedder":
        from memfs.embed import Embedder

        return Embedder
    raise AttributeError(f"module 'memfs' has no attribute {name!r}")
