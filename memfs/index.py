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
sizes of the session files appended to since the last look (``memfs.journal`` names them;
every file is asked only now and then, see ``RESCAN_S``) with what we indexed. A new HEAD (a pin, a card
write, a revert, a hand-edit commit, a dream merge — all just commits) is diffed against
the last indexed one (``git diff --name-status``); cards and summary are re-read only when
the diff touches them. History files are read from the working tree, from the byte offset
where we stopped, because messages are appended between commits. ``system/`` is never
indexed: it is in context on every turn anyway.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from memfs.embed import Embedder, content_key
from memfs.embed_memo import expect_text
from memfs.errors import BadInputError
from memfs.history import is_placeholder
from memfs.index_git import (  # noqa: F401  (re-exported: the index's public surface)
    card_and_summary_items,
    changed_paths,
    head_sha,
    history_sizes,
    read_new_messages,
    session_sizes,
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
from memfs.index_store import (  # noqa: F401  (re-exported)
    SNAPSHOT,
    STATE_VERSION,
    drop_index,
    load_snapshot,
    read_checked,
    read_state,
    save_snapshot,
    saved_items,
    write_checked,
    write_state,
)
from memfs.lock import pair_lock
from memfs.pair_index import PairIndex, Progress, _Cursor, index_folder  # noqa: F401
from memfs.window_files import Stamp

SNAPSHOT_MIN_ROWS = 500
"""Save again once this many rows (or 5%) were added: what a new process re-reads at most."""
BUILD_CHUNK = 8192
"""Rows embedded and appended at a time when many arrive at once (a first search on a long
imported history, a reindex). The float32 copies that the embedding and the salience step make
are then of one chunk, not of every message: building a 100k-message index from history
peaked at 953 MB against 454-606 MB for loading its snapshot (BENCHMARKS.md, issue 11)."""


# -- keeping current -----------------------------------------------------------------------------

_OPEN: OrderedDict[tuple[str, str], PairIndex] = OrderedDict()
_OPEN_LOCK = threading.Lock()
_OPEN_LIMIT: list[int | None] = [None]


def open_index(root: Path, embedder: Embedder) -> PairIndex:
    """This process's index of the pair (kept warm between searches), not yet refreshed.

    With a limit set (``set_open_limit``, a server's ``--max-pairs``), the least recently
    opened indexes are dropped past it; such a pair loads again from its snapshot."""
    key = (str(root.resolve()), embedder.name)
    with _OPEN_LOCK:
        index = _OPEN.get(key)
        if index is None or (index.items and not index.folder.exists()):
            index = _OPEN[key] = PairIndex(root, embedder)
        _OPEN.move_to_end(key)
        evicted = _evict(_OPEN_LIMIT[0])
    for old in evicted:  # outside our lock: flushing takes the pair's
        old.flush_vectors()
    index.embedder = embedder
    return index


def set_open_limit(limit: int | None) -> None:
    """Keep at most ``limit`` warm indexes in this process (None: no bound)."""
    if limit is not None and limit < 1:
        raise BadInputError(f"max pairs: must be at least 1 (got {limit})")
    with _OPEN_LOCK:
        _OPEN_LIMIT[0] = limit
        evicted = _evict(limit)
    for old in evicted:
        old.flush_vectors()


def _evict(limit: int | None) -> list[PairIndex]:
    """Drop the least recently opened indexes past ``limit`` (caller holds the lock)."""
    out = []
    while limit is not None and len(_OPEN) > limit:
        out.append(_OPEN.popitem(last=False)[1])
    return out


def announce(root: Path, messages: Sequence[tuple[str, str]]) -> None:
    """A turn's new (role, text) messages, to be indexed at the next search: those the warm
    index of the pair has no vector for ride with the next model run of its embedder
    (``RecentEmbedder.expect``). Without a warm index (a one-shot command, a pair not
    searched yet) nothing happens: no model is loaded for this."""
    key = str(root.resolve())
    with _OPEN_LOCK:
        index = next((i for (path, _), i in _OPEN.items() if path == key), None)
    if index is not None:
        expect_text(index.embedder, *(text for role, text in messages
                                      if not is_placeholder(role, text)
                                      and not index.has_vector(text)))


def open_index_count() -> int:
    """How many pair indexes this process keeps warm."""
    return len(_OPEN)


def forget_open_indexes() -> None:
    """Drop every warm index of this process (tests; ``reindex``)."""
    with _OPEN_LOCK:
        dropped = list(_OPEN.values())
        _OPEN.clear()
    for index in dropped:
        index.flush_vectors()


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
    _new_history(index, plan, add, remove, head_moved)
    if add or remove:
        for start in range(0, max(len(add), 1), BUILD_CHUNK):
            part = add[start:start + BUILD_CHUNK]
            vectors = index.vectors_for(part, _progress_from(progress, start, len(add)))
            plan.embedded += index.last_embedded
            index.apply(part, remove if start == 0 else (), vectors)
    index.head, index.cold = head, False
    if _worth_saving(index):
        save_snapshot(index)
    elif head_moved and index.state_head != head:
        with pair_lock(index.root):
            write_state(index.folder, head, index.memory_items())
        index.state_head = head
    return plan


def _progress_from(progress: Progress | None, start: int, total: int) -> Progress | None:
    """``progress`` for the chunk at ``start`` of ``total`` rows: done and total in rows of
    the whole refresh (the embedder counts the chunk's texts it had to embed)."""
    if progress is None:
        return None
    size = min(BUILD_CHUNK, total - start)

    def report(done: int, missing: int) -> None:
        progress(start + (size * done // missing if missing else size), total)
    return report


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


RESCAN_S = 30.0
"""The longest a warm index goes without asking every session file for its size. Between
full scans it looks only at the files the journal names (``memfs.journal``: every append
through memfs), so a turn's cost does not grow with the number of sessions; what the
journal cannot see, a session file edited in place by hand, is picked up within this."""


def _history_to_read(index: PairIndex, head_moved: bool) -> tuple[dict[str, int], bool]:
    """Sizes of the session files to look at, and whether that is every one of them: all
    of them when the index is new, HEAD moved, ``history/`` gained or lost a file, the
    journal cannot be trusted, or ``RESCAN_S`` passed; else the ones appended to since."""
    now = time.monotonic()
    folder = Stamp.of(index.root / "history")
    named = index.journal.since()
    if (named is None or head_moved or folder != index.history_stamp
            or now - index.scanned_at > RESCAN_S):
        index.journal.start()
        index.history_stamp, index.scanned_at = folder, now
        return history_sizes(index.root), True
    return session_sizes(index.root, named | index.recheck), False


def _new_history(index: PairIndex, plan: ReconcilePlan, add: list[Item],
                 remove: list[tuple[str, str]], head_moved: bool) -> None:
    """Messages appended since the last refresh (history is read from the working tree)."""
    sizes, every = _history_to_read(index, head_moved)
    gone = (index.cursors.keys() - sizes.keys()) if every else set()
    for session in sorted(gone | index.recheck):
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
            if is_placeholder(msg.role, msg.content):
                continue  # the offline chat's "not a real reply": not memory
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
    old = _OPEN.pop((str(root.resolve()), embedder.name), None)
    if old is not None and keep_vectors:
        old.flush_vectors()
    index = open_index(root, embedder)
    plan = refresh(index, progress)
    with pair_lock(root):
        index.store.compact([content_key(embedder.name, i.index_text) for i in index.live_items()])
    return plan
