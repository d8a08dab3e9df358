"""What the window state is made of on disk, and how it is read cheaply.

The window (``memfs/window.py``) is derived from three sources, each of which can be
checked for change without reading it:

- ``history/<session>.jsonl``: append-only. A session file is known by its ``Stamp``
  (inode, size, mtime) and the byte offset read so far; new lines are read from there.
- ``.memfs/events/``: pending compaction events. The folder's stamp says whether any
  was added or removed; only then is it listed.
- the ``Memfs-Window`` / ``Memfs-Event`` trailers on HEAD's first-parent history. HEAD's
  sha comes from the ref files; when it moves, only the new commits are read
  (``git log old..new``).

Everything here is a plain function over paths; the bookkeeping lives in ``window.py``.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memfs.compaction import Span
from memfs.errors import GitError
from memfs.gitio import run_git
from memfs.history import Message, parse_line

SLACK_NS = 1_000_000_000
"""File times are coarse (a clock tick): a file whose mtime is within this of a scan is
treated as possibly changed after it, as git treats "racily clean" index entries."""

CHECK_BYTES = 32


@dataclass(frozen=True)
class Stamp:
    """A file's identity and size at one moment: equal stamps mean "not touched"."""

    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> Stamp | None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return cls(st.st_ino, st.st_size, st.st_mtime_ns)

    def to_json(self) -> list[int]:
        return [self.ino, self.size, self.mtime_ns]

    @classmethod
    def from_json(cls, data: Any) -> Stamp | None:
        return None if data is None else cls(int(data[0]), int(data[1]), int(data[2]))


@dataclass
class Entry:
    """A window message and where its line starts in its session file."""

    message: Message
    at: int
    position: int
    """How many messages of the file come before it (a line without ``turn`` gets this)."""
    line: int = 0
    """How many non-empty lines come before it."""


@dataclass
class Chunk:
    """Complete lines read from a session file: the messages, and the counts after them."""

    entries: list[Entry] = field(default_factory=list)
    offset: int = 0
    lines: int = 0
    valid: int = 0
    check: bytes = b""


def read_from(path: Path, session: str, offset: int, lines: int, valid: int) -> Chunk:
    """The complete lines of ``path`` after byte ``offset``; ``lines`` and ``valid`` are
    the counts of non-empty lines and of messages before it (turn numbers and positions
    continue from them, exactly as ``history.next_turn`` and ``parse_line`` count)."""
    with path.open("rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    chunk = Chunk(offset=offset + end, lines=lines, valid=valid)
    at = offset
    for line in data[:end].splitlines(keepends=True):
        start, at = at, at + len(line)
        if not line.strip():
            continue
        message = parse_line(line, session, chunk.valid)
        chunk.lines += 1
        if message is None:
            continue
        chunk.entries.append(Entry(message, start, chunk.valid, chunk.lines - 1))
        chunk.valid += 1
    chunk.check = tail_bytes(path, chunk.offset)
    return chunk


def tail_bytes(path: Path, offset: int) -> bytes:
    """The bytes just before ``offset``: an append leaves them alone, a rewrite rarely does."""
    start = max(0, offset - CHECK_BYTES)
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            return handle.read(offset - start)
    except FileNotFoundError:
        return b""


def order_key(message: Message | None, session: str) -> tuple[int, str]:
    """Sessions are ordered by their first message's time, then name (``iter_messages``)."""
    if message is None:
        return (0, "")
    micros = (message.ts - _EPOCH) // dt.timedelta(microseconds=1)
    return (micros, session)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Commit:
    sha: str
    first_parent: str | None
    spans: list[Span]
    events: list[str]


_FORMAT = ("%H%x1f%P%x1f%(trailers:key=Memfs-Window,valueonly,separator=%x2C)"
           "%x1f%(trailers:key=Memfs-Event,valueonly,separator=%x2C)%x1e")


def first_parent_commits(root: Path, rev_range: str) -> list[Commit]:
    """Commits of ``rev_range`` along first parents, newest first, with their window and
    event trailers. One ``git log``; the caller gives a range of only what is new."""
    out = run_git(root, "log", "--first-parent", f"--format={_FORMAT}", rev_range, "--")
    commits = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, parents, window, events = (record.split("\x1f") + ["", "", ""])[:4]
        spans = []
        for item in window.replace("\n", ",").split(","):
            try:
                spans.append(Span.parse(item.strip()))
            except ValueError:
                continue  # a hand-written trailer that is not a span: it evicts nothing
        first = parents.split()[0] if parents.split() else None
        commits.append(Commit(sha, first, spans,
                              [e.strip() for e in events.replace("\n", ",").split(",")
                               if e.strip()]))
    return commits


def commits_since(root: Path, old: str, new: str) -> list[Commit] | None:
    """The commits HEAD gained moving from ``old`` to ``new``, or None when ``new`` does not
    descend from ``old`` along first parents (a reset, a checkout): then rebuild."""
    try:
        commits = first_parent_commits(root, f"{old}..{new}")
    except GitError:
        return None
    if not commits or commits[-1].first_parent != old:
        return None
    return commits


def spans_by_session(spans: list[Span]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for span in spans:
        out.setdefault(span.session, []).append((span.first, span.last))
    return out


def covered(turn: int, intervals: list[tuple[int, int]]) -> bool:
    return any(a <= turn <= b for a, b in intervals)


def event_names(folder: Path) -> set[str]:
    try:
        return {e.name[:-5] for e in os.scandir(folder)
                if e.name.startswith("e-") and e.name.endswith(".json")}
    except FileNotFoundError:
        return set()
