"""The last few hundred texts a process embedded, kept in memory.

One retrieving turn used to embed the user's message three times: the planner classifies
it (is it a request for a suggestion?), the index embeds it as a new message, and the
search embeds it as the query — 7 ms each on this machine's CPU, the largest share of a
turn after the similarity product. ``RecentEmbedder`` sits in front of the store's
embedder and answers repeats from memory, so each text goes through the model once.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from memfs.embed import Embedder, Vectors

RECENT = 512
"""Texts kept: a turn's message, its query, and headroom for bursts of other calls."""


class RecentEmbedder:
    """An ``Embedder`` that remembers the vectors of the ``size`` texts it saw last."""

    def __init__(self, inner: Embedder, size: int = RECENT) -> None:
        self.inner = inner
        self.name = inner.name
        self.size = size
        self._recent: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._expected: str | None = None
        self._inflight: dict[str, Future[None]] = {}
        """Texts a background ``prefetch`` is embedding right now."""
        self._worker: ThreadPoolExecutor | None = None
        _LIVE.add(self)

    def prefetch(self, texts: Sequence[str]) -> None:
        """Start embedding ``texts`` in the background; a later ``embed`` of them waits
        for that run instead of starting its own.

        A turn's new message is written and fsynced before its search embeds it; the
        model run (~6 ms) and the fsync (~2 ms, waiting on the disk) need not take turns.
        Whatever fails here is embedded again in the foreground, so nothing depends on it.
        """
        with self._lock:
            todo = [t for t in dict.fromkeys(texts)
                    if t not in self._recent and t not in self._inflight]
            if not todo:
                return
            done: Future[None] = Future()
            for text in todo:
                self._inflight[text] = done
            if self._worker is None:
                self._worker = ThreadPoolExecutor(1, thread_name_prefix="memfs-prefetch")
            worker = self._worker
        worker.submit(self._run_prefetch, todo, done)

    def _run_prefetch(self, todo: list[str], done: Future[None]) -> None:
        try:
            fresh = np.asarray(self.inner.embed(todo), dtype=np.float32)
        except BaseException as exc:  # the foreground embeds them itself
            with self._lock:
                for text in todo:
                    self._inflight.pop(text, None)
            done.set_exception(exc)
            return
        with self._lock:
            self._remember(todo, fresh)
            for text in todo:
                self._inflight.pop(text, None)
        done.set_result(None)

    def _remember(self, texts: Sequence[str], rows: Vectors) -> dict[str, Vectors]:
        """Keep ``rows`` as the vectors of ``texts`` (caller holds the lock)."""
        out = {}
        for text, row in zip(texts, rows):
            out[text] = self._recent[text] = row.copy()
        while len(self._recent) > self.size:
            self._recent.popitem(last=False)
        return out

    def _after_fork(self) -> None:
        """A forked child (a Celery worker) has none of the parent's threads: a lock or
        run the parent's prefetch held would never be released in it."""
        self._lock = threading.Lock()
        self._inflight, self._worker = {}, None

    def expect(self, text: str) -> None:
        """``text`` will be asked for soon: embed it with the next batch that goes to the
        model. A search knows its query before the index embeds the turn's new message;
        one run of two texts costs ~1.3 runs of one."""
        with self._lock:
            self._expected = None if text in self._recent else text

    @property
    def dim(self) -> int:
        return self.inner.dim  # may load the model (``SharedEmbedder``): only when asked

    @dim.setter
    def dim(self, value: int) -> None:
        self.inner.dim = value

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts or len(texts) > self.size:  # a bulk job (an ingest, a rebuild)
            return self.inner.embed(texts)
        known = self._known(texts)
        if len(known) < len(set(texts)):
            self._wait_for(texts, known)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            with self._lock:
                extra, self._expected = self._expected, None
            if extra is not None and extra not in missing and extra not in self._inflight:
                missing.append(extra)
            fresh = np.asarray(self.inner.embed(missing), dtype=np.float32)
            with self._lock:
                known.update(self._remember(missing, fresh))
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)

    def _known(self, texts: Sequence[str]) -> dict[str, Vectors]:
        with self._lock:
            known = {t: self._recent[t] for t in texts if t in self._recent}
            for text in known:
                self._recent.move_to_end(text)
        return known

    def _wait_for(self, texts: Sequence[str], known: dict[str, Vectors]) -> None:
        """Take what a background prefetch is embedding from it, once it is done."""
        with self._lock:
            runs = {id(f): f for t in texts if t not in known
                    for f in [self._inflight.get(t)] if f is not None}
        for run in runs.values():
            if run.exception() is None:  # waits; a failed run's texts are embedded here
                known.update(self._known([t for t in texts if t not in known]))


_LIVE: weakref.WeakSet[RecentEmbedder] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for embedder in list(_LIVE):
        embedder._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def prefetch_texts(embedder: Embedder, texts: Sequence[str]) -> None:
    """Start embedding ``texts`` in the background, if ``embedder`` can."""
    if isinstance(embedder, RecentEmbedder):
        embedder.prefetch(texts)


def expect_text(embedder: Embedder, text: str) -> None:
    """Tell ``embedder`` that ``text`` comes next, if it is one that can use the hint."""
    if isinstance(embedder, RecentEmbedder):
        embedder.expect(text)
