"""The git side of a dream: its own worktree and branch, the merge into main, and recovery.

A dream never touches ``main`` until its last step. It works in a worktree under
``.memfs/worktrees/`` (git-ignored, so the user's tree never shows it) on a branch
``dream/<timestamp>`` made from main's HEAD; the only step that changes ``main`` is one
``git merge --no-ff`` run in the main working tree under the pair lock. So a dream killed
at any point (``kill -9``) leaves, at worst, a worktree, a branch, or a half-done merge
(``MERGE_HEAD``) behind; ``recover`` removes all three on the next run.

The user's changes win. The dream read every file it changes at the base commit; if any of
those files is different on main now (the user committed an edit, a deletion, or a card
with the same id) or has uncommitted changes in the main working tree, the merge is not
attempted: ``ConflictError``, and the window stays pending for the next dream, which will
read the user's version. Files the dream did not touch merge cleanly.

In review mode (``dream_merge = review``) a finished dream is not merged: its worktree is
removed and its branch renamed ``dream/review/<event id>``, a *proposal* that ``recover``
keeps for as long as its event is pending (``agent/dream/review.py`` accepts or rejects it).
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from memfs.errors import ConflictError, GitError
from memfs.gitio import DREAM, actor_env, run_git

WORKTREES = Path(".memfs") / "worktrees"
BRANCH_PREFIX = "dream/"
REVIEW_PREFIX = "dream/review/"
MAIN = "main"


@dataclass(frozen=True)
class Worktree:
    """A dream's working copy: where it is, its branch, and the main commit it started from."""

    path: Path
    branch: str
    base: str


def main_head(root: Path) -> str:
    return run_git(root, "rev-parse", f"refs/heads/{MAIN}").strip()


def create(root: Path, when: dt.datetime | None = None) -> Worktree:
    """A new worktree on a new ``dream/<YYYYmmdd-HHMMSS>`` branch from main's HEAD."""
    stamp = (when or dt.datetime.now(dt.UTC)).strftime("%Y%m%d-%H%M%S")
    existing = set(dream_branches(root))
    name, n = stamp, 1
    while f"{BRANCH_PREFIX}{name}" in existing or (root / WORKTREES / name).exists():
        n += 1
        name = f"{stamp}-{n}"
    base = main_head(root)
    path = root / WORKTREES / name
    path.parent.mkdir(parents=True, exist_ok=True)
    branch = f"{BRANCH_PREFIX}{name}"
    run_git(root, "worktree", "add", "-q", "-b", branch, str(path), base)
    return Worktree(path, branch, base)


def remove(root: Path, tree: Worktree) -> None:
    """Remove the worktree and its branch (after a merge the merge commit keeps its commits)."""
    try:
        run_git(root, "worktree", "remove", "--force", str(tree.path))
    except GitError:
        shutil.rmtree(tree.path, ignore_errors=True)
    run_git(root, "worktree", "prune")
    try:
        run_git(root, "branch", "-D", tree.branch)
    except GitError:
        pass  # never created, or already gone: nothing to remove


def dream_branches(root: Path) -> list[str]:
    out = run_git(root, "for-each-ref", "--format=%(refname:short)", f"refs/heads/{BRANCH_PREFIX}")
    return [line for line in out.splitlines() if line]


def recover(root: Path, keep: Collection[str] = ()) -> list[str]:
    """Clean up after dreams that died; call holding the dream lock and the pair lock.

    Holding the dream lock means no dream is alive, so every leftover worktree and
    ``dream/*`` branch is stale, except the proposals named in ``keep`` (finished dreams
    waiting for review). Returns one line per thing cleaned, for the log.
    """
    notes = []
    if abort_stale_merge(root):
        notes.append("aborted a half-done dream merge in the main working tree")
    folder = root / WORKTREES
    leftovers = sorted(p for p in folder.iterdir()) if folder.is_dir() else []
    for path in leftovers:
        try:
            run_git(root, "worktree", "remove", "--force", str(path))
        except GitError:
            shutil.rmtree(path, ignore_errors=True)
        notes.append(f"removed stale worktree {path.name}")
    run_git(root, "worktree", "prune")
    for branch in dream_branches(root):
        if branch in keep:
            continue
        run_git(root, "branch", "-D", branch)
        notes.append(f"deleted stale branch {branch}")
    return notes


def abort_stale_merge(root: Path) -> bool:
    """Abort a dream merge left half-done in the main tree; a person's own merge is left alone."""
    if not (root / ".git" / "MERGE_HEAD").exists():
        return False
    try:
        author = run_git(root, "log", "-1", "--format=%an", "MERGE_HEAD").strip()
    except GitError:
        author = ""
    if author != DREAM.name:
        return False
    _abort_merge(root)
    return True


def _abort_merge(root: Path) -> None:
    try:
        run_git(root, "merge", "--abort")
    except GitError:
        run_git(root, "reset", "--merge")


def changed_paths(root: Path, tree: Worktree) -> list[str]:
    out = run_git(root, "diff", "--name-only", "--no-renames", tree.base, tree.branch, "--")
    return [line for line in out.splitlines() if line]


def blob(root: Path, rev: str, path: str) -> str | None:
    """The blob id of ``path`` at ``rev``, or None if it does not exist there."""
    try:
        return run_git(root, "rev-parse", "--verify", "--quiet", f"{rev}:{path}").strip() or None
    except GitError:
        return None


def merge(root: Path, tree: Worktree, msg: str) -> str:
    """Merge the dream branch into main in the main working tree; the user's changes win.

    Call under the pair lock. Raises ``ConflictError`` (nothing changed on main) when a file
    the dream changes was changed by the user since the dream read it, or when the merge
    itself fails (conflict, or the pre-merge-commit hook refusing it).
    """
    branch_ref = run_git(root, "symbolic-ref", "-q", "HEAD").strip()
    if branch_ref != f"refs/heads/{MAIN}":
        raise ConflictError(f"the pair's working tree is on {branch_ref or 'a detached HEAD'}, "
                            f"not {MAIN}; the dream waits")
    paths = changed_paths(root, tree)
    raced = raced_paths(root, tree, paths)
    if raced:
        raise ConflictError(f"{', '.join(raced)}: changed on main since the dream read it; "
                            "the user's change wins and the window stays pending")
    dirty = _dirty(root, paths)
    if dirty:
        raise ConflictError(f"{', '.join(dirty)}: uncommitted changes in the working tree; "
                            "the user's change wins and the window stays pending")
    try:
        run_git(root, "merge", "--no-ff", "--no-edit", "-m", msg, tree.branch,
                env=actor_env(DREAM))
    except GitError as exc:
        if (root / ".git" / "MERGE_HEAD").exists():
            _abort_merge(root)
        raise ConflictError(f"merging {tree.branch} failed, nothing changed on main: "
                            f"{exc.stderr or exc}") from exc
    return main_head(root)


def raced_paths(root: Path, tree: Worktree, paths: list[str] | None = None) -> list[str]:
    """Files the dream changes that are different on main now than when the dream read them."""
    head = main_head(root)
    return [p for p in (changed_paths(root, tree) if paths is None else paths)
            if blob(root, head, p) != blob(root, tree.base, p)]


def _dirty(root: Path, paths: list[str]) -> list[str]:
    if not paths:
        return []
    out = run_git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", *paths)
    return sorted({entry[3:] for entry in out.split("\0") if len(entry) > 3})


def already_merged(root: Path, event_id: str) -> str | None:
    """The merge commit on main that dreamed ``event_id``, if there is one."""
    out = run_git(root, "log", "--first-parent", "-F", f"--grep=Memfs-Event: {event_id}",
                  "--format=%H", "-n1", f"refs/heads/{MAIN}", "--")
    return out.strip() or None


def branch_subjects(root: Path, tree: Worktree) -> list[str]:
    """Subjects of the dream's commits, oldest first."""
    out = run_git(root, "log", "--reverse", "--format=%s", f"{tree.base}..{tree.branch}", "--")
    return [line for line in out.splitlines() if line]


# -- proposals (review mode) --------------------------------------------------------------


def review_branch(event_id: str) -> str:
    """The branch a finished dream of ``event_id`` waits on in review mode."""
    return f"{REVIEW_PREFIX}{event_id}"


def is_proposed(root: Path, event_id: str) -> bool:
    """Whether a finished dream of ``event_id`` waits for review (so it is not redreamed)."""
    return _ref_exists(root, f"refs/heads/{review_branch(event_id)}")


def _ref_exists(root: Path, ref: str) -> bool:
    try:
        run_git(root, "rev-parse", "--verify", "--quiet", ref)
    except GitError:
        return False
    return True


def keep_for_review(root: Path, tree: Worktree, event_id: str) -> Worktree:
    """Keep a finished dream as a proposal: the worktree goes, the branch stays, renamed."""
    try:
        run_git(root, "worktree", "remove", "--force", str(tree.path))
    except GitError:
        shutil.rmtree(tree.path, ignore_errors=True)
    run_git(root, "worktree", "prune")
    branch = review_branch(event_id)
    run_git(root, "branch", "-M", tree.branch, branch)
    return Worktree(tree.path, branch, tree.base)


def proposal_tree(root: Path, event_id: str) -> Worktree | None:
    """A pending proposal as a ``Worktree`` (no working copy: ``merge`` needs none)."""
    branch = review_branch(event_id)
    if not _ref_exists(root, f"refs/heads/{branch}"):
        return None
    base = run_git(root, "merge-base", f"refs/heads/{MAIN}", f"refs/heads/{branch}").strip()
    return Worktree(root / WORKTREES / event_id, branch, base)


def drop_branch(root: Path, branch: str) -> None:
    try:
        run_git(root, "branch", "-D", branch)
    except GitError:
        pass  # already gone: nothing to drop
