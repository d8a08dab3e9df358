"""The in-memory index of one pair and one model: rows, vectors, BM25 and ranking arrays.

What the rows are is ``memfs.index_items``; how they are saved and loaded is
``memfs.index_store``; how they are kept current with the repository is ``memfs.index``.
Besides the items, each row carries what was derived from it when it was written: its
vector, its status and kind codes, its salience and its duplicate group (see
``memfs.salience`` and ``memfs.dedupe``), so that ranking is a few vectorised operations.
"""

from __future__ import annotations

import atexit
import datetime as dt
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memfs.chunks import Pieces, pieces
from memfs.dedupe import DupGroups, dup_key
from memfs.embed import CachedEmbedder, Embedder, Vectors, VectorStore, content_key
from memfs.errors import LockError
from memfs.index_items import KIND_CODES, STATUS_CODES, Item, ItemTable, outdated_messages
from memfs.journal import JournalReader
from memfs.links import TurnLinks
from memfs.lock import pair_lock
from memfs.ranking import BM25, tokenize
from memfs.ranking import grow as _grow
from memfs.salience import learned_limit, message_limit, message_salience
from memfs.similarity import RowMirror, best_similarities, similarities
from memfs.window_files import Stamp

Progress = Callable[[int, int], None]

@dataclass
class _Cursor:
    """How far a session's history file is indexed; ``crc`` is the CRC-32 of its first
    ``offset`` bytes, so a new process can tell an appended file from a rewritten one."""

    size: int = 0
    offset: int = 0
    lines: int = 0
    crc: int = 0


class PairIndex:
    """Items, their vectors, BM25 postings and ranking arrays, for one pair and one model."""

    def __init__(self, root: Path, embedder: Embedder) -> None:
        self.root = root
        self.embedder = embedder
        self.folder = index_folder(root, embedder.name)
        self._store: VectorStore | None = None
        self.items = ItemTable()
        self.position: dict[tuple[str, str], int] = {}
        self.vectors = np.zeros((0, embedder.dim), dtype=np.float16)
        """Row-aligned with ``items``; float16 in memory (see ``memfs.similarity``)."""
        self.status = np.zeros(0, dtype=np.int8)
        self.kinds = np.zeros(0, dtype=np.int8)
        self.expires = np.zeros(0, dtype=np.float64)
        """Ordinal day of a plan's ``expires`` (inf when none): eligibility is vectorised."""
        self.salience = np.zeros(0, dtype=np.float32)
        """Per row, fixed when the row is written: a card's own salience, a message's from
        ``memfs.salience`` (its text, role and vector), 0.5 for the summary."""
        self.limit = np.zeros(0, dtype=np.float32)
        """Per row, fixed when the row is written: how much it sounds like a standing limit
        of the user's, in any domain (``memfs.salience.message_limit``; ``NOT_LIMIT`` for
        the assistant's messages and the summary). The constraint search's candidates."""
        self.learned = np.zeros(0, dtype=np.float32)
        """Per row, fixed when the row is written: the learned limit model's logit for the
        user's messages (``memfs.salience.learned_limit``); the constraint search's other
        candidates."""
        self.learned_ask = np.zeros(0, dtype=np.float32)
        """The same, by the second limit regression (``LimitWeights.aw``: fit with questions
        to an assistant as chat)."""
        self.dupkeys = np.zeros(0, dtype=np.int64)
        """Per row: the message's duplicate key (``memfs.dedupe``), 0 for other rows."""
        self.times = np.zeros(0, dtype=np.float64)
        self.groups = DupGroups()
        """Derived from ``dupkeys``: counts, first/last said, which copy competes."""
        self.links = TurnLinks()
        """Derived from the message columns: each turn's previous and next turn."""
        self.pieces = Pieces.empty(embedder.dim)
        """Vectors of the pieces of long messages (``memfs.chunks``), each with its row."""
        self.bm25 = BM25()
        self.mirrors: dict[str, RowMirror] = {}
        """Distinct-row mirrors of ``vectors`` and of the piece vectors
        (``similarity.RowMirror``); emptied whenever either matrix is replaced rather than
        appended to."""
        self.head: str | None = None
        self.state_head: str | None = None
        """The commit ``state.json`` on disk describes (so a fresh process does not rewrite it)."""
        self.cursors: dict[str, _Cursor] = {}
        self.dead = 0
        self.outdated: frozenset[str] = frozenset()
        """Messages whose memory lives on only in stale or expired cards: what they said is
        no longer true, so search treats them like those cards (see ``outdated_messages``)."""
        self.live_sources: frozenset[str] = frozenset()
        self.cold = True
        """Not refreshed yet in this process: the saved snapshot and state may be used."""
        self.saved_rows = 0
        """Rows of the snapshot on disk this index was loaded from or last saved."""
        self.recheck: set[str] = set()
        """Sessions whose history file no longer starts as the snapshot saw it: re-read."""
        self.journal = JournalReader(root)
        """Which session files were appended to since the last refresh (``memfs.journal``)."""
        self.history_stamp: Stamp | None = None
        self.scanned_at = 0.0
        """When every session file was last asked for its size (``time.monotonic``)."""

    @property
    def store(self) -> VectorStore:
        """The vector cache, opened on first use: a search on a loaded snapshot needs none."""
        if self._store is None:
            self._store = VectorStore(self.folder / "vectors", self.embedder.dim)
        return self._store

    def __len__(self) -> int:
        return len(self.position)

    # -- applying changes ----------------------------------------------------------------

    def apply(self, add: Sequence[Item], remove: Sequence[tuple[str, str]],
              vectors: np.ndarray[Any, Any]) -> None:
        """Remove then append items (``vectors`` row-aligned with ``add``)."""
        for ref in remove:
            pos = self.position.pop(ref, None)
            if pos is not None:
                self.bm25.forget(tokenize(self.items[pos].index_text))
                self.status[pos] = STATUS_CODES["deleted"]
                self.dead += 1
                self.groups.invalidate()
                self.links.invalidate()
        if add:
            start = len(self.items)
            self.items.extend(add)
            self._derive(add, vectors)
            self.vectors = _grow(self.vectors, vectors)
            self.status = _grow(self.status, np.array([STATUS_CODES[i.status] for i in add],
                                                      dtype=np.int8))
            self.kinds = _grow(self.kinds, np.array([KIND_CODES[i.kind] for i in add],
                                                    dtype=np.int8))
            self.expires = _grow(self.expires, np.array([_ordinal(i.expires) for i in add],
                                                        dtype=np.float64))
            for offset, item in enumerate(add):
                self.position[item.ref] = start + offset
                self.bm25.add(tokenize(item.index_text))
            self.links.append(self, start, add)
        if any(ref[0] == "card" for ref in remove) or any(i.kind == "card" for i in add):
            self.outdated, self.live_sources = outdated_messages(self.memory_items())
        if self.dead > 1000 and self.dead > len(self.items) // 3:
            self._compact()

    def _add_pieces(self, start: int, add: Sequence[Item]) -> None:
        """Piece vectors of the long messages among ``add`` (rows ``start..``)."""
        rows, texts = [], []
        for offset, item in enumerate(add):
            if item.kind == "message":
                for text in pieces(item.text):
                    rows.append(start + offset)
                    texts.append(text)
        if not texts:
            return
        known = self._piece_vectors
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        fresh = dict(zip(missing, self.embedder.embed(missing))) if missing else {}
        self.pieces.add(rows, np.array([known.get(t, fresh.get(t)) for t in texts]))
        self._piece_vectors = {}

    def _derive(self, add: Sequence[Item], vectors: np.ndarray[Any, Any]) -> None:
        """The per-row arrays fixed at write time: salience, limit, duplicate key, time,
        pieces."""
        self._add_pieces(len(self.items) - len(add), add)
        salience = np.array([i.salience for i in add], dtype=np.float32)
        messages = [n for n, i in enumerate(add) if i.kind == "message"]
        if messages:
            # the prototypes' vectors come from the cache: a one-shot process that indexes a
            # few new messages does not embed ~100 prototype sentences (0.4-0.6 s) each time
            salience[messages] = message_salience(
                [add[n].text for n in messages], [add[n].role for n in messages],
                np.asarray(vectors)[messages], self.cached_embedder())
        speakers = [i.role if i.kind == "message" else "card" if i.kind == "card" else None
                    for i in add]
        limit = message_limit(speakers, vectors, salience, self.cached_embedder())
        learned = learned_limit(speakers, vectors)
        learned_ask = learned_limit(speakers, vectors, asked=True)
        keys = [dup_key(i.role, i.text) if i.kind == "message" else 0 for i in add]
        self.salience = _grow(self.salience, salience)
        self.limit = _grow(self.limit, limit)
        self.learned = _grow(self.learned, learned)
        self.learned_ask = _grow(self.learned_ask, learned_ask)
        self.dupkeys = _grow(self.dupkeys, np.array(keys, dtype=np.int64))
        self.times = _grow(self.times, np.array([i.time for i in add], dtype=np.float64))
        self.groups.append(self.dupkeys, keys, [i.time for i in add])

    def derived(self) -> tuple[DupGroups, TurnLinks]:
        """Duplicate groups and turn links, (re)built if rows were removed or loaded."""
        live = self.status != STATUS_CODES["deleted"]
        if not self.groups.valid:
            self.groups.build(self.dupkeys, live, self.times)
        if not self.links.valid:
            self.links.build(self.items, live)
        return self.groups, self.links

    def _compact(self) -> None:
        keep = sorted(self.position.values())
        items, vectors = [self.items[p] for p in keep], self.vectors[keep]
        self.items, self.position, self.dead = ItemTable(), {}, 0
        self.saved_rows = 0  # the layout changed: worth saving on the next refresh
        self.vectors = np.zeros((0, self.embedder.dim), dtype=np.float16)
        self.status, self.bm25 = np.zeros(0, dtype=np.int8), BM25()
        self.kinds, self.expires = np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.float64)
        self.salience, self.dupkeys = np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        self.limit = np.zeros(0, dtype=np.float32)
        self.learned = np.zeros(0, dtype=np.float32)
        self.learned_ask = np.zeros(0, dtype=np.float32)
        self.times = np.zeros(0, dtype=np.float64)
        self.groups, self.links = DupGroups(), TurnLinks()
        self.pieces = Pieces.empty(self.embedder.dim)
        self.mirrors = {}
        self.apply(items, [], vectors)

    def is_outdated(self, item: Item) -> bool:
        """An outdated message, or the assistant's reply right after one (it echoes it)."""
        if item.kind != "message" or not self.outdated:
            return False
        if item.id in self.outdated:
            return True
        return (item.role == "assistant" and item.turn is not None and item.id not in self.live_sources
                and f"{item.session}:{item.turn - 1}" in self.outdated)

    def outdated_positions(self) -> list[int]:
        found = []
        for mid in self.outdated:
            session, _, turn = mid.rpartition(":")
            for ref in (mid, f"{session}:{int(turn) + 1}"):
                pos = self.position.get(("message", ref))
                if pos is not None and self.is_outdated(self.items[pos]):
                    found.append(pos)
        return found

    def live_items(self) -> list[Item]:
        return [self.items[p] for p in sorted(self.position.values())]

    def memory_items(self) -> list[Item]:
        """The live card and summary items (no message is turned into an ``Item``)."""
        return [item for row, item in sorted(self.items.other.items())
                if self.position.get(item.ref) == row]

    def vectors_for(self, items: Sequence[Item], progress: Progress | None = None) -> Vectors:
        """Embed what the cache lacks (outside the lock), store it under the lock: a few
        rows (a turn's new message) wait in memory for ``flush_vectors``, a bulk job's
        chunks are written as they come (a crash keeps what was done)."""
        cached = CachedEmbedder(self.embedder, self.store, on_progress=progress,
                                write=self._keep)
        self.store.load()
        texts = [i.index_text for i in items]
        extra = sorted({p for i in items if i.kind == "message" for p in pieces(i.text)})
        out = cached.embed(texts + extra)
        self.last_embedded = cached.embedded
        self._piece_vectors = dict(zip(extra, out[len(texts):]))
        return out[:len(texts)]

    def has_vector(self, text: str) -> bool:
        """Whether the vector cache holds ``text`` (a repeated "ok" is not embedded again)."""
        return self._store is not None and content_key(self.embedder.name, text) in self._store

    def _keep(self, keys: Sequence[bytes], vecs: Vectors) -> None:
        """Stage new vectors in the cache; write them once enough wait."""
        if self.store.stage(keys, vecs) >= STAGED_ROWS:
            self.flush_vectors()
        else:
            _UNFLUSHED.add(self)

    def flush_vectors(self) -> None:
        """Write the staged vectors to the cache on disk (a snapshot save, a full stage,
        the end of the process); a busy lock leaves them for the next flush."""
        if self._store is None or not self._store.staged():
            return
        try:
            with pair_lock(self.root):
                self._store.flush()
                self._store.merge_small()
        except LockError:
            return
        except OSError:  # the pair was deleted (a temporary home at exit): nothing to keep
            self._store = None
        _UNFLUSHED.discard(self)

    def similarities(self, query: Vectors, of: str = "rows") -> Vectors:
        """Cosine of every row (``of="pieces"``: every piece) with the unit ``query``."""
        matrix = self.pieces.vectors if of == "pieces" else self.vectors
        return similarities(matrix, query, self._mirror(of))

    def best_similarities(self, queries: Vectors) -> Vectors:
        """Per row, its best cosine with any of ``queries`` (prototype sentences)."""
        return best_similarities(self.vectors, queries, self._mirror("rows"))

    def _mirror(self, of: str) -> RowMirror:
        if of not in self.mirrors:
            self.mirrors[of] = RowMirror(self.embedder.dim)
        return self.mirrors[of]

    def query_vector(self, text: str) -> Vectors:
        """The query's vector: from the vector cache when the text is indexed (a repeated
        message, or one another process embedded, which the store's recent-text memory
        has not seen), else from the embedder (which remembers what it just embedded)."""
        return np.asarray(self.query_vectors([text])[0], dtype=np.float32)

    def query_vectors(self, texts: list[str]) -> Vectors:
        """Like ``query_vector`` for several texts, the uncached ones in one model run (a
        request's topic words go with the query: one batch of two costs about one run)."""
        out = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        missing = []
        for n, text in enumerate(texts):
            key = content_key(self.embedder.name, text)
            if self._store is not None and key in self._store:
                out[n] = self._store.get([key])[0]
            else:
                missing.append(n)
        if missing:
            out[missing] = self.embedder.embed([texts[n] for n in missing])
        return out

    def cached_embedder(self) -> CachedEmbedder:
        """The embedder behind this pair's vector cache, for fixed sentences such as
        prototypes: a one-shot process does not embed them again each time."""
        return CachedEmbedder(self.embedder, self.store, write=self._keep)

    last_embedded = 0
    _piece_vectors: dict[str, Any] = {}
    """Piece vectors embedded by the last ``vectors_for`` (``apply`` takes them from here)."""


STAGED_ROWS = 64
"""Staged vectors past this are written at once: a segment per 64 new texts, not per turn."""

_UNFLUSHED: weakref.WeakSet[PairIndex] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for index in list(_UNFLUSHED):
        index.flush_vectors()


def _ordinal(day: str | None) -> float:
    return float(dt.date.fromisoformat(day).toordinal()) if day else float("inf")


def index_folder(root: Path, model: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model).strip("_.")[-80:] or "model"
    return root / ".memfs" / "index" / slug

