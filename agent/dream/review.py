"""Review mode: the user approves what dreaming remembers before it is remembered.

With ``dream_merge = review`` a finished dream is not merged: it waits on its
``dream/review/<event id>`` branch (``worktree.keep_for_review``) with its compaction
event still pending, so its messages stay out of the window and no other dream takes
that window. A proposal is named by its event id. The verbs live here once; ``memfs
dream --list/--accept/--reject`` and the inspector are adapters over them.

- **accept** makes the dream's usual merge commit (author ``memfs-dream``, the
  ``Memfs-Event`` and ``Memfs-Window`` trailers): exactly what auto mode would have made.
  The user's changes still win: if a file the dream changes moved on main since it was
  read, the proposal is dropped and its window is dreamed (and proposed) again from the
  user's version; uncommitted edits of those files only postpone the accept.
- **reject** drops the branch and records an empty ``dream: rejected ...`` commit by
  ``user`` carrying the same two trailers, so ``worktree.already_merged`` and the window
  derivation (``memfs/window.py``) count the window as dreamed: it is not proposed again
  and its messages leave the window (they stay in ``history/``, searchable). The tip that
  was rejected is named in a ``Memfs-Rejected`` trailer.

Each verb runs under the pair lock; a verb killed half-way leaves a proposal whose event
is already on main, which ``proposals`` cleans up the next time it looks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memfs.agent.dream import worktree
from memfs.agent.dream.runner import _log as dream_log
from memfs.agent.dream.runner import merge_message, merge_subject

from memfs.changes import ChangeSet, changes, raw_diff
from memfs.compaction import CompactionEvent, pending_events, remove_event
from memfs.errors import BadInputError, ConflictError
from memfs.gitio import USER, run_git

if TYPE_CHECKING:
    from memfs.repo import PairRepo
    from memfs.store import MemoryPair


@dataclass(frozen=True)
class Proposal:
    """A finished dream waiting for the user: its branch, where it forked, what it did."""

    id: str
    branch: str
    base: str
    tip: str
    event: CompactionEvent
    commits: tuple[str, ...]

    @property
    def subject(self) -> str:
        """``2 new cards, 1 superseded, summary rewritten``: the merge subject it would get."""
        return merge_subject(self.commits)

    def changes(self, repo: PairRepo) -> ChangeSet:
        return changes(repo, self.base, self.tip)

    def diff(self, repo: PairRepo) -> str:
        return raw_diff(repo, self.base, self.tip)

    def to_json(self, repo: PairRepo | None = None) -> dict[str, Any]:
        """The ``memfs dream --list --json`` entry (with ``changes`` when ``repo`` is given)."""
        doc: dict[str, Any] = {"id": self.id, "branch": self.branch, "base": self.base,
                               "tip": self.tip, "subject": self.subject,
                               "window": self.event.window_trailer(),
                               "created": self.event.created, "commits": list(self.commits)}
        if repo is not None:
            doc["changes"] = self.changes(repo).to_json()
        return doc


def proposals(pair: MemoryPair) -> list[Proposal]:
    """Every dream waiting for review, oldest first."""
    found = []
    for event in pending_events(pair.root):
        tree = worktree.proposal_tree(pair.root, event.id)
        if tree is None:
            continue
        if worktree.already_merged(pair.root, event.id):
            _settle(pair, event, tree.branch)
            continue
        subjects = tuple(worktree.branch_subjects(pair.root, tree))
        tip = run_git(pair.root, "rev-parse", f"refs/heads/{tree.branch}").strip()
        found.append(Proposal(event.id, tree.branch, tree.base, tip, event, subjects))
    return found


def get(pair: MemoryPair, proposal_id: str) -> Proposal:
    """The proposal named by its id (or a unique start of it)."""
    waiting = proposals(pair)
    exact = [p for p in waiting if p.id == proposal_id]
    matches = exact or [p for p in waiting if proposal_id and p.id.startswith(proposal_id)]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(p.id for p in waiting) or "none"
    if matches:
        raise BadInputError(f"proposal {proposal_id!r}: ambiguous (matches {len(matches)}: "
                            f"{known})")
    raise BadInputError(f"proposal {proposal_id!r}: no such dream waiting for review "
                        f"(waiting: {known})")


def accept(pair: MemoryPair, proposal_id: str) -> str:
    """Merge the proposal into main as the usual dream merge commit; returns its sha."""
    root = pair.root
    with pair.repo.lock():
        proposal = get(pair, proposal_id)
        tree = worktree.proposal_tree(root, proposal.id)
        assert tree is not None  # get() found it under this same lock
        raced = worktree.raced_paths(root, tree)
        if raced:
            worktree.drop_branch(root, proposal.branch)
            dream_log(root, f"{proposal.id}: proposal dropped at accept, {', '.join(raced)} "
                      "changed on main since; the window will be dreamed again")
            raise ConflictError(
                f"{', '.join(raced)}: changed on main since this dream read it; your change "
                "wins, so the proposal was dropped and its window will be dreamed (and "
                "proposed) again from your version at the next dream")
        merge = worktree.merge(root, tree, merge_message(proposal.event, proposal.commits))
        remove_event(root, proposal.id)
        worktree.drop_branch(root, proposal.branch)
    dream_log(root, f"{proposal.id}: accepted, merged {merge} ({proposal.subject})")
    return merge


def reject(pair: MemoryPair, proposal_id: str) -> str:
    """Drop the proposal; its window counts as dreamed. Returns the recording commit."""
    root = pair.root
    with pair.repo.lock():
        proposal = get(pair, proposal_id)
        sha = pair.repo.record(
            "dream", f"rejected {proposal.id} ({proposal.subject})", USER,
            body="The user rejected this dream: nothing of it was kept, and its window is "
                 "not dreamed again.\n\n" + "\n".join(proposal.commits),
            extra={"Memfs-Event": proposal.id, "Memfs-Window": proposal.event.window_trailer(),
                   "Memfs-Rejected": proposal.tip})
        remove_event(root, proposal.id)
        worktree.drop_branch(root, proposal.branch)
    dream_log(root, f"{proposal.id}: rejected by the user in {sha[:10]}")
    return sha


def _settle(pair: MemoryPair, event: CompactionEvent, branch: str) -> None:
    """A proposal whose event is already on main (a verb killed half-way): finish it."""
    with pair.repo.lock():
        remove_event(pair.root, event.id)
        worktree.drop_branch(pair.root, branch)
