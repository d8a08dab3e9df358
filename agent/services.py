"""The agent layer, bundled as the ``Services`` the storage layer asks for.

``memfs/services.py`` says what the storage layer needs (a planner, a dreamer, a dream
queue, an LLM factory); this module is what the agent layer gives. Everything heavy (the
LLM SDKs, the rule extractor, the planner's rules) is imported on first use, so wiring a
store costs nothing until a turn needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs.services import PlanRequest, Services

if TYPE_CHECKING:
    from memfs.config import Config
    from memfs.llm import LLM
    from memfs.retrieval_plan import RetrievalPlan
    from memfs.services import DreamQueue
    from memfs.store import MemoryPair, MemoryStore


def make_llm(config: Config) -> LLM:
    from memfs.agent.llm.registry import get_llm

    return get_llm(config.llm_provider, config.llm_model)


def planner_llm(store: MemoryStore) -> LLM | None:
    """The model for per-turn decisions, or None to use the offline rules.

    An injected LLM is used as given; otherwise the configured provider, and None when
    that is offline — so the rules need no provider object and no SDK import.
    """
    llm = store.injected_llm
    if llm is None:
        from memfs.agent.llm.registry import choose_provider

        if choose_provider(store.config.llm_provider) == "offline":
            return None
        llm = store.llm
    return None if llm.name == "offline" else llm


class AgentPlanner:
    """The retrieval decision: the model's tool call, or the offline rules."""

    def plan(self, pair: MemoryPair, request: PlanRequest) -> RetrievalPlan:
        from memfs.agent.plan import decide
        from memfs.agent.plan_rules import search_query
        from memfs.agent.requests.model import learned_domains

        from memfs.constraints import classify_in_window
        from memfs.embed_memo import expect_text

        def classify(text: str, wording: str) -> tuple[str, ...]:
            # the classifier's model run is the turn's first: the search's query (the
            # message as the rules rewrite it) rides along, not in a run of its own; the
            # recent window sets the occasion of a request that names no domain
            expect_text(pair.store.embedder, search_query(request.message))
            domains = classify_in_window(pair.store.embedder, text, wording, request.recent)
            # a request the thresholds cannot tell from news ("k whats my order lol"): the
            # learned reading of requests, asked only then
            return domains or learned_domains(pair.store.embedder, text, request.recent)

        from memfs.agent.needs.model import reading

        # the message's vector is the classifier's, remembered by the store's embedder
        needs, threshold = reading(pair.store.embedder)
        return decide(planner_llm(pair.store), request.message, request.recent,
                      request.summary, request.pins, memory_names=request.memory_names,
                      classify=classify, needs=needs, need_threshold=threshold)


class LocalDreamer:
    """Dreams in this process (``memfs dream``, ``MemoryPair.dream()``)."""

    def dream(self, pair: MemoryPair, *, wait: float = 60.0) -> list[str]:
        from memfs.agent.dream.runner import dream_pending

        return dream_pending(pair, wait=wait)


class SubprocessQueue:
    """One detached ``python -m memfs.agent.dream`` per compaction: the library and CLI
    default, so a chat or an ingest never waits for a dream and needs no server."""

    def submit(self, pair: MemoryPair) -> str | None:
        from memfs.agent.dream.runner import spawn_dream

        spawn_dream(pair)
        return None

    def close(self, wait: bool = True) -> None:
        """Nothing to stop: each dream is its own process and outlives this one."""


def queue_from_url(url: str) -> DreamQueue:
    """The dream queue a ``queue`` setting names (``redis://...``: Celery jobs).

    Celery is imported only here, when a queue is configured; with none, nothing about
    dreaming needs Redis."""
    from memfs.agent.jobs.publisher import CeleryQueue

    return CeleryQueue(url)


def default_services(queue: DreamQueue | str | None = None) -> Services:
    """The agent layer's services; ``queue`` is a ``DreamQueue``, a queue URL, or None
    (a detached subprocess per compaction)."""
    if isinstance(queue, str):
        queue = queue_from_url(queue)
    return Services(planner=AgentPlanner(), dreamer=LocalDreamer(),
                    queue=queue or SubprocessQueue(), make_llm=make_llm)


def wired_store(home: str | Path, **kwargs: Any) -> MemoryStore:
    """A store with these services, for the agent layer's own entry points (the dream
    subprocess, evals, the demo), which may not import the composition root above them.
    Apps use ``memfs.MemoryStore``, which is the same wiring."""
    from memfs.store import MemoryStore

    kwargs.setdefault("services", default_services())
    return MemoryStore(home, **kwargs)
