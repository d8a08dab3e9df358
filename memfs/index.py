"""The pair's search index: every card, the summary and every past message, kept current.

The index is derived data under ``.memfs/index/<model>/`` (git-ignored): delete it and the
next search rebuilds it. On disk: vectors, keyed by a content hash so unchanged text is
never embedded twice (``vectors/``); the parsed card items of the last indexed commit
(``state.json``); and a snapshot of the whole in-memory index — message columns, BM25
postings, float16 vectors — as of a commit and per-session history offsets
(``snapshot.json`` + ``snap-<generation>.*``), so that a new process, such as a one-shot
``memfs search``, loads it instead of re-reading and re-tokenising every message (110k
items: 0.3 s instead of 4–5 s). Every file is CRC-checked: missing, partial, foreign or
damaged all mean "rebuild", never a wrong answer.

Keeping current is lazy and cheap to check: at search time we compare HEAD's sha and the
sizes of the ``history/*.jsonl`` files with what we indexed. A new HEAD (a pin, a card
write, a revert, a hand-edit commit, a dream merge — all just commits) is diffed against
the last indexed one (``git diff --name-status``); cards and summary are re-read only when
the diff touches them. History files are read from the working tree, from the byte offset
where we stopped, because messages are appended between commits. ``system/`` is never
indexed: it is in context on every turn anyway.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
import shutil
import uuid
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from memfs.atomic import atomic_write, atomic_writer
from memfs.embed import CachedEmbedder, Embedder, Vectors, VectorStore, content_key
from memfs.index_git import (  # noqa: F401  (re-exported: the index's public surface)
    card_and_summary_items,
    changed_paths,
    head_sha,
    history_sizes,
    read_new_messages,
    utc_today,
)
from memfs.index_items import (  # noqa: F401  (re-exported)
    KIND_CODES,
    STATUS_CODES,
    SUMMARY_SPLIT_CHARS,
    Item,
    ItemTable,
    ReconcilePlan,
    card_item,
    message_item,
    outdated_messages,
    summary_items,
)
from memfs.lock import pair_lock
from memfs.ranking import BM25, tokenize

STATE_VERSION = 3
Progress = Callable[[int, int], None]


# -- the in-memory index -----------------------------------------------------------------------


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
        """Row-aligned with ``items``; float16 in memory (see ``ranking.similarities``)."""
        self.status = np.zeros(0, dtype=np.int8)
        self.kinds = np.zeros(0, dtype=np.int8)
        self.expires = np.zeros(0, dtype=np.float64)
        """Ordinal day of a plan's ``expires`` (inf when none): eligibility is vectorised."""
        self.bm25 = BM25()
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
        if add:
            start = len(self.items)
            self.items.extend(add)
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
        if any(ref[0] == "card" for ref in remove) or any(i.kind == "card" for i in add):
            self.outdated, self.live_sources = outdated_messages(self.memory_items())
        if self.dead > 1000 and self.dead > len(self.items) // 3:
            self._compact()

    def _compact(self) -> None:
        keep = sorted(self.position.values())
        items, vectors = [self.items[p] for p in keep], self.vectors[keep]
        self.items, self.position, self.dead = ItemTable(), {}, 0
        self.saved_rows = 0  # the layout changed: worth saving on the next refresh
        self.vectors = np.zeros((0, self.embedder.dim), dtype=np.float16)
        self.status, self.bm25 = np.zeros(0, dtype=np.int8), BM25()
        self.kinds, self.expires = np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.float64)
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
        """Embed what the cache lacks (outside the lock), store it under the lock."""
        def write(keys: Sequence[bytes], vecs: Vectors) -> None:
            with pair_lock(self.root):
                self.store.add(keys, vecs)
                self.store.merge_small()

        cached = CachedEmbedder(self.embedder, self.store, on_progress=progress, write=write)
        self.store.load()
        out = cached.embed([i.index_text for i in items])
        self.last_embedded = cached.embedded
        return out

    last_embedded = 0


def _ordinal(day: str | None) -> float:
    return float(dt.date.fromisoformat(day).toordinal()) if day else float("inf")


def _grow(buffer: np.ndarray[Any, Any], rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Append rows; the backing array doubles so appending one message is not a full copy."""
    base = buffer.base if isinstance(buffer.base, np.ndarray) else None
    used = len(buffer)
    if (base is not None and base.shape[1:] == buffer.shape[1:]
            and len(base) >= used + len(rows) and base.ctypes.data == buffer.ctypes.data):
        base[used:used + len(rows)] = rows
        return base[:used + len(rows)]
    capacity = max(16, 2 * (used + len(rows)))
    fresh = np.zeros((capacity, *buffer.shape[1:]), dtype=buffer.dtype)
    fresh[:used] = buffer
    fresh[used:used + len(rows)] = rows
    return fresh[:used + len(rows)]


def index_folder(root: Path, model: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model).strip("_.")[-80:] or "model"
    return root / ".memfs" / "index" / slug


# -- state on disk ------------------------------------------------------------------------------


def read_state(folder: Path) -> dict[str, Any] | None:
    """``state.json`` of this version, or None when missing, foreign, partial or damaged."""
    data = read_checked(folder / "state.json")
    return data if data is not None and data.get("version") == STATE_VERSION else None


def write_state(folder: Path, head: str | None, items: Sequence[Item]) -> None:
    """Record the commit and the card/summary items indexed from it (atomic rename)."""
    write_checked(folder / "state.json", {
        "version": STATE_VERSION, "head": head,
        "items": [item_dict(i) for i in items if i.kind != "message"]})


def write_checked(path: Path, data: dict[str, Any]) -> None:
    """JSON with its CRC-32 on a first line, written to a temp file and renamed into place:
    a reader sees the old file or the new one, and ``read_checked`` refuses a damaged one
    (a flipped byte in a card's text would otherwise be searched as if it were true)."""
    body = json.dumps(data, ensure_ascii=False).encode("utf-8")
    atomic_write(path, b"%d\n" % zlib.crc32(body) + body)


def read_checked(path: Path) -> dict[str, Any] | None:
    """What ``write_checked`` wrote, or None (missing, partial, damaged: rebuild)."""
    try:
        crc, _, body = path.read_bytes().partition(b"\n")
        if int(crc) != zlib.crc32(body):
            return None
        data = json.loads(body)
    except (OSError, ValueError):  # ValueError: bad JSON, bad UTF-8, bad CRC line
        return None
    return data if isinstance(data, dict) else None


_ITEM_FIELDS = tuple(f.name for f in fields(Item))


def item_dict(item: Item) -> dict[str, Any]:
    """``item`` as JSON-ready fields (``dataclasses.asdict`` deep-copies: 10x slower)."""
    return {name: getattr(item, name) for name in _ITEM_FIELDS}


def item_from_dict(data: dict[str, Any]) -> Item:
    data = dict(data)
    data["entities"] = tuple(data.get("entities") or ())
    data["sources"] = tuple(data.get("sources") or ())
    return Item(**data)


def saved_items(state: dict[str, Any]) -> list[Item] | None:
    """The items of a ``read_state`` answer, or None when they do not parse (rebuild)."""
    try:
        return [item_from_dict(d) for d in state["items"]]
    except _UNREADABLE:
        return None


# -- snapshot: the whole index on disk ----------------------------------------------------------
#
# state.json alone lets a new process skip reading the cards; the snapshot lets it skip
# everything: it holds every row (message columns, BM25 postings, status arrays) and the
# float16 vectors, as of a commit and per-session history offsets. A new process loads it,
# then catches up the usual way (git diff since its commit, history lines past its offsets).

SNAPSHOT = "snapshot.json"
SNAPSHOT_MIN_ROWS = 500
"""Save again once this many rows (or 5%) were added: what a new process re-reads at most."""
_UNREADABLE = (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, EOFError,
               zipfile.BadZipFile)
"""What reading a damaged, partial or foreign file can raise: all of it means rebuild."""
_SESSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def save_snapshot(index: PairIndex) -> None:
    """Save the whole index (and ``state.json``) under the pair lock.

    Arrays go to files named for a new generation, then the manifest is replaced
    atomically, then older generations are deleted: a reader sees the old snapshot or the
    new one. CRC-32s in the manifest make a truncated or damaged file mean "rebuild".
    """
    rows = len(index.items)
    live = np.zeros(rows, dtype=bool)
    live[list(index.position.values())] = True
    arrays: dict[str, Any] = {"kinds": index.kinds, "status": index.status,
                              "expires": index.expires, "live": live,
                              **index.items.to_arrays(), **index.bm25.to_arrays()}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    packed = buffer.getvalue()
    vectors = np.ascontiguousarray(index.vectors, dtype=np.float16)
    generation = uuid.uuid4().hex[:12]
    manifest = {
        "version": STATE_VERSION, "model": index.embedder.name, "dim": index.embedder.dim,
        "generation": generation, "head": index.head, "rows": rows,
        "crc": {"arrays": zlib.crc32(packed), "vectors": zlib.crc32(vectors.data)},
        "cursors": {s: [c.size, c.offset, c.lines, c.crc] for s, c in index.cursors.items()},
        "sessions": index.items.sessions, "roles": index.items.roles,
        "other": [[row, item_dict(item)] for row, item in sorted(index.items.other.items())
                  if index.position.get(item.ref) == row]}
    folder = index.folder
    with pair_lock(index.root):
        atomic_write(folder / f"snap-{generation}.npz", packed)
        with atomic_writer(folder / f"snap-{generation}.vectors.npy") as handle:
            np.save(handle, vectors)
        write_checked(folder / SNAPSHOT, manifest)
        write_state(folder, index.head, index.memory_items())
        # we hold the lock, so no writer is midway: any temp file is a dead writer's
        for path in [*folder.glob("snap-*"), *folder.glob(".*.tmp")]:
            if not path.name.startswith(f"snap-{generation}."):
                path.unlink(missing_ok=True)
    index.saved_rows, index.state_head = rows, index.head


def load_snapshot(index: PairIndex) -> bool:
    """Fill a new, empty ``index`` from the saved snapshot; False (index untouched) when
    there is none usable: missing, of another version or model, partial or damaged."""
    for _attempt in range(2):
        manifest = read_checked(index.folder / SNAPSHOT)
        try:
            if (manifest is None or manifest.get("version") != STATE_VERSION
                    or manifest.get("model") != index.embedder.name
                    or manifest.get("dim") != index.embedder.dim):
                return False
            _install(index, manifest, *_read_snapshot(index.folder, manifest))
        except FileNotFoundError:
            continue  # a writer replaced the snapshot between our reads: read the new one
        except _UNREADABLE:
            return False
        return True
    return False


_Loaded = tuple[ItemTable, BM25, dict[str, np.ndarray[Any, Any]], np.ndarray[Any, Any]]


def _read_snapshot(folder: Path, manifest: dict[str, Any]) -> _Loaded:
    """The snapshot's parts, checked against each other and the manifest (ValueError)."""
    generation, rows = str(manifest["generation"]), int(manifest["rows"])
    packed = (folder / f"snap-{generation}.npz").read_bytes()
    if zlib.crc32(packed) != manifest["crc"]["arrays"]:
        raise ValueError("snapshot: arrays file damaged")
    vectors = np.load(folder / f"snap-{generation}.vectors.npy", mmap_mode="c",
                      allow_pickle=False)
    if (vectors.dtype != np.float16 or vectors.shape != (rows, manifest["dim"])
            or zlib.crc32(vectors.data) != manifest["crc"]["vectors"]):
        raise ValueError("snapshot: vectors file damaged")
    with np.load(io.BytesIO(packed), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    other = {int(row): item_from_dict(data) for row, data in manifest["other"]}
    table = ItemTable.from_arrays(arrays, [str(s) for s in manifest["sessions"]],
                                  [str(r) for r in manifest["roles"]], other)
    bm25 = BM25.from_arrays(arrays)
    if len(table) != rows or len(bm25) != rows or any(
            len(arrays[k]) != rows for k in ("kinds", "status", "expires", "live")):
        raise ValueError("snapshot: parts of different lengths")
    return table, bm25, arrays, vectors


def _install(index: PairIndex, manifest: dict[str, Any], table: ItemTable, bm25: BM25,
             arrays: dict[str, np.ndarray[Any, Any]], vectors: np.ndarray[Any, Any]) -> None:
    """Make ``index`` the snapshot; raises (index unchanged) when the parts do not fit."""
    ids = table.message_ids()
    position: dict[tuple[str, str], int] = {}
    for row in np.flatnonzero(arrays["live"]).tolist():
        mid = ids[row]
        position[("message", mid) if mid is not None else table.other[row].ref] = row
    cursors = {str(s): _Cursor(*(int(x) for x in c)) for s, c in manifest["cursors"].items()}
    if not all(_SESSION_NAME.match(s) for s in cursors):
        raise ValueError("snapshot: bad session name")
    recheck = _rewritten(index.root, cursors)
    # nothing above changed ``index``: any error there leaves it empty, to be rebuilt
    index.items, index.position, index.bm25, index.vectors = table, position, bm25, vectors
    index.kinds = np.array(arrays["kinds"], dtype=np.int8)
    index.status = np.array(arrays["status"], dtype=np.int8)
    index.expires = np.array(arrays["expires"], dtype=np.float64)
    index.dead = len(table) - len(position)
    index.head, index.saved_rows = manifest["head"], len(table)
    index.cursors, index.recheck = cursors, recheck
    index.outdated, index.live_sources = outdated_messages(index.memory_items())


def _rewritten(root: Path, cursors: dict[str, _Cursor]) -> set[str]:
    """Sessions whose history file no longer starts with the bytes the snapshot indexed
    (edited by hand): appends are caught up from the offset, these are read again."""
    found = set()
    for session, cursor in cursors.items():
        try:
            with (root / "history" / f"{session}.jsonl").open("rb") as handle:
                start = handle.read(cursor.offset)
        except FileNotFoundError:
            continue  # the session is dropped as every vanished one is
        if len(start) != cursor.offset or zlib.crc32(start) != cursor.crc:
            found.add(session)
    return found


def drop_index(root: Path, model: str) -> None:
    """Delete one model's index folder (under the lock): ``memfs reindex`` starts here."""
    with pair_lock(root):
        shutil.rmtree(index_folder(root, model), ignore_errors=True)


# -- keeping current -----------------------------------------------------------------------------

_OPEN: dict[tuple[str, str], PairIndex] = {}


def open_index(root: Path, embedder: Embedder) -> PairIndex:
    """This process's index of the pair (kept warm between searches), not yet refreshed."""
    key = (str(root.resolve()), embedder.name)
    index = _OPEN.get(key)
    if index is None or (index.items and not index.folder.exists()):
        index = _OPEN[key] = PairIndex(root, embedder)
    index.embedder = embedder
    return index


def forget_open_indexes() -> None:
    """Drop every warm index of this process (tests; ``reindex``)."""
    _OPEN.clear()


def refresh(index: PairIndex, progress: Progress | None = None) -> ReconcilePlan:
    """Bring ``index`` up to date with HEAD and the history files; returns what changed."""
    plan = ReconcilePlan()
    if index.cold:
        load_snapshot(index)
    head = head_sha(index.root)
    add: list[Item] = []
    remove: list[tuple[str, str]] = []
    head_moved = index.cold or head != index.head
    if head_moved:
        fresh = _memory_items_if_changed(index, head)
        if fresh is not None:
            _diff_memory_items(index, fresh, plan, add, remove)
    _new_history(index, plan, add, remove)
    if add or remove:
        vectors = index.vectors_for(add, progress)
        plan.embedded = index.last_embedded
        index.apply(add, remove, vectors)
    index.head, index.cold = head, False
    if _worth_saving(index):
        save_snapshot(index)
    elif head_moved and index.state_head != head:
        with pair_lock(index.root):
            write_state(index.folder, head, index.memory_items())
        index.state_head = head
    return plan


def _worth_saving(index: PairIndex) -> bool:
    """Save the snapshot when there is none, or when a new process would re-read too much."""
    rows = len(index.items)
    grown = rows - index.saved_rows
    return rows > 0 and (not index.saved_rows or grown >= max(SNAPSHOT_MIN_ROWS, rows // 20))


def _memory_items_if_changed(index: PairIndex, head: str | None) -> list[Item] | None:
    """Card and summary items at ``head``, or None when the index already has them.

    A new process takes them from its snapshot when that is of ``head``, else from
    ``state.json`` when that is of ``head`` or of a commit whose cards ``head`` kept.
    """
    if index.cold:
        if index.saved_rows and index.head == head:
            index.state_head = head  # state.json is written with every snapshot
            return None
        saved = _state_items(index, head)
        if saved is not None:
            return saved
        if not index.saved_rows:
            return card_and_summary_items(index.root, head)
    if _untouched(index.root, index.head, head):
        return None
    return card_and_summary_items(index.root, head)


def _state_items(index: PairIndex, head: str | None) -> list[Item] | None:
    state = read_state(index.folder)
    saved = saved_items(state) if state is not None else None
    if state is None or saved is None:
        return None
    if state.get("head") == head:
        index.state_head = head
        return saved
    return saved if _untouched(index.root, state.get("head"), head) else None


def _untouched(root: Path, old: str | None, new: str | None) -> bool:
    """True when the commits ``old``..``new`` changed no card and not the summary."""
    if old is None or new is None:
        return old == new
    paths = changed_paths(root, old, new)
    if paths is None:
        return False
    return not any(p.startswith("cards/") or p == "summary.md" for p in paths)


def _diff_memory_items(index: PairIndex, fresh: list[Item], plan: ReconcilePlan,
                       add: list[Item], remove: list[tuple[str, str]]) -> None:
    current = {i.ref: i for i in index.live_items() if i.kind != "message"}
    wanted = {i.ref: i for i in fresh}
    for ref, item in wanted.items():
        old = current.get(ref)
        if old is None:
            plan.added.append(ref)
            add.append(item)
        elif old != item:
            plan.changed.append(ref)
            remove.append(ref)
            add.append(item)
    for ref in current.keys() - wanted.keys():
        plan.removed.append(ref)
        remove.append(ref)


def _new_history(index: PairIndex, plan: ReconcilePlan, add: list[Item],
                 remove: list[tuple[str, str]]) -> None:
    """Messages appended since the last refresh (history is read from the working tree)."""
    sizes = history_sizes(index.root)
    for session in sorted((index.cursors.keys() - sizes.keys()) | index.recheck):
        _drop_session(index, session, plan, remove)
    index.recheck.clear()
    for session, size in sorted(sizes.items()):
        cursor = index.cursors.get(session)
        if cursor is not None and cursor.size == size:
            continue
        if cursor is not None and size < cursor.offset:
            _drop_session(index, session, plan, remove)  # rewritten by hand: read it again
            cursor = None
        cursor = cursor or _Cursor()
        messages, cursor.offset, cursor.crc = read_new_messages(
            index.root, session, cursor.offset, cursor.lines, cursor.crc)
        cursor.size, cursor.lines = size, cursor.lines + len(messages)
        index.cursors[session] = cursor
        for msg in messages:
            item = message_item(msg)
            (plan.changed if item.ref in index.position else plan.added).append(item.ref)
            if item.ref in index.position:
                remove.append(item.ref)
            add.append(item)


def _drop_session(index: PairIndex, session: str, plan: ReconcilePlan,
                  remove: list[tuple[str, str]]) -> None:
    index.cursors.pop(session, None)
    for ref in list(index.position):
        if ref[0] == "message" and ref[1].rsplit(":", 1)[0] == session:
            plan.removed.append(ref)
            remove.append(ref)


def reconcile(root: Path, embedder: Embedder, progress: Progress | None = None) -> ReconcilePlan:
    """Bring the pair's index up to date now; the plan says what was added/changed/removed."""
    return refresh(open_index(root, embedder), progress)


def reindex(root: Path, embedder: Embedder, progress: Progress | None = None,
            keep_vectors: bool = True) -> ReconcilePlan:
    """Rebuild from scratch: items re-read from the repository, nothing taken from the old
    index but (unless ``keep_vectors=False``) the content-hash vector cache, which is then
    compacted to the vectors still in use."""
    if keep_vectors:
        with pair_lock(root):
            for name in (SNAPSHOT, "state.json"):
                (index_folder(root, embedder.name) / name).unlink(missing_ok=True)
    else:
        drop_index(root, embedder.name)
    _OPEN.pop((str(root.resolve()), embedder.name), None)
    index = open_index(root, embedder)
    plan = refresh(index, progress)
    with pair_lock(root):
        index.store.compact([content_key(embedder.name, i.index_text) for i in index.live_items()])
    return plan
