"""Which session files were appended to, so a warm reader need not stat every one.

A search refresh must see messages that any process appended since its last look. Asking
every ``history/*.jsonl`` for its size does that, but it is one ``stat`` per session ever
held: about 1,000 at 100k messages, 8 ms on every retrieving turn, growing with history.
Instead, every append through ``memfs.history.Appender`` names the files it touched in
``.memfs/appended`` (one short line per file and batch, after the fsync), and a reader
follows that file from its byte offset: the sessions to look at are the ones named since.

It is derived and advisory, like everything in ``.memfs/``: not fsynced (a warm reader
shares the writer's page cache; a new process scans everything once anyway), truncated
when it grows past ``LIMIT`` (by replacing the file, so a reader sees a new inode), and
when the reader cannot trust it — missing, replaced, shorter than its offset — it says
"unknown" and the caller scans every file, as it always did. What the journal cannot see
(a session file edited by hand in place) is caught by the caller's own rare full scans:
when HEAD moves, when ``history/`` gains or loses a file, and on a slow timer.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

NAME = "appended"
LIMIT = 256 * 1024
"""Bytes; past this the writer starts a new file (readers then scan once)."""


def journal_path(root: Path) -> Path:
    return root / ".memfs" / NAME


def note(root: Path, sessions: Iterable[str]) -> None:
    """Name ``sessions`` as appended to (the caller holds the pair lock and has fsynced)."""
    names = sorted(set(sessions))
    if not names:
        return
    path = journal_path(root)
    data = "".join(f"{name}\n" for name in names).encode("utf-8")
    try:
        if path.stat().st_size > LIMIT:
            fresh = path.with_name(f"{NAME}.new")
            fresh.write_bytes(b"")
            os.replace(fresh, path)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except FileNotFoundError:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError:
            return  # advisory: readers fall back on scanning
    except OSError:
        return
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


class JournalReader:
    """Follows the journal of one pair from a byte offset."""

    def __init__(self, root: Path) -> None:
        self.path = journal_path(root)
        self.ino: int | None = None
        self.offset = 0

    def start(self) -> None:
        """Take the journal's current end as the starting point (call before a full scan:
        what is appended during the scan is named again next time, which is harmless)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self.ino, self.offset = None, 0
            return
        self.ino, self.offset = st.st_ino, st.st_size

    def since(self) -> set[str] | None:
        """Sessions named since the last call, or None: unknown, scan every file."""
        try:
            with open(self.path, "rb") as handle:
                st = os.fstat(handle.fileno())
                if self.ino is None or st.st_ino != self.ino or st.st_size < self.offset:
                    return None
                if st.st_size == self.offset:
                    return set()
                handle.seek(self.offset)
                data = handle.read()
        except FileNotFoundError:
            return set() if self.ino is None and self.offset == 0 else None
        end = data.rfind(b"\n") + 1
        self.offset += end
        return {line.decode("utf-8", "replace") for line in data[:end].splitlines() if line}
