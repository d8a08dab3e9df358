"""One delivery of a dream job: dream the event if it is still pending, else do nothing.

The queue delivers a job at least once (a worker killed mid-dream leaves its job to be
delivered again), so a delivery must be safe to repeat. What makes it so lives on disk,
not in the queue:

- the compaction event file (``.memfs/events/<id>.json``) stays until a merge commit
  carries the event; a job whose event is gone and whose ``Memfs-Event`` trailer is on
  main was already applied: ``already-dreamed``, nothing is done;
- the dream lock (a ``flock`` per pair) means two workers never dream one pair at once:
  the second gets ``busy`` and the job is tried again a little later;
- ``dream_once`` checks the trailer again under the lock, so a delivery racing the one
  that merged (the event file is removed just after the merge) is a no-op too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memfs.agent.dream.runner import DreamResult, dream_once
from memfs.agent.dream.worktree import already_merged

from memfs.compaction import pending_events

if TYPE_CHECKING:
    from memfs.store import MemoryStore

RETRY_STATUSES = ("busy", "failed")
"""Statuses after which the job is worth trying again: the event is still pending."""


def deliver(store: MemoryStore, user: str, character: str, event_id: str) -> DreamResult:
    """Dream ``event_id`` of the pair once. Status: merged | already-dreamed | not-pending |
    busy | failed; only ``busy`` and ``failed`` leave the event pending."""
    pair = store.pair(user, character, create=False)
    _ = pair.repo  # NotARepoError when this home has no such pair
    event = next((e for e in pending_events(pair.root) if e.id == event_id), None)
    if event is None:
        merge = already_merged(pair.root, event_id)
        if merge:
            return DreamResult(event_id, "already-dreamed", merge=merge)
        return DreamResult(event_id, "not-pending",
                           notes=["no such pending event and no merge carries it"])
    return dream_once(pair, event)
