"""What undoing a commit would do, shown before it is done.

A revert is a three-way merge: base = the commit, ours = HEAD, theirs = the commit's
first parent. ``git merge-tree --write-tree`` computes exactly that without touching the
working tree or the index, once it is given a commit whose only parent is the commit to
undo and whose tree is that commit's parent's (the merge base is then the commit itself).
So the preview is the revert ``memfs revert`` would make — the same cards gone, the same
summary restored — or the same conflict, named plainly; the repository is never changed
(the two objects written are unreachable and git's gc drops them). A ``pin:`` commit
whose lines conflict is undone as pin operations, as ``revisions.revert`` does.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from memfs.changes import ChangeSet, changes, raw_diff
from memfs.errors import BadInputError
from memfs.gitio import run_git, run_git_status
from memfs.pins import parse_pins
from memfs.repo import PairRepo
from memfs.revisions import LogEntry, is_pin_commit, log, pins_reverted, resolve


@dataclass
class RevertPreview:
    """The revert of ``sha`` as it would be made now."""

    sha: str
    subject: str
    changes: ChangeSet | None
    """HEAD → after the revert; None when it would conflict."""
    diff: str = ""
    conflict: str | None = None
    conflicted: list[str] = field(default_factory=list)
    as_pin_ops: bool = False
    blocked: str | None = None
    """Why the revert would be refused right now (uncommitted changes in its files)."""

    @property
    def possible(self) -> bool:
        return self.conflict is None and self.blocked is None


def preview_revert(repo: PairRepo, rev: str) -> RevertPreview:
    """What ``memfs revert rev`` would do now, without doing it."""
    sha = resolve(repo, rev)
    entry = log(repo, 1, sha)[0]
    if not entry.parents:
        raise BadInputError(f"{rev}: the first commit of a pair cannot be reverted")
    head = repo.head()
    theirs = run_git(repo.root, "commit-tree", f"{entry.parents[0]}^{{tree}}", "-p", sha,
                     "-m", "memfs revert preview").strip()
    status, out = run_git_status(repo.root, "merge-tree", "--write-tree", "--name-only",
                                 head, theirs)
    tree, _, rest = out.partition("\n")
    if status == 0:
        preview = RevertPreview(sha, entry.subject, changes(repo, head, tree.strip()),
                                raw_diff(repo, head, tree.strip()))
        preview.blocked = _blocked(repo, preview.changes.files if preview.changes else [])
        return preview
    names, _, _ = rest.partition("\n\n")
    conflicted = sorted({n for n in names.splitlines() if n})
    if is_pin_commit(repo, entry):
        return _pin_preview(repo, entry, head)
    return RevertPreview(
        sha, entry.subject, None, conflicted=conflicted,
        conflict=f"{', '.join(conflicted)} changed again after this commit, so undoing it "
                 "would collide with the later change. Nothing will be changed; undo the "
                 "later commit first, or edit the file by hand.")


def _pin_preview(repo: PairRepo, entry: LogEntry, head: str) -> RevertPreview:
    before = repo.read_head("system/pins.md") or ""
    after = pins_reverted(repo, entry)
    change = ChangeSet(head, "(pin operations)", pins_before=parse_pins(before).texts(),
                       pins_after=parse_pins(after).texts(), files=["system/pins.md"])
    diff = "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        "a/system/pins.md", "b/system/pins.md"))
    preview = RevertPreview(entry.sha, entry.subject, change, diff, as_pin_ops=True)
    preview.blocked = _blocked(repo, ["system/pins.md"])
    return preview


def _blocked(repo: PairRepo, files: list[str]) -> str | None:
    staged = run_git(repo.root, "diff", "--cached", "--name-only").split()
    if staged:
        return (f"staged changes in {', '.join(staged[:3])}: commit or unstage them first "
                "(`git restore --staged .`)")
    if not files:
        return None
    out = run_git(repo.root, "status", "--porcelain", "-z", "--", *files)
    dirty = sorted({e[3:] for e in out.split("\0") if len(e) > 3})
    if dirty:
        return (f"uncommitted changes in {', '.join(dirty)}: commit them (or drop them) "
                "first, so the undo cannot overwrite them")
    return None
