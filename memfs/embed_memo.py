"""The last few hundred texts a process embedded, kept in memory.

One retrieving turn used to embed the user's message three times: the planner classifies
it (is it a request for a suggestion?), the index embeds it as a new message, and the
search embeds it as the query — 7 ms each on this machine's CPU, the largest share of a
turn after the similarity product. ``RecentEmbedder`` sits in front of the store's
embedder and answers repeats from memory, so each text goes through the model once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

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
        with self._lock:
            known = {t: self._recent[t] for t in texts if t in self._recent}
            for text in known:
                self._recent.move_to_end(text)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            with self._lock:
                extra, self._expected = self._expected, None
            if extra is not None and extra not in missing:
                missing.append(extra)
            fresh = np.asarray(self.inner.embed(missing), dtype=np.float32)
            with self._lock:
                for text, row in zip(missing, fresh):
                    known[text] = self._recent[text] = row.copy()
                while len(self._recent) > self.size:
                    self._recent.popitem(last=False)
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)


def expect_text(embedder: Embedder, text: str) -> None:
    """Tell ``embedder`` that ``text`` comes next, if it is one that can use the hint."""
    if isinstance(embedder, RecentEmbedder):
        embedder.expect(text)
