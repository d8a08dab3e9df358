"""What a change did to memory, in the words a person uses: cards written, superseded,
expired, marked wrong; the summary before and after; pins added and removed.

A diff of front matter is how git sees a dream; "the Thursday meeting card was replaced
by the Friday one" is how a person does. ``changes(repo, base, tip)`` derives the second
from two trees alone, so one function describes a dream merged on main, a proposal still
on its ``dream/review/...`` branch and what a revert would do (``memfs/undo.py``). The
inspector, ``memfs dream --list`` and their JSON all show this, never their own reading.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git

from memfs.cards import Card
from memfs.errors import CardParseError
from memfs.gitio import run_git
from memfs.pins import parse_pins
from memfs.repo import PairRepo

Reader = Callable[[str], "str | None"]


@dataclass(frozen=True)
class Superseded:
    """A card that stopped being true, and the card that took its place (if it exists)."""

    old: Card
    by: Card | None


@dataclass
class ChangeSet:
    """Everything a change from ``base`` to ``tip`` did to the memory a person reads."""

    base: str
    tip: str
    written: list[Card] = field(default_factory=list)
    """New card files (a supersede's or merge's new card lists what it replaced)."""
    superseded: list[Superseded] = field(default_factory=list)
    expired: list[Card] = field(default_factory=list)
    deleted: list[Card] = field(default_factory=list)
    """Marked wrong: ``status: deleted``."""
    restored: list[Card] = field(default_factory=list)
    """Back to ``active`` from stale, expired or deleted (what undoing a dream does)."""
    questioned: list[Card] = field(default_factory=list)
    """Still active, newly flagged by a dream: something said later may make it untrue
    (``possible_change``)."""
    edited: list[tuple[Card, Card]] = field(default_factory=list)
    removed: list[Card] = field(default_factory=list)
    """Card files that are gone (undoing a dream removes the cards it wrote)."""
    unreadable: list[str] = field(default_factory=list)
    summary_before: str = ""
    summary_after: str = ""
    pins_before: list[str] = field(default_factory=list)
    pins_after: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def fresh(self) -> list[Card]:
        """Written cards that are not shown as the replacement of a superseded one."""
        replacing = {s.by.id for s in self.superseded if s.by}
        return [c for c in self.written if c.id not in replacing]

    @property
    def summary_changed(self) -> bool:
        return self.summary_before != self.summary_after

    @property
    def pins_added(self) -> list[str]:
        return [p for p in self.pins_after if p not in self.pins_before]

    @property
    def pins_removed(self) -> list[str]:
        return [p for p in self.pins_before if p not in self.pins_after]

    @property
    def card_count(self) -> int:
        return sum(len(x) for x in (self.written, self.superseded, self.expired, self.deleted,
                                    self.restored, self.questioned, self.edited, self.removed))

    def to_json(self) -> dict[str, Any]:
        def card(c: Card) -> dict[str, Any]:
            return {"id": c.id, "type": c.type, "status": c.status, "body": c.body}

        return {"base": self.base, "tip": self.tip,
                "written": [card(c) for c in self.written],
                "superseded": [{"old": card(s.old), "by": card(s.by) if s.by else None}
                               for s in self.superseded],
                "expired": [card(c) for c in self.expired],
                "deleted": [card(c) for c in self.deleted],
                "restored": [card(c) for c in self.restored],
                "questioned": [{**card(c), "possible_change": {"said": c.possible_change.said.isoformat(),
                                                               "words": c.possible_change.words}}
                               for c in self.questioned if c.possible_change],
                "edited": [{"before": card(a), "after": card(b)} for a, b in self.edited],
                "removed": [card(c) for c in self.removed], "unreadable": self.unreadable,
                "summary": {"changed": self.summary_changed, "before": self.summary_before,
                            "after": self.summary_after},
                "pins": {"added": self.pins_added, "removed": self.pins_removed},
                "files": self.files}


def changes(repo: PairRepo, base: str, tip: str) -> ChangeSet:
    """What going from ``base`` to ``tip`` (commits or trees) does to cards, summary, pins."""
    result = ChangeSet(base, tip)
    status = _name_status(repo.root, base, tip)
    result.files = sorted(status)
    with _readers(repo.root, base, tip) as (before, after):
        for path, code in sorted(status.items()):
            if path.startswith("cards/") and path.endswith(".md"):
                _classify(result, path, code, before, after)
        result.summary_before = before("summary.md") or ""
        result.summary_after = after("summary.md") or ""
        result.pins_before = parse_pins(before("system/pins.md") or "").texts()
        result.pins_after = parse_pins(after("system/pins.md") or "").texts()
    return result


def commit_changes(repo: PairRepo, sha: str) -> ChangeSet:
    """What commit ``sha`` did against its first parent (a dream merge: the whole dream)."""
    parents = run_git(repo.root, "rev-list", "--parents", "-n1", sha).split()[1:]
    base = parents[0] if parents else empty_tree(repo.root)
    return changes(repo, base, sha)


def raw_diff(repo: PairRepo, base: str, tip: str) -> str:
    return run_git(repo.root, "diff", "--no-renames", base, tip, "--")


def empty_tree(root: Path) -> str:
    return run_git(root, "hash-object", "-t", "tree", "/dev/null").strip()


def _name_status(root: Path, base: str, tip: str) -> dict[str, str]:
    out = run_git(root, "diff", "--name-status", "--no-renames", "-z", base, tip, "--")
    parts = out.split("\0")
    return {parts[i + 1]: parts[i] for i in range(0, len(parts) - 1, 2) if parts[i]}


def _classify(result: ChangeSet, path: str, code: str, before: Reader, after: Reader) -> None:
    old = _card(before(path), path, result)
    new = _card(after(path), path, result)
    if code == "A" and new is not None:
        result.written.append(new)
    elif code == "D" and old is not None:
        result.removed.append(old)
    elif old is not None and new is not None:
        if old.status == new.status == "active" and new.possible_change is not None \
                and new.possible_change != old.possible_change and new.evolve(possible_change=old.possible_change,
                                                                               updated=old.updated) == old:
            result.questioned.append(new)
        elif old.status == new.status:
            result.edited.append((old, new))
        elif new.status == "stale":
            by_path = f"cards/{new.superseded_by}.md"
            by = _card(after(by_path), by_path, result) if new.superseded_by else None
            result.superseded.append(Superseded(new, by))
        elif new.status == "expired":
            result.expired.append(new)
        elif new.status == "deleted":
            result.deleted.append(new)
        else:
            result.restored.append(new)


def _card(text: str | None, path: str, result: ChangeSet) -> Card | None:
    if text is None:
        return None
    try:
        return Card.from_text(text, path)
    except CardParseError as exc:
        problem = f"{path}: {exc.reason}"
        if problem not in result.unreadable:
            result.unreadable.append(problem)
        return None


@contextmanager
def _readers(root: Path, *revs: str) -> Iterator[list[Reader]]:
    """One in-process reader of file text per commit or tree (no ``git show`` per file)."""
    repo = git.Repo(root)
    try:
        shas = [repo.rev_parse(f"{rev}^{{tree}}").binsha for rev in revs]
        trees = [git.Tree(repo, sha, git.Tree.tree_id << 12, "") for sha in shas]
        yield [_tree_reader(tree) for tree in trees]
    finally:
        repo.close()


def _tree_reader(tree: Any) -> Reader:
    def read(path: str) -> str | None:
        try:
            data: bytes = (tree / path).data_stream.read()
        except KeyError:
            return None
        return data.decode("utf-8", errors="replace")

    return read
