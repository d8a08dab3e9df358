"""The worker's sweep: publish again what an outage left pending and nobody will send.

A compaction whose job could not be published (Redis was down) is sent with the pair's
next compaction; but a user who never comes back never compacts again. So every worker
looks through its home now and then for compaction events older than ``older_than`` and
hands their pairs to the publisher, whose markers (``.memfs/queued/``) keep the workers
from all sending the same event: at most one republish per event per ``republish_after``.
A job sent twice is harmless anyway (see ``delivery``).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from memfs.agent.jobs.publisher import CeleryQueue

from memfs.errors import MemfsError
from memfs.store import MemoryStore

log = logging.getLogger("memfs.worker")


def stranded(home: Path, older_than: float) -> list[tuple[str, str]]:
    """(user, character) of every pair with a pending event older than ``older_than`` s."""
    cutoff = time.time() - older_than
    found: dict[tuple[str, str], None] = {}
    for event in home.glob("*/*/.memfs/events/e-*.json"):
        pair_root = event.parents[2]
        try:
            if event.stat().st_mtime < cutoff:
                found[(pair_root.parent.name, pair_root.name)] = None
        except FileNotFoundError:
            continue  # dreamed while we looked
    return list(found)


def sweep(home: Path, queue: CeleryQueue, older_than: float) -> int:
    """Hand every stranded pair to ``queue``; returns how many pairs were handed over."""
    store = MemoryStore(home)
    handed = 0
    for user, character in stranded(home, older_than):
        try:
            queue.submit(store.pair(user, character, create=False))
        except MemfsError as exc:  # a folder that is not a pair (bad id, no repo)
            log.warning("sweep: %s/%s skipped: %s", user, character, exc)
            continue
        handed += 1
    return handed


def sweep_step(home: Path, url: str, every: float, republish_after: float) -> type:
    """A Celery worker bootstep that runs ``sweep`` every ``every`` seconds on the worker's
    own timer (in its main process, between deliveries: no thread to fork under)."""
    from celery import bootsteps

    queue = CeleryQueue(url, republish_after=republish_after)

    def tick() -> None:
        try:
            handed = sweep(home, queue, older_than=every)
        except OSError as exc:
            log.warning("sweep of %s failed: %s", home, exc)
            return
        if handed:
            log.info("sweep: handed %d pair(s) with stranded events to the queue", handed)

    class Sweep(bootsteps.StartStopStep):  # type: ignore[misc]
        requires = {"celery.worker.components:Timer"}

        def start(self, worker: object) -> None:
            worker.timer.call_repeatedly(every, tick)  # type: ignore[attr-defined]

    return Sweep
