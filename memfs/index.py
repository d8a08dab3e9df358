"""The pair's search index: every card, the summary and every past message, kept current.

The index is derived data under ``.memfs/index/<model>/`` (git-ignored): delete it and the
next search rebuilds it. What is slow to recompute is kept on disk — vectors, keyed by a
content hash so unchanged text is never embedded twice, and the parsed card items of the
last indexed commit. What is cheap is recomputed: messages are re-read from ``history/``.

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
import json
import os
import re
import shutil
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from memfs import history
from memfs.cards import Card
from memfs.cardstore import load_cards
from memfs.embed import CachedEmbedder, Embedder, Vectors, VectorStore, content_key
from memfs.errors import BadInputError, GitError
from memfs.gitio import run_git
from memfs.lock import pair_lock
from memfs.ranking import BM25, names, tokenize

STATE_VERSION = 2
SUMMARY_SPLIT_CHARS = 1200
STATUS_CODES = {"active": 0, "stale": 1, "expired": 2, "deleted": 3}
KIND_CODES = {"card": 0, "summary": 1, "message": 2}
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Item:
    """One searchable record. ``text`` is what a hit shows; ``index_text`` what is embedded."""

    kind: str  # card | summary | message
    id: str
    path: str
    text: str
    index_text: str
    status: str = "active"
    type: str | None = None
    salience: float = 0.5
    time: float = 0.0
    """Seconds since the epoch: a card's last update, a message's timestamp."""
    expires: str | None = None
    valid_from: str | None = None
    entities: tuple[str, ...] = ()
    session: str | None = None
    turn: int | None = None
    role: str | None = None
    sources: tuple[str, ...] = ()
    """A card's provenance as message ids (``<session>:<turn>``)."""

    @property
    def ref(self) -> tuple[str, str]:
        return (self.kind, self.id)


@dataclass
class ReconcilePlan:
    """What a refresh changed, by item reference ``(kind, id)``."""

    added: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)
    embedded: int = 0
    """Texts that went through the model (the rest came from the vector cache)."""

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


# -- items from memory files (pure) --------------------------------------------------------------


def card_item(card: Card) -> Item:
    when = card.updated or card.created
    extra = [e for e in card.entities if e.lower() != "user"]
    index_text = card.body + (f"\n({', '.join(extra)})" if extra else "")
    return Item("card", card.id, card.path, card.body, index_text, status=card.status,
                type=card.type, salience=card.salience, time=when.timestamp(),
                expires=card.expires.isoformat() if card.expires else None,
                valid_from=card.valid_from.isoformat() if card.valid_from else None,
                entities=tuple(sorted({e.lower() for e in card.entities} | names(card.body))),
                sources=tuple(f"{card.source.session}:{t}" for t in card.source.turns)
                if card.source else ())


def summary_items(text: str, when: float) -> list[Item]:
    """The summary, as one item, or one per paragraph when it is long."""
    text = text.strip()
    if not text:
        return []
    parts = [text] if len(text) <= SUMMARY_SPLIT_CHARS else [
        p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    ids = ["summary"] if len(parts) == 1 else [f"summary:{i + 1}" for i in range(len(parts))]
    return [Item("summary", i, "summary.md", p, p, time=when, salience=0.5,
                 entities=tuple(sorted(names(p)))) for i, p in zip(ids, parts)]


def message_item(msg: history.Message) -> Item:
    return Item("message", msg.id, f"history/{msg.session}.jsonl", msg.content, msg.content,
                time=msg.ts.timestamp(), session=msg.session, turn=msg.turn, role=msg.role,
                entities=tuple(sorted(names(msg.content))))


def outdated_messages(items: Sequence[Item]) -> tuple[frozenset[str], frozenset[str]]:
    """(outdated, live): message ids that are sources of a stale or expired card and of no
    active one, and the ids that are sources of an active card.

    "The meeting is on Thursday" was distilled into a card; when that card was superseded
    by the Friday one, the message is as outdated as the card, and must not compete with
    the Friday card for a place in the context.
    """
    live: set[str] = set()
    dead: set[str] = set()
    for item in items:
        if item.kind == "card" and item.sources:
            (live if item.status == "active" else dead).update(item.sources)
    return frozenset(dead - live), frozenset(live)


# -- the in-memory index -----------------------------------------------------------------------


@dataclass
class _Cursor:
    size: int = 0
    offset: int = 0
    lines: int = 0


class PairIndex:
    """Items, their vectors, BM25 postings and ranking arrays, for one pair and one model."""

    def __init__(self, root: Path, embedder: Embedder) -> None:
        self.root = root
        self.embedder = embedder
        self.folder = index_folder(root, embedder.name)
        self.store = VectorStore(self.folder / "vectors", embedder.dim)
        self.items: list[Item] = []
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
            self.outdated, self.live_sources = outdated_messages(self.live_items())
        if self.dead > 1000 and self.dead > len(self.items) // 3:
            self._compact()

    def _compact(self) -> None:
        keep = sorted(self.position.values())
        items, vectors = [self.items[p] for p in keep], self.vectors[keep]
        self.items, self.position, self.dead = [], {}, 0
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
    try:
        data = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None  # derived data: anything unreadable is simply rebuilt
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return None
    return data


def write_state(folder: Path, head: str | None, items: Sequence[Item]) -> None:
    """Record the commit and the card/summary items indexed from it (atomic rename)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {"version": STATE_VERSION, "head": head,
            "items": [asdict(i) for i in items if i.kind != "message"]}
    tmp = folder / f".state.{uuid.uuid4().hex[:8]}.tmp"
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, folder / "state.json")


def item_from_dict(data: dict[str, Any]) -> Item:
    data = dict(data)
    data["entities"] = tuple(data.get("entities") or ())
    data["sources"] = tuple(data.get("sources") or ())
    return Item(**data)


# -- reading the repository cheaply ------------------------------------------------------------


def head_sha(root: Path) -> str | None:
    """HEAD's sha from the ref files (no subprocess: this runs before every search)."""
    git_dir = root / ".git"
    try:
        head = (git_dir / "HEAD").read_text().strip()
    except FileNotFoundError:
        return None
    if not head.startswith("ref: "):
        return head
    ref = head[5:]
    try:
        return (git_dir / ref).read_text().strip()
    except FileNotFoundError:
        pass
    try:
        for line in (git_dir / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except FileNotFoundError:
        pass
    return None  # an unborn branch


def changed_paths(root: Path, old: str, new: str) -> list[str] | None:
    """Paths changed between two commits, or None when ``old`` is unknown (rebuild all)."""
    try:
        out = run_git(root, "diff", "--name-status", "--no-renames", old, new)
    except GitError:
        return None
    return [line.split("\t", 1)[1] for line in out.splitlines() if "\t" in line]


def history_sizes(root: Path) -> dict[str, int]:
    folder = root / "history"
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return {}
    return {e.name[:-6]: e.stat().st_size for e in entries
            if e.name.endswith(".jsonl") and e.is_file()}


def read_new_messages(root: Path, session: str, offset: int,
                      first_turn: int = 0) -> tuple[list[history.Message], int]:
    """Complete lines appended to a session file since byte ``offset``.

    A line without ``turn`` (written by hand) gets its position, as ``history`` reads it.
    """
    path = root / "history" / f"{session}.jsonl"
    with path.open("rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    messages: list[history.Message] = []
    for line in data[:end].splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            messages.append(history.Message(
                session=session,  # the file's: ids and paths must point at this file
                turn=int(record.get("turn", first_turn + len(messages))),
                role=str(record["role"]), content=str(record["content"]),
                ts=history.parse_ts(record.get("ts", "1970-01-01T00:00:00Z"))))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, BadInputError):
            continue  # `memfs check` reports malformed history; search just skips the line
    return messages, offset + end


def card_and_summary_items(root: Path, head: str | None) -> list[Item]:
    """Card and summary items at ``head`` (the one full read: on commits that touch them)."""
    if head is None:
        return []
    cards, _ = load_cards(root, head)
    items = [card_item(c) for c in cards]
    try:
        summary = run_git(root, "show", f"{head}:summary.md")
        when = float(run_git(root, "log", "-1", "--format=%ct", head, "--", "summary.md") or 0)
    except GitError:
        summary, when = "", 0.0
    return items + summary_items(summary, when)


def utc_today(now: dt.datetime | None = None) -> dt.date:
    return (now or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc).date()


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
    head = head_sha(index.root)
    add: list[Item] = []
    remove: list[tuple[str, str]] = []
    head_moved = head != index.head
    if head_moved:
        fresh = _memory_items_if_changed(index, head)
        if fresh is not None:
            _diff_memory_items(index, fresh, plan, add, remove)
    _new_history(index, plan, add, remove)
    if add or remove:
        vectors = index.vectors_for(add, progress)
        plan.embedded = index.last_embedded
        index.apply(add, remove, vectors)
    index.head = head
    if head_moved and index.state_head != head:
        with pair_lock(index.root):
            write_state(index.folder, head, index.live_items())
        index.state_head = head
    return plan


def _memory_items_if_changed(index: PairIndex, head: str | None) -> list[Item] | None:
    """Card and summary items at ``head``, or None when they cannot have changed."""
    if index.head is None:
        state = read_state(index.folder)
        if state is not None:
            saved = [item_from_dict(d) for d in state["items"]]
            if state.get("head") == head:
                index.state_head = head
                return saved
            if _untouched(index.root, state.get("head"), head):
                return saved
        return card_and_summary_items(index.root, head)
    if _untouched(index.root, index.head, head):
        return None
    return card_and_summary_items(index.root, head)


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
    for session in sorted(index.cursors.keys() - sizes.keys()):
        _drop_session(index, session, plan, remove)
    for session, size in sorted(sizes.items()):
        cursor = index.cursors.get(session)
        if cursor is not None and cursor.size == size:
            continue
        if cursor is not None and size < cursor.offset:
            _drop_session(index, session, plan, remove)  # rewritten by hand: read it again
            cursor = None
        cursor = cursor or _Cursor()
        messages, cursor.offset = read_new_messages(index.root, session, cursor.offset,
                                                    cursor.lines)
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
            (index_folder(root, embedder.name) / "state.json").unlink(missing_ok=True)
    else:
        drop_index(root, embedder.name)
    _OPEN.pop((str(root.resolve()), embedder.name), None)
    index = open_index(root, embedder)
    plan = refresh(index, progress)
    with pair_lock(root):
        index.store.compact([content_key(embedder.name, i.index_text) for i in index.live_items()])
    return plan
