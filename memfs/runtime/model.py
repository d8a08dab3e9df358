"""The embedding model of a long-running process: loaded once, by the first call that
needs it, and never by a call that does not.

``MemoryStore.embedder`` loads lazily but is not meant for threads: two first searches
at once would load the model twice. ``SharedEmbedder`` is the store's embedder in a
server: its ``name`` is known without loading anything (the index folder is named after
it); the model is loaded under a lock on the first ``embed`` or ``dim``. A turn whose
retrieval plan needs no search therefore never loads torch at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from memfs.embed import Embedder, Vectors


class SharedEmbedder:
    """An ``Embedder`` that loads the real one on first use, once, thread-safely."""

    def __init__(self, name: str, load: Callable[[str], Embedder] | None = None) -> None:
        self.name = name
        self._load = load
        self._model: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> Embedder:
        with self._lock:
            if self._model is None:
                if self._load is None:
                    from memfs.embed import default_embedder

                    self._load = default_embedder
                self._model = self._load(self.name)
            return self._model

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def dim(self) -> int:
        return self.model.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.model.embed(texts)
