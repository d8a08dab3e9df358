"""What the storage layer needs from the layers above it, as Protocols.

The storage layer (repo, cards, pins, history, index, search, the window, compaction and
context assembly) never imports ``memfs.agent``, not even lazily: the retrieval decision,
dreaming and the language models reach it as one ``Services`` bundle. The composition
root, ``memfs/app.py``, builds the default bundle from ``memfs.agent`` (that is what
``memfs.MemoryStore`` is); an app or a test passes its own with ``services=``.

``DreamQueue`` is the job-queue interface: a compaction hands the pair over and returns at
once. The bundle's default starts a detached subprocess per compaction; ``memfs serve``
uses a bounded pool of worker threads; ``--queue redis://...`` sends jobs to Celery.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memfs.config import Config
    from memfs.llm import LLM
    from memfs.retrieval_plan import RetrievalPlan
    from memfs.store import MemoryPair


@dataclass(frozen=True)
class PlanRequest:
    """Everything the retrieval decision may look at: what is already in context."""

    message: str
    recent: Sequence[str]
    summary: str
    pins: str
    memory_names: frozenset[str]


class Planner(Protocol):
    """Decides, before any search, whether a turn needs long-term memory."""

    def plan(self, pair: MemoryPair, request: PlanRequest) -> RetrievalPlan: ...


class Dreamer(Protocol):
    """Runs dreaming for one pair in this process; returns the merge commits made.

    When another process is dreaming the pair, it waits up to ``wait`` seconds for that
    dream and reports the merges it made (``wait=0``: return at once)."""

    def dream(self, pair: MemoryPair, *, wait: float = 60.0) -> list[str]: ...


class DreamQueue(Protocol):
    """Where a compaction sends its pair to be dreamed, without waiting for the dream."""

    def submit(self, pair: MemoryPair) -> str | None:
        """Hand the pair's pending events over; may say what became of them (for
        ``memfs ingest``), None meaning "started in the background"."""

    def close(self, wait: bool = True) -> None:
        """Stop taking jobs; with ``wait``, let running dreams finish (pending events stay
        pending on disk either way)."""


@dataclass
class Services:
    """The agent layer, as the storage layer sees it."""

    planner: Planner
    dreamer: Dreamer
    queue: DreamQueue
    make_llm: Callable[[Config], LLM]
    """The configured chat model (``MemoryStore.llm`` when none was injected)."""
