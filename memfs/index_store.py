"""The index on disk: ``state.json`` and the snapshot of the whole in-memory index.

state.json alone lets a new process skip reading the cards; the snapshot lets it skip
everything: it holds every row (message columns, BM25 postings, status arrays, derived
per-row arrays) and the float16 vectors, as of a commit and per-session history offsets.
A new process loads it, then catches up the usual way (git diff since its commit, history
lines past its offsets). Every file is CRC-checked: missing, partial, foreign or damaged
all mean "rebuild", never a wrong answer.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import uuid
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from memfs.atomic import atomic_write, atomic_writer
from memfs.chunks import Pieces
from memfs.index_items import Item, ItemTable, outdated_messages
from memfs.lock import pair_lock
from memfs.pair_index import PairIndex, _Cursor, index_folder
from memfs.ranking import BM25

STATE_VERSION = 7
"""4: rows carry write-time salience and duplicate keys (issue 12). 5: and the write-time
limit score (``PairIndex.limit``, issue 12 sixth round). 6: and the learned limit score
(``PairIndex.learned``, stop 35). 7: and the second one (``PairIndex.learned_ask``, stop
38): an older snapshot is rebuilt."""

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



SNAPSHOT = "snapshot.json"
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
                              "salience": index.salience, "limit": index.limit,
                              "learned": index.learned, "learned_ask": index.learned_ask,
                              "dupkeys": index.dupkeys,
                              "piece_parent": index.pieces.parent,
                              "piece_vectors": index.pieces.vectors,
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
            len(arrays[k]) != rows for k in ("kinds", "status", "expires", "live", "salience",
                                             "limit", "learned", "learned_ask",
                                             "dupkeys")):
        raise ValueError("snapshot: parts of different lengths")
    parent = arrays["piece_parent"]
    if (len(parent) != len(arrays["piece_vectors"]) or (len(parent) and (
            parent.min() < 0 or parent.max() >= rows or np.any(np.diff(parent) < 0)))):
        raise ValueError("snapshot: pieces do not fit the rows")
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
    index.mirrors = {}
    index.kinds = np.array(arrays["kinds"], dtype=np.int8)
    index.status = np.array(arrays["status"], dtype=np.int8)
    index.expires = np.array(arrays["expires"], dtype=np.float64)
    index.salience = np.array(arrays["salience"], dtype=np.float32)
    index.limit = np.array(arrays["limit"], dtype=np.float32)
    index.learned = np.array(arrays["learned"], dtype=np.float32)
    index.learned_ask = np.array(arrays["learned_ask"], dtype=np.float32)
    index.dupkeys = np.array(arrays["dupkeys"], dtype=np.int64)
    index.times = np.array(table.column("time"), dtype=np.float64)
    index.groups.invalidate()
    index.links.invalidate()
    index.pieces = Pieces(np.asarray(arrays["piece_vectors"], dtype=np.float16),
                          np.asarray(arrays["piece_parent"], dtype=np.int32))
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

