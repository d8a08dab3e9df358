"""The timeline: every change to a pair's memory, newest first, a page at a time.

Who made a change is what a person asks first ("did *I* do that, or did it dream it?"),
so each entry says ``user``, ``dream`` or ``agent`` — from the ``Memfs-Actor`` trailer,
else the git author — and marks dreams (one merge commit per dream) and rejected dreams.
Pages are cut by git itself (``--skip``/``-n`` on the first-parent line), so a pair
with thousands of commits costs one page of work, plus one ``rev-list --count``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from memfs.errors import BadInputError
from memfs.gitio import run_git
from memfs.repo import PairRepo
from memfs.revisions import LogEntry, log, resolve

PER_PAGE = 50
_AUTHORS = {"memfs-dream": "dream", "agent": "agent"}


@dataclass(frozen=True)
class TimelineEntry:
    """One commit as the timeline shows it."""

    sha: str
    subject: str
    kind: str
    who: str
    """``user`` | ``dream`` | ``agent``."""
    dream: bool
    """A dream's merge commit: opening it shows what the dream did."""
    rejected: bool
    """The record of a dream the user rejected in review."""
    date: dt.datetime
    reverts: str | None
    files: tuple[str, ...]
    undoable: bool = True
    """False for the pair's first commit, which has nothing before it to go back to."""

    @property
    def short(self) -> str:
        return self.sha[:10]

    @classmethod
    def of(cls, entry: LogEntry) -> TimelineEntry:
        who = entry.trailers.get("Memfs-Actor") or _AUTHORS.get(entry.author, "user")
        return cls(sha=entry.sha, subject=entry.subject, kind=entry.kind, who=who,
                   dream=entry.is_dream, rejected="Memfs-Rejected" in entry.trailers,
                   date=entry.date, reverts=entry.trailers.get("Memfs-Reverts"),
                   files=entry.files, undoable=bool(entry.parents))

    def to_json(self) -> dict[str, Any]:
        return {"sha": self.sha, "subject": self.subject, "kind": self.kind, "who": self.who,
                "dream": self.dream, "rejected": self.rejected, "date": self.date.isoformat(),
                "reverts": self.reverts, "files": list(self.files)}


@dataclass(frozen=True)
class TimelinePage:
    entries: list[TimelineEntry]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def has_next(self) -> bool:
        return self.page < self.pages

    @property
    def has_prev(self) -> bool:
        return self.page > 1

    def to_json(self) -> dict[str, Any]:
        return {"page": self.page, "per_page": self.per_page, "total": self.total,
                "pages": self.pages, "commits": [e.to_json() for e in self.entries]}


def timeline(repo: PairRepo, page: int = 1, per_page: int = PER_PAGE) -> TimelinePage:
    """Page ``page`` (from 1) of the first-parent history, ``per_page`` commits each."""
    if page < 1 or per_page < 1:
        raise BadInputError(f"page: must be 1 or more (got page {page}, {per_page} per page)")
    total = int(run_git(repo.root, "rev-list", "--first-parent", "--count", "HEAD").strip())
    entries = log(repo, per_page, skip=(page - 1) * per_page) if (page - 1) * per_page < total \
        else []
    return TimelinePage([TimelineEntry.of(e) for e in entries], page, per_page, total)


def entry(repo: PairRepo, rev: str) -> TimelineEntry:
    """One commit as the timeline shows it (an unknown ``rev`` is bad input)."""
    return TimelineEntry.of(log(repo, 1, resolve(repo, rev))[0])
