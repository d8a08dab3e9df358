"""memfs: long-term memory for AI companions that a person can read, edit and undo.

The public API is this short list (pinned by ``tests/test_public_api.py``); everything
else is internal. Only the errors load with the package; every other name loads on first
use, so ``import memfs`` (and every git hook, which imports ``memfs.hooks``) stays light:
no git library, no numpy, no torch, no ``memfs.agent``. ``MemoryStore`` is the
composition root's (``memfs/app.py``): storage wired to the agent layer.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from memfs.app import MemoryStore
    from memfs.cards import Card
    from memfs.embed import Embedder
    from memfs.llm import LLM
    from memfs.search import SearchHit
    from memfs.store import MemoryPair

_LAZY = {"MemoryStore": "memfs.app", "MemoryPair": "memfs.store", "Card": "memfs.cards",
         "LLM": "memfs.llm", "SearchHit": "memfs.search", "Embedder": "memfs.embed"}

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
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'memfs' has no attribute {name!r}")
