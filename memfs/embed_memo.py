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
EXPECTED = 32
"""Texts announced but not asked for yet (``expect``) that the next model run takes along."""


class RecentEmbedder:
    """An ``Embedder`` that remembers the vectors of the ``size`` texts it saw last."""

    def __init__(self, inner: Embedder, size: int = RECENT) -> None:
        self.inner = inner
        self.name = inner.name
        self.size = size
        self._recent: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()
        self._expected: list[str] = []

    def expect(self, *texts: str) -> None:
        """``texts`` will be asked for soon: embed them with the next batch that goes to the
        model, whoever sends it. A model run here costs mostly the reading of the model's
        weights (a run of three short texts ~1.3 runs of one), so a turn should make one:
        the search announces its query before the index embeds the turn's new messages, and
        ``add_messages`` announces those before the planner's classifier embeds the user's
        message (which would otherwise be a second run)."""
        with self._lock:
            for text in texts:
                if text and text not in self._recent and text not in self._expected:
                    self._expected.append(text)
            del self._expected[:-EXPECTED]

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
                extra = [t for t in self._expected if t not in self._recent]
                self._expected = []
            missing += [t for t in extra if t not in missing]
            fresh = np.asarray(self.inner.embed(missing), dtype=np.float32)
            with self._lock:
                for text, row in zip(missing, fresh):
                    known[text] = self._recent[text] = row.copy()
                while len(self._recent) > self.size:
                    self._recent.popitem(last=False)
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)


def expect_text(embedder: Embedder, *texts: str) -> None:
    """Tell ``embedder`` that ``texts`` come next, if it is one that can use the hint."""
    if isinstance(embedder, RecentEmbedder):
        embedder.expect(*texts)
