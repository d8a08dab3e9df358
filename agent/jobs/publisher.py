"""``CeleryQueue``: the dream queue of a store whose config names ``queue = "redis://..."``.

``submit(pair)`` publishes one job per pending compaction event of the pair — not just
the newest, so events left pending by an outage go out with the next compaction. It sits
on the conversation path, so it never blocks on Redis and never raises for it: one
connection attempt with a short timeout, no retries; when the broker is unreachable the
events simply stay pending on disk (that is where they live anyway), a warning says so
on the ``memfs.queue`` logger, and for ``cooldown`` seconds after a failure this process
does not try again (a blackholed broker would otherwise cost every turn the timeout).

A small marker per event (``.memfs/queued/<event>``) records that its job was published,
so a pair with several pending events does not publish them again at every compaction;
after ``republish_after`` seconds (the broker's redelivery time, by default) an event that
is still pending is published again, in case its job was lost with an unpersisted Redis.
A job published twice is harmless: see ``delivery``.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from memfs.agent.jobs.celery_app import QUEUE, REDELIVER_AFTER, TASK, make_app

from memfs.compaction import pending_events
from memfs.config import check_queue_url

if TYPE_CHECKING:
    from celery import Celery

    from memfs.store import MemoryPair

log = logging.getLogger("memfs.queue")
MARKERS = Path(".memfs") / "queued"


class CeleryQueue:
    """Publishes dream jobs to Celery over the Redis broker at ``url``."""

    def __init__(self, url: str, *, cooldown: float = 30.0,
                 republish_after: float = REDELIVER_AFTER) -> None:
        self.url = check_queue_url(url, celery_only=True)
        self.cooldown = cooldown
        self.republish_after = republish_after
        self._app: Celery | None = None
        self._down_until = 0.0
        self._lock = threading.Lock()

    @property
    def app(self) -> Celery:
        """Made once, under the lock: a server's first compactions arrive on several threads
        at once, and celery's lazily built top-level module fails an import racing another
        (``cannot import name 'Celery' from 'celery'``, seen with 40 pairs ingesting)."""
        if self._app is None:
            with self._lock:
                if self._app is None:
                    self._app = make_app(self.url, publisher=True)
        return self._app

    def submit(self, pair: MemoryPair) -> str:
        """Publish a job for each pending event not published recently; never raises for
        the broker (the events stay pending and a warning is logged). Says what it did."""
        due = self._due(pair)
        if not due:
            return "already queued for a worker"
        app = self.app
        from kombu.exceptions import KombuError
        from redis.exceptions import RedisError

        sent = 0
        with self._lock:  # one publisher at a time; the one after a failure sees it
            if time.monotonic() < self._down_until:
                return self._warn(pair, due, "it was unreachable moments ago")
            try:
                with app.connection_for_write() as conn:
                    for event_id in due:
                        app.send_task(TASK, args=[pair.user, pair.character, event_id],
                                      queue=QUEUE, connection=conn, retry=False)
                        _mark(pair.root, event_id)
                        sent += 1
            except (KombuError, RedisError, OSError) as exc:
                self._down_until = time.monotonic() + self.cooldown
                return self._warn(pair, due[sent:], _reason(exc))
        return f"queued for a worker ({sent} job(s) on {_safe(self.url)})"

    def close(self, wait: bool = True) -> None:
        """Nothing runs here: jobs live in Redis, events on disk."""
        if self._app is not None:
            self._app.close()

    def _due(self, pair: MemoryPair) -> list[str]:
        pending = [e.id for e in pending_events(pair.root)]
        folder = pair.root / MARKERS
        if folder.is_dir():
            for stale in set(p.name for p in folder.iterdir()) - set(pending):
                (folder / stale).unlink(missing_ok=True)
        now = time.time()
        return [e for e in pending if not _sent_since(pair.root, e, now - self.republish_after)]

    def _warn(self, pair: MemoryPair, events: list[str], reason: str) -> str:
        log.warning("dream queue %s unreachable (%s): %d compaction event(s) of %s/%s stay "
                    "pending on disk; they are sent with the next compaction, or run "
                    "`memfs dream`", _safe(self.url), reason, len(events), pair.user,
                    pair.character)
        return (f"not queued: the dream queue is unreachable; {len(events)} event(s) stay "
                "pending (`memfs dream` runs them)")


def _mark(root: Path, event_id: str) -> None:
    (root / MARKERS).mkdir(parents=True, exist_ok=True)
    (root / MARKERS / event_id).touch()


def _sent_since(root: Path, event_id: str, since: float) -> bool:
    try:
        return (root / MARKERS / event_id).stat().st_mtime >= since
    except FileNotFoundError:
        return False


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:160]


def _safe(url: str) -> str:
    """The URL without a password, for messages."""
    scheme, _, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rpartition("@")[2]
    return f"{scheme}://{rest}"
