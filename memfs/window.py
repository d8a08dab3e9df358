"""The recent window: the messages the model still sees verbatim, kept as derived state.

The window is every message of ``history/`` that no compaction has evicted. Evicted spans
come from pending events in ``.memfs/events/`` and from the ``Memfs-Window`` trailers on
HEAD's first-parent history (each dream merge carries one; so does an import of history
whose memory already exists, like the demo's sample pairs).

Working that out from scratch reads all of history and every commit, so it is done once
and kept: ``.memfs/window.json`` holds, per session that still has messages in the window,
how far its file was read, where its window part starts, the turn the next message gets
and the spans evicted from it, plus the HEAD, the pending events and the folder stamps it
was derived from. A warm process keeps the window in memory (``WindowState``); each turn
only checks stamps (one ``stat`` per open session, HEAD from the ref files) and reads
what is new: appended lines from their byte offset, new events, commits since the last
HEAD. Nothing a turn does grows with the size of history or the number of commits.

When the state cannot be trusted — ``.memfs/`` deleted, a foreign version, a session file
rewritten rather than appended to, HEAD moved other than forward (a reset, a checkout), an
event gone without a dream merge naming it — it is rebuilt from history, the trailers and
the pending events, as the window always was: undreamed messages rejoin the window, to
be evicted (and dreamed) again. Deleting ``.memfs/`` loses nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs.compaction import CompactionEvent, Span, events_dir, load_event, pending_events
from memfs.errors import LockError
from memfs.gitio import head_sha
from memfs.history import Message, Written, session_path
from memfs.lock import pair_lock
from memfs.tokens import count_tokens
from memfs.window_files import (
    SLACK_NS,
    Chunk,
    Commit,
    Entry,
    Stamp,
    commits_since,
    covered,
    event_names,
    first_parent_commits,
    order_key,
    read_from,
    spans_by_session,
    tail_bytes,
)

if TYPE_CHECKING:
    from memfs.store import MemoryPair

VERSION = 1
STATE_FILE = Path(".memfs") / "window.json"


RESCAN_NS = 30 * 1_000_000_000
"""The longest a warm window goes without a scan of every session file: a hand edit
inside a session it no longer follows (an old, evicted one) is seen within this (the
scan finds the file newer than the last scan, and the window is rebuilt)."""


@dataclass
class Tail:
    """One session file with messages in the window (or closed since the last scan)."""

    key: tuple[int, str] | None
    stamp: Stamp | None
    offset: int = 0
    lines: int = 0
    """Non-empty lines read: the turn number of the next message appended."""
    valid: int = 0
    check: bytes = b""
    evicted: list[tuple[int, int]] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)

    def start(self) -> tuple[int, int, int]:
        """Where the window part begins: byte offset, lines and messages before it."""
        if self.entries:
            first = self.entries[0]
            return first.at, first.line, first.position
        return self.offset, self.lines, self.valid

    def to_json(self) -> dict[str, Any]:
        at, lines, valid = self.start()
        return {"key": list(self.key) if self.key else None,
                "stamp": self.stamp.to_json() if self.stamp else None,
                "offset": self.offset, "lines": self.lines, "valid": self.valid,
                "check": self.check.hex(), "evicted": [list(i) for i in self.evicted],
                "start": [at, lines, valid]}


class Stale(Exception):
    """The derived state no longer matches the files: rebuild it."""


class WindowState:
    """The window of one pair, in memory, and the bookkeeping that keeps it current."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lock = threading.RLock()
        self.tails: dict[str, Tail] = {}
        self.head: str | None = None
        self.events: dict[str, int] = {}
        """Pending event id → how many messages it evicted."""
        self.merged: set[str] = set()
        """Events named by a dream merge on HEAD whose files may not be deleted yet."""
        self.events_stamp: Stamp | None = None
        self.history_stamp: Stamp | None = None
        self.scanned_ns = 0
        self.file_stamp: Stamp | None = None
        self.loaded = False
        self.tokens = 0
        self.rebuilds = 0
        self.unsaved = 0
        """Bytes appended since the last save; ``save_if_needed`` lets a few through."""
        self.changed = True
        """Something other than appends changed since the last save (events, tails, HEAD)."""
        self._window: list[Message] | None = None
        self._paths: dict[str, Path] = {}

    def path(self, session: str) -> Path:
        """``history/<session>.jsonl`` (checked once per session, then remembered)."""
        found = self._paths.get(session)
        if found is None:
            found = self._paths[session] = session_path(self.root, session)
        return found

    # -- reading ------------------------------------------------------------------------------

    def messages(self) -> list[Message]:
        """The window, oldest first (sessions by their first message, then turn order)."""
        if self._window is None:
            tails = sorted((t for t in self.tails.values() if t.entries),
                           key=lambda t: t.key or (0, ""))
            self._window = [e.message for t in tails for e in t.entries]
        return list(self._window)

    def invalidate(self) -> None:
        """Forget the in-memory state (a batch failed half-way): the next refresh loads
        the saved state and reads what was appended since, from the files."""
        self.loaded, self.file_stamp, self._window = False, None, None

    def pending_messages(self) -> int:
        return sum(self.events.values())

    # -- keeping current ------------------------------------------------------------------------

    def refresh(self) -> None:
        """Bring the state up to date with the files, reading only what changed."""
        try:
            if not self.loaded or Stamp.of(self.root / STATE_FILE) != self.file_stamp:
                self._load()
            self._catch_up()
        except Stale:
            self.rebuild()

    def _catch_up(self) -> None:
        folder = events_dir(self.root)
        events_now = Stamp.of(folder)
        names = event_names(folder) if _changed(events_now, self.events_stamp) else None
        head = head_sha(self.root)
        moved = head != self.head
        if moved:
            self._fold(head)
        if names is not None:
            self._apply_names(names)
            self.events_stamp = events_now
        history_now = Stamp.of(self.root / "history")
        closed = sum(1 for t in self.tails.values() if not t.entries)
        since = time.time_ns() - self.scanned_ns
        crowded = closed > 16 and since > SLACK_NS
        if moved or crowded or since > RESCAN_NS or _changed(history_now, self.history_stamp):
            self._scan()
            self.history_stamp = history_now
        for session, tail in list(self.tails.items()):
            self._check(session, tail)  # one stat each: the window's sessions, and at
            # most 16 closed ones (more, and the next scan lets the old ones go)

    def _fold(self, head: str | None) -> None:
        """Apply the commits HEAD gained; anything but a forward move means rebuild."""
        if self.head is None or head is None:
            raise Stale
        commits = commits_since(self.root, self.head, head)
        if commits is None:
            raise Stale
        for commit in reversed(commits):
            self._apply_commit(commit)
        self.head, self.changed = head, True

    def _apply_commit(self, commit: Commit) -> None:
        self._evict_spans(commit.spans)
        for event_id in commit.events:
            self.events.pop(event_id, None)
            if (events_dir(self.root) / f"{event_id}.json").exists():
                self.merged.add(event_id)

    def _apply_names(self, names: set[str]) -> None:
        gone = set(self.events) - names
        if gone:
            raise Stale  # an event left without a merge naming it: its messages rejoin
        self.merged &= names
        for name in sorted(names - set(self.events) - self.merged):
            try:
                event = load_event(events_dir(self.root) / f"{name}.json")
            except (OSError, ValueError, TypeError, KeyError, UnicodeDecodeError):
                continue  # corrupt: it evicts nothing (``pending_events`` sets it aside)
            self.note_event(event)

    def note_event(self, event: CompactionEvent) -> None:
        self.changed = True
        self.events[event.id] = event.evicted
        self._evict_spans(event.spans)

    def _scan(self) -> None:
        """Look at every session file: a file we do not follow that changed since the
        last scan (a hand edit, a file restored by git) can only be placed by a rebuild;
        followed tails with no window messages left are let go once their file is old. Not a per-turn cost: it runs
        when HEAD moves, when ``history/`` gains a file we did not write, and when many
        closed tails pile up (at most once per ``SLACK_NS``)."""
        started = time.time_ns()
        try:
            entries = list(os.scandir(self.root / "history"))
        except FileNotFoundError:
            entries = []
        for entry in entries:
            name = entry.name
            if not name.endswith(".jsonl"):
                continue
            if name[:-6] in self.tails:
                continue  # followed: checked on every refresh
            if entry.stat().st_mtime_ns >= self.scanned_ns - SLACK_NS:
                raise Stale
        self.scanned_ns, self.changed = started, True
        for session, tail in list(self.tails.items()):
            if not tail.entries and tail.stamp and tail.stamp.mtime_ns < started - SLACK_NS:
                del self.tails[session]

    def _check(self, session: str, tail: Tail) -> None:
        """Read what was appended to a followed session file since we last looked."""
        path = self.path(session)
        now = Stamp.of(path)
        if now == tail.stamp:
            return
        if now is None or (tail.stamp is not None and now.ino != tail.stamp.ino) or \
                now.size < tail.offset or tail_bytes(path, tail.offset) != tail.check:
            raise Stale  # rewritten, truncated or deleted: not an append
        chunk = read_from(path, session, tail.offset, tail.lines, tail.valid)
        self._take(tail, chunk)
        tail.stamp = now

    def _take(self, tail: Tail, chunk: Chunk) -> None:
        for entry in chunk.entries:
            if tail.key is None:
                tail.key = order_key(entry.message, entry.message.session)
            if not covered(entry.message.turn, tail.evicted):
                tail.entries.append(entry)
                self.tokens += count_tokens(entry.message.content)
        tail.offset, tail.lines, tail.valid, tail.check = \
            chunk.offset, chunk.lines, chunk.valid, chunk.check
        self._window = None

    # -- changes made by this process (under the pair lock) -------------------------------------

    def tail_for(self, session: str) -> Tail:
        """The followed tail of ``session``, opening it (new file, or a closed one) if needed."""
        tail = self.tails.get(session)
        if tail is not None:
            return tail
        path = self.path(session)
        now = Stamp.of(path)
        if now is not None and now.mtime_ns >= self.scanned_ns - SLACK_NS:
            self.rebuild()  # changed since the last scan and not followed: place it first
            return self.tail_for(session) if session in self.tails else self._open(session)
        return self._open(session)

    def _open(self, session: str) -> Tail:
        path = self.path(session)
        now = Stamp.of(path)
        tail = Tail(key=None, stamp=now)
        if now is not None:  # a closed session: every message it has left the window
            chunk = read_from(path, session, 0, 0, 0)
            tail.key = order_key(chunk.entries[0].message if chunk.entries else None, session)
            tail.offset, tail.lines, tail.valid, tail.check = \
                chunk.offset, chunk.lines, chunk.valid, chunk.check
            if chunk.entries:
                tail.evicted = [(0, max(e.message.turn for e in chunk.entries))]
        self.tails[session] = tail
        self.changed = True
        return tail

    def appended(self, written: Written) -> None:
        """A message this process appended (its tail was current before the write)."""
        message = written.message
        tail = self.tail_for(message.session)
        if tail.key is None:
            tail.key = order_key(message, message.session)
        tail.entries.append(Entry(message, written.at, tail.valid, tail.lines))
        tail.offset, tail.lines, tail.valid = written.end, tail.lines + 1, tail.valid + 1
        tail.check = written.tail
        self.tokens += count_tokens(message.content)
        self.unsaved += written.end - written.at
        self._window = None

    def settle(self, sessions: Iterable[str], created: bool) -> None:
        """After a batch: remember the files' stamps so our own writes are not news."""
        for session in sessions:
            tail = self.tails[session]
            now = Stamp.of(self.path(session))
            tail.stamp = now if now is not None and now.size == tail.offset else None
        if created:
            self.history_stamp = Stamp.of(self.root / "history")

    def recorded(self, folder_before: Stamp | None) -> None:
        """An event file (already noted) was just written by this process.
        ``folder_before`` is the events folder's stamp just before the write: if nobody
        else changed it since our last look, the new stamp is ours and not news."""
        if folder_before == self.events_stamp:
            self.events_stamp = Stamp.of(events_dir(self.root))

    def _evict_spans(self, spans: Sequence[Span]) -> None:
        for session, intervals in spans_by_session(list(spans)).items():
            tail = self.tails.get(session)
            if tail is None:
                continue  # a closed session: already out of the window
            tail.evicted = _merge(tail.evicted + intervals)
            kept = [e for e in tail.entries if not covered(e.message.turn, intervals)]
            if len(kept) != len(tail.entries):
                gone = [e for e in tail.entries if covered(e.message.turn, intervals)]
                self.tokens -= sum(count_tokens(e.message.content) for e in gone)
                tail.entries = kept
                self._window = None

    # -- rebuilding, loading, saving ------------------------------------------------------------

    def rebuild(self) -> None:
        """Derive everything from history, the pending events and HEAD's trailers."""
        started = time.time_ns()
        self.events_stamp = Stamp.of(events_dir(self.root))
        self.history_stamp = Stamp.of(self.root / "history")
        events = pending_events(self.root)
        head = head_sha(self.root)
        commits = first_parent_commits(self.root, head) if head else []
        merged = {e for c in commits for e in c.events}
        spans = [s for e in events for s in e.spans] + [s for c in commits for s in c.spans]
        evicted = spans_by_session(spans)
        self.events = {e.id: e.evicted for e in events if e.id not in merged}
        self.merged = {e.id for e in events if e.id in merged}
        self.tails, self.tokens, self._window = {}, 0, None
        for path in sorted((self.root / "history").glob("*.jsonl")):
            stamp = Stamp.of(path)
            chunk = read_from(path, path.stem, 0, 0, 0)
            tail = Tail(key=order_key(chunk.entries[0].message if chunk.entries else None,
                                      path.stem), stamp=stamp,
                        evicted=_merge(evicted.get(path.stem, [])))
            self._take(tail, chunk)
            if tail.entries or (stamp is not None and stamp.mtime_ns >= started - SLACK_NS):
                self.tails[path.stem] = tail
        self.head, self.scanned_ns, self.loaded = head, started, True
        self.rebuilds += 1
        self._save_if_free()

    def _save_if_free(self) -> None:
        try:
            with pair_lock(self.root, timeout=0):
                self.save()
        except LockError:
            pass  # a writer holds the pair: it saves its own, newer state

    def save_if_needed(self, slack: int = 256 * 1024) -> None:
        """Save unless only a little was appended since the last save: a process that
        loads an older save reads those lines from the saved offsets, which costs what was
        appended since, so the file is rewritten at most once per ``slack`` bytes of chat."""
        if self.changed or self.unsaved > slack or self.file_stamp is None:
            self.save()

    def save(self) -> None:
        """Write ``.memfs/window.json`` (derived data: no fsync; a torn file is rebuilt)."""
        data = {"version": VERSION, "head": self.head, "events": self.events,
                "merged": sorted(self.merged),
                "events_stamp": self.events_stamp.to_json() if self.events_stamp else None,
                "history_stamp": self.history_stamp.to_json() if self.history_stamp else None,
                "scanned_ns": self.scanned_ns,
                "tails": {s: t.to_json() for s, t in self.tails.items()}}
        path = self.root / STATE_FILE
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_name(f".window.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
        self.file_stamp = Stamp.of(path)
        self.unsaved, self.changed = 0, False

    def _load(self) -> None:
        path = self.root / STATE_FILE
        stamp = Stamp.of(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != VERSION:
                raise Stale
            tails = {s: self._load_tail(s, t) for s, t in data["tails"].items()}
            self.head = data["head"]
            self.events = {str(k): int(v) for k, v in data["events"].items()}
            self.merged = set(data["merged"])
            self.events_stamp = Stamp.from_json(data["events_stamp"])
            self.history_stamp = Stamp.from_json(data["history_stamp"])
            self.scanned_ns = int(data["scanned_ns"])
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            raise Stale from None
        self.tails, self._window, self.loaded, self.file_stamp = tails, None, True, stamp
        self.unsaved, self.changed = 0, False
        self.tokens = sum(count_tokens(e.message.content)
                          for t in tails.values() for e in t.entries)

    def _load_tail(self, session: str, data: dict[str, Any]) -> Tail:
        """A saved tail with its window part read back (from its start, not from 0)."""
        key = (int(data["key"][0]), str(data["key"][1])) if data["key"] else None
        tail = Tail(key=key,
                    stamp=Stamp.from_json(data["stamp"]), offset=int(data["offset"]),
                    lines=int(data["lines"]), valid=int(data["valid"]),
                    check=bytes.fromhex(data["check"]),
                    evicted=[(int(a), int(b)) for a, b in data["evicted"]])
        path = self.path(session)
        now = Stamp.of(path)
        if now is None or (tail.stamp and now.ino != tail.stamp.ino) or \
                now.size < tail.offset or tail_bytes(path, tail.offset) != tail.check:
            raise Stale
        at, lines, valid = (int(x) for x in data["start"])
        if at < tail.offset:
            part = read_from(path, session, at, lines, valid)
            tail.entries = [e for e in part.entries if e.at < tail.offset
                            and not covered(e.message.turn, tail.evicted)]
        return tail


def _changed(now: Stamp | None, before: Stamp | None) -> bool:
    """A folder changed — or may have within the clock's resolution of our last look."""
    if now != before:
        return True
    return now is not None and time.time_ns() - now.mtime_ns < SLACK_NS // 10


def _merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


# -- the process-wide cache ---------------------------------------------------------------------

_STATES: dict[str, WindowState] = {}
_STATES_LOCK = threading.Lock()


def window_state(pair: MemoryPair, refresh: bool = True) -> WindowState:
    """The pair's window state (current, unless ``refresh=False``: callers that read or
    change it take ``state.lock`` and refresh under it)."""
    key = os.path.abspath(pair.root)
    with _STATES_LOCK:
        state = _STATES.get(key)
        if state is None:
            state = _STATES[key] = WindowState(pair.root)
    if refresh:
        with state.lock:
            state.refresh()
    return state


def forget_window_states() -> None:
    with _STATES_LOCK:
        _STATES.clear()


def current_window(pair: MemoryPair) -> list[Message]:
    """Messages not yet evicted, oldest first."""
    state = window_state(pair, refresh=False)
    with state.lock:
        state.refresh()
        return state.messages()
