"""The last few hundred texts a process embedded, kept in memory.

One retrieving turn used to embed the user's message three times: the planner classifies
it (is it a request for a suggestion?), the index embeds it as a new message, and the
search embeds it as the query — 7 ms each on this machine's CPU, the largest share of a
turn after the similarity product. ``RecentEmbedder`` sits in front of the store's
embedder and answers repeats from memory, so each text goes through the model once.

A turn that will search also need not wait for its one model run: ``prefetch`` starts it
in a background thread as soon as the user's message arrives, so it runs while that
message is fsynced and the context is assembled (onnxruntime releases the GIL), and the
search takes the vectors when it gets there (``embed`` waits for texts in flight rather
than running them again).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memfs.embed import Embedder, Vectors

RECENT = 512
"""Texts kept: a turn's message, its query, and headroom for bursts of other calls."""
EXPECTED = 32
"""Texts announced but not asked for yet (``expect``) that the next model run takes along."""
LOG = logging.getLogger("memfs.embed")


class RecentEmbedder:
    """An ``Embedder`` that remembers the vectors of the ``size`` texts it saw last."""

    def __init__(self, inner: Embedder, size: int = RECENT) -> None:
        self.inner = inner
        self.name = inner.name
        self.size = size
        self._recent: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._expected: list[str] = []
        self._flight: dict[str, threading.Event] = {}
        """Texts a background run (``prefetch``) is embedding → set when it is done."""

    def expect(self, *texts: str) -> None:
        """``texts`` will be asked for soon: embed them with the next batch that goes to the
        model, whoever sends it. A model run here costs mostly the reading of the model's
        weights (a run of three short texts ~1.3 runs of one), so a turn should make one:
        the search announces its query before the index embeds the turn's new messages, and
        ``add_messages`` announces those before the planner's classifier embeds the user's
        message (which would otherwise be a second run)."""
        with self._lock:
            for text in texts:
                if (text and text not in self._recent and text not in self._expected
                        and text not in self._flight):
                    self._expected.append(text)
            del self._expected[:-EXPECTED]

    def prefetch(self) -> None:
        """Run the model on the expected texts now, in a background thread, instead of in
        the next ``embed`` call. For a turn that will search: ``add_messages`` announces
        the user's message and the query the planner foresees for it, and calls this
        before it writes and fsyncs the message; by the time the search asks, the run has
        overlapped the fsync and the context's other work. The thread touches nothing but
        this object's memory, and a failure only means the texts are embedded when asked."""
        with self._lock:
            texts = [t for t in self._expected if t not in self._recent and t not in self._flight]
            self._expected = []
            if not texts:
                return
            done = threading.Event()
            for text in texts:
                self._flight[text] = done
        threading.Thread(target=self._run_ahead, args=(texts, done), daemon=True,
                         name="memfs-prefetch").start()

    def _run_ahead(self, texts: list[str], done: threading.Event) -> None:
        try:
            fresh = np.asarray(self.inner.embed(texts), dtype=np.float32)
            with self._lock:
                self._remember(texts, fresh)
        except Exception as exc:  # noqa: BLE001 - the caller embeds them itself when asked
            LOG.debug("prefetch of %d texts failed: %s", len(texts), exc)
        finally:
            with self._lock:
                for text in texts:
                    if self._flight.get(text) is done:
                        del self._flight[text]
            done.set()

    def _remember(self, texts: Sequence[str], rows: Vectors) -> dict[str, Vectors]:
        """Keep ``rows`` as the vectors of ``texts`` (under the lock); returns them."""
        out = {}
        for text, row in zip(texts, rows):
            out[text] = self._recent[text] = row.copy()
            self._recent.move_to_end(text)
        while len(self._recent) > self.size:
            self._recent.popitem(last=False)
        return out

    @property
    def dim(self) -> int:
        return self.inner.dim  # may load the model (``SharedEmbedder``): only when asked

    @dim.setter
    def dim(self, value: int) -> None:
        self.inner.dim = value

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts or len(texts) > self.size:  # a bulk job (an ingest, a rebuild)
            return self.inner.embed(texts)
        with self._lock:
            known = {t: self._recent[t] for t in texts if t in self._recent}
            for text in known:
                self._recent.move_to_end(text)
            waiting = {t: self._flight[t] for t in texts if t not in known and t in self._flight}
        missing = list(dict.fromkeys(t for t in texts if t not in known and t not in waiting))
        if missing:
            with self._lock:
                extra = [t for t in self._expected
                         if t not in self._recent and t not in self._flight]
                self._expected = []
            missing += [t for t in extra if t not in missing]
            fresh = np.asarray(self.inner.embed(missing), dtype=np.float32)
            with self._lock:
                known.update(self._remember(missing, fresh))
        for text, done in waiting.items():  # a background run has them: wait, not run again
            done.wait()
            with self._lock:
                row = self._recent.get(text)
            if row is None:  # that run failed (or the text was pushed out since)
                row = np.asarray(self.inner.embed([text]), dtype=np.float32)[0]
            known[text] = row
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)


def expect_text(embedder: Embedder, *texts: str, now: bool = False) -> None:
    """Tell ``embedder`` that ``texts`` come next, if it is one that can use the hint;
    ``now``: start their model run at once, in the background (``prefetch``)."""
    if isinstance(embedder, RecentEmbedder):
        embedder.expect(*texts)
        if now:
            embedder.prefetch()
