"""The composition root: where the storage layer meets the agent layer.

``memfs.MemoryStore`` is this module's ``MemoryStore``: the storage-layer store
(``memfs/store.py``) whose ``Services`` default to the agent layer's (the retrieval
planner, dreaming, the LLM registry, a subprocess per dream). It is the one place below
the adapters (CLI, server, MCP, UI) that names ``memfs.agent``, and it does so only when
a store first needs its services, so ``memfs pin ls`` never loads the agent layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memfs import store
from memfs.config import check_queue_url, is_celery_queue

if TYPE_CHECKING:
    from memfs.services import DreamQueue, Services


class MemoryStore(store.MemoryStore):
    """A home folder of pairs, wired to the agent layer.

    ``queue=`` is where compactions send dreams: a ``DreamQueue``, a ``redis://...`` URL
    (Celery jobs for ``memfs worker``), or None for the config's ``queue`` setting, and
    with none set, a detached dreaming subprocess per compaction."""

    def __init__(self, *args: Any, queue: DreamQueue | str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if isinstance(queue, str):
            check_queue_url(queue, celery_only=True)
        self._queue = queue

    def _default_services(self) -> Services:
        from memfs.agent.services import default_services

        configured = self.config.queue if is_celery_queue(self.config.queue) else None
        # named here: mypy cannot follow memfs.agent's package-dir, so the call reads as Any
        services: Services = default_services(self._queue or configured)
        return services
