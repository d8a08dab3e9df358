"""Which ``DreamQueue`` a process uses, chosen by one setting.

``make_queue(None)`` (no queue configured) is the bounded thread pool of this process;
``make_queue("threads://?workers=4")`` sizes it. A ``redis://`` URL sends every dream to
the Celery + Redis queue that ``memfs worker`` processes consume (``memfs.agent.jobs``);
Celery is imported only then.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from memfs.config import check_queue_url
from memfs.errors import BadInputError
from memfs.runtime.pool import ThreadPoolQueue
from memfs.services import DreamQueue

DEFAULT_WORKERS = 2


def make_queue(url: str | None = None, *, workers: int | None = None) -> DreamQueue:
    """The dream queue for ``url`` (``--queue``, ``queue`` in config.toml, ``$MEMFS_QUEUE``)."""
    if not url:
        return ThreadPoolQueue(workers or DEFAULT_WORKERS)
    parts = urlsplit(url)
    if parts.scheme == "threads":
        return ThreadPoolQueue(workers or _workers(parts.query))
    if parts.scheme in ("redis", "rediss"):
        from memfs.agent.services import queue_from_url

        queue: DreamQueue = queue_from_url(check_queue_url(url, celery_only=True))
        return queue
    raise BadInputError(f"queue: {url!r}: expected redis://host:port/db or threads://")


def _workers(query: str) -> int:
    values = parse_qs(query).get("workers", [str(DEFAULT_WORKERS)])
    try:
        count = int(values[0])
    except ValueError:
        raise BadInputError(f"queue: workers: must be a whole number (got {values[0]!r})") from None
    if count < 1:
        raise BadInputError(f"queue: workers: must be at least 1 (got {count})")
    return count
