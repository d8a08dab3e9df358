"""Dreams on a bounded pool of worker threads: the ``DreamQueue`` of ``memfs serve``.

A compaction in a server must not start one OS process per event (a busy server would
fork hundreds of Pythons, each loading the agent layer) nor wait for the dream. So
``submit`` only records the pair and returns; ``workers`` threads dream the pairs one at
a time each. Per pair there is at most one job: a pair already waiting is not queued
twice, and a pair being dreamed is dreamed once more afterwards (its new events were
written after the running dream listed them). The backlog is therefore bounded by the
number of pairs, whatever the rate of compactions.

Nothing is lost by stopping: the work is the pending events on disk (``.memfs/events/``),
not the queue. ``close()`` drops what has not started (those events stay pending; the
next dream of the pair, here or in ``memfs dream``, takes them) and lets running dreams
finish.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memfs.errors import MemfsError

if TYPE_CHECKING:
    from memfs.store import MemoryPair

log = logging.getLogger("memfs.runtime.pool")


@dataclass
class PoolStats:
    """Counters for ``/v1/health`` and the load test."""

    submitted: int = 0
    coalesced: int = 0
    runs: int = 0
    merges: int = 0
    errors: int = 0

    def to_json(self) -> dict[str, int]:
        return {"submitted": self.submitted, "coalesced": self.coalesced, "runs": self.runs,
                "merges": self.merges, "errors": self.errors}


class ThreadPoolQueue:
    """A ``DreamQueue``: ``workers`` threads, one job per pair at a time."""

    def __init__(self, workers: int = 2, wait: float = 30.0) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self.wait = wait
        """How long a dream waits for another process already dreaming the same pair."""
        self.stats = PoolStats()
        self._cv = threading.Condition()
        self._queued: OrderedDict[str, MemoryPair] = OrderedDict()
        self._running: set[str] = set()
        self._again: set[str] = set()
        self._closed = False
        self._threads: list[threading.Thread] = []

    # -- the DreamQueue protocol -----------------------------------------------------------

    def submit(self, pair: MemoryPair) -> None:
        key = str(pair.root)
        with self._cv:
            if self._closed:
                return  # shutting down: the event stays pending on disk
            self.stats.submitted += 1
            if key in self._running:
                self._again.add(key)
                self.stats.coalesced += 1
            elif key in self._queued:
                self.stats.coalesced += 1
            else:
                self._queued[key] = pair
                self._start_workers()
                self._cv.notify()

    def close(self, wait: bool = True) -> None:
        """Start no more dreams; with ``wait``, let the running ones finish.

        The flag is set before the lock is taken, and ``wait=False`` never blocks on the
        lock, so a signal handler may call this (a server's SIGTERM: nothing queued starts
        while in-flight requests finish)."""
        self._closed = True
        if not self._cv.acquire(blocking=wait):
            return
        try:
            dropped = len(self._queued)
            self._queued.clear()
            self._again.clear()
            self._cv.notify_all()
        finally:
            self._cv.release()
        if dropped:
            log.info("dream pool closing: %d pair(s) not started stay pending", dropped)
        if wait:
            for thread in self._threads:
                thread.join()

    # -- for health checks, tests and the load test ----------------------------------------

    def snapshot(self) -> dict[str, int]:
        with self._cv:
            return {"workers": self.workers, "queued": len(self._queued),
                    "running": len(self._running), **self.stats.to_json()}

    def drain(self, timeout: float = 60.0) -> bool:
        """Wait until nothing is queued or running; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while self._queued or self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cv.wait(min(left, 0.1))
            return True

    # -- workers -----------------------------------------------------------------------------

    def _start_workers(self) -> None:
        """Threads start with the first job (caller holds the condition)."""
        while len(self._threads) < self.workers:
            thread = threading.Thread(target=self._work, name=f"memfs-dream-{len(self._threads)}",
                                      daemon=True)
            self._threads.append(thread)
            thread.start()

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._queued and not self._closed:
                    self._cv.wait()
                if self._closed:
                    return
                key, pair = self._queued.popitem(last=False)
                self._running.add(key)
            merges = self._dream(pair)
            with self._cv:
                self._running.discard(key)
                self.stats.runs += 1
                self.stats.merges += merges
                if key in self._again and not self._closed:
                    self._again.discard(key)
                    self._queued[key] = pair
                self._cv.notify_all()

    def _dream(self, pair: MemoryPair) -> int:
        """One dream run; a worker thread survives whatever one pair's dream raises."""
        try:
            return len(pair.dream(wait=self.wait))
        except MemfsError as exc:
            self._count_error()
            log.warning("dream of %s/%s failed, its events stay pending: %s", pair.user,
                        pair.character, exc)
        except Exception:  # the pool is a boundary, like the CLI: a bug is logged, not fatal
            self._count_error()
            log.exception("dream of %s/%s crashed; its events stay pending", pair.user,
                          pair.character)
        return 0

    def _count_error(self) -> None:
        with self._cv:
            self.stats.errors += 1
