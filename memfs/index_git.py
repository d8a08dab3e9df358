"""Reading a pair repository cheaply, for the index: HEAD without a subprocess, what a
commit changed, history sizes, and new history lines from a byte offset."""

from __future__ import annotations

import datetime as dt
import os
import zlib
from collections.abc import Iterable
from pathlib import Path

from memfs import history
from memfs.cardstore import load_cards
from memfs.errors import GitError
from memfs.gitio import head_sha as head_sha  # re-exported: the index reads HEAD this way
from memfs.gitio import run_git
from memfs.index_items import Item, card_item, summary_items

# -- reading the repository cheaply ------------------------------------------------------------


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


def session_sizes(root: Path, sessions: Iterable[str]) -> dict[str, int]:
    """Sizes of the named session files that exist (one ``stat`` each)."""
    sizes = {}
    for session in sessions:
        try:
            sizes[session] = os.stat(root / "history" / f"{session}.jsonl").st_size
        except (FileNotFoundError, NotADirectoryError):
            continue
    return sizes


def read_new_messages(root: Path, session: str, offset: int, first_turn: int = 0,
                      crc: int = 0) -> tuple[list[history.Message], int, int]:
    """Complete lines appended to a session file since byte ``offset``, the new offset, and
    ``crc`` (the CRC-32 of the file up to ``offset``) carried on over the lines read.

    Lines are read by ``history.parse_line``, exactly as the window and dreaming read them.
    """
    path = root / "history" / f"{session}.jsonl"
    with path.open("rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    messages: list[history.Message] = []
    for line in data[:end].splitlines():
        message = history.parse_line(line, session, first_turn + len(messages))
        if message is not None:
            messages.append(message)
    return messages, offset + end, zlib.crc32(data[:end], crc)


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
