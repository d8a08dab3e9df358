"""Running dreams: one compaction event in, one merge commit on main out (or nothing).

A dream takes the window a compaction event evicted, asks an extractor (offline rules or
a model) what survives, commits those decisions in its own worktree (``apply``), and
merges them into main as one ``dream: ...`` commit (``worktree``). The order of the steps
is what makes it safe to kill at any moment:

1. one dream per pair: ``flock`` on ``.memfs/dream.lock`` (non-blocking; held → "busy");
2. recovery of dead dreams, under the pair lock (half-done merge, worktrees, branches);
3. an event whose ``Memfs-Event`` trailer is already on main was dreamed by a process
   killed before it could delete the event file: delete it now, do not dream twice;
4. commit the history files (the turn does not), then a worktree + branch from main's
   HEAD; read window, cards and summary *at that commit*;
5. extract, apply, merge under the pair lock, and only then delete the event file.
   In review mode (``dream_merge = review``) step 5 keeps the branch as a proposal
   instead, and the event stays pending until the user accepts or rejects it
   (``agent/dream/review.py``); a proposed event is never dreamed again meanwhile.

Any failure leaves main untouched and the event pending, with ``attempts`` and
``last_error`` updated and a line in ``.memfs/dream.log``. The subprocess entry point is
``python -m memfs.agent.dream`` (``agent/dream/__main__.py``), started by ``spawn_dream``.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs.agent.dream import worktree
from memfs.agent.dream.apply import apply_ops, due_expiries
from memfs.agent.dream.ops import Extraction

from memfs.cards import Card, utcnow
from memfs.cardstore import load_cards
from memfs.compaction import CompactionEvent, pending_events, remove_event, save_event
from memfs.errors import BadInputError, MemfsError
from memfs.gitio import DREAM, message
from memfs.history import Message, format_ts, read_session
from memfs.lock import pid_alive

if TYPE_CHECKING:
    from memfs.agent.llm.base import LLM

    from memfs.store import MemoryPair

Extractor = Callable[[Sequence[Message], Sequence[Card], str, dt.datetime], Extraction]
"""``extractor(window, active_cards, summary, now) -> Extraction``."""

LOG = Path(".memfs") / "dream.log"
STATUS = Path(".memfs") / "dream-status.json"
LOCK = Path(".memfs") / "dream.lock"
PAUSE_ENV = "MEMFS_DREAM_PAUSE_AT"
"""Test hook: the name of a step (``worktree``, ``apply``, ``merge``) to sleep at."""


@dataclass
class DreamResult:
    """What one dream did. ``status``: merged | proposed | already-dreamed | failed | busy."""

    event: str
    status: str
    merge: str | None = None
    proposal: str | None = None
    """In review mode: the ``dream/review/...`` branch the finished dream waits on."""
    commits: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"event": self.event, "status": self.status, "merge": self.merge,
                "proposal": self.proposal, "commits": self.commits, "notes": self.notes,
                "error": self.error}


@dataclass
class PendingRun:
    """The outcome of ``run_pending``: busy (another dream holds the lock) or the results."""

    busy: bool
    results: list[DreamResult] = field(default_factory=list)


# -- public entry points -----------------------------------------------------------------


def dream_pending(pair: MemoryPair, llm: LLM | None = None, *, wait: float = 60.0) -> list[str]:
    """Dream every pending window, oldest first; returns the merge commits made (including
    those of another process's dream that this call waited for)."""
    run = run_pending(pair, llm, wait=wait)
    return [r.merge for r in run.results if r.merge and r.status in ("merged", "already-dreamed")]


def run_pending(pair: MemoryPair, llm: LLM | None = None, *, now: dt.datetime | None = None,
                extractor: Extractor | None = None, wait: float = 0.0) -> PendingRun:
    """Dream every pending window; ``busy`` if another dream of this pair is running.

    With ``wait`` > 0, a running dream is waited for (polling its lock) for up to ``wait``
    seconds; the windows it merged meanwhile are reported as ``already-dreamed`` with
    their merge commit, and whatever is still pending is dreamed here."""
    before = [e.id for e in pending_events(pair.root)]
    deadline = time.monotonic() + wait
    waited = False
    while True:
        with dream_lock(pair.root) as acquired:
            if acquired:
                return _run_locked(pair, llm, now, extractor, before if waited else [])
        if time.monotonic() >= deadline:
            return PendingRun(busy=True)
        waited = True
        time.sleep(0.1)


def _run_locked(pair: MemoryPair, llm: LLM | None, now: dt.datetime | None,
                extractor: Extractor | None, waited_for: Sequence[str]) -> PendingRun:
    _recover(pair)
    events = [e for e in pending_events(pair.root) if not worktree.is_proposed(pair.root, e.id)]
    still = {e.id for e in events}
    results = []
    for event_id in waited_for:
        merge = None if event_id in still else worktree.already_merged(pair.root, event_id)
        if merge:
            results.append(DreamResult(event_id, "already-dreamed", merge=merge,
                                       notes=["dreamed by the run this call waited for"]))
    if events and extractor is None:
        extractor = make_extractor(llm or dream_llm(pair), pair)
    results += [dream_once(pair, e, llm, now, extractor=extractor) for e in events]
    return PendingRun(busy=False, results=results)


def dream_once(pair: MemoryPair, event: CompactionEvent, llm: LLM | None = None,
               now: dt.datetime | None = None, *,
               extractor: Extractor | None = None) -> DreamResult:
    """Dream one compaction event. Never raises for a failed dream: see ``status``."""
    with dream_lock(pair.root) as acquired:
        if not acquired:
            return DreamResult(event.id, "busy")
        _recover(pair)
        with _status(pair.root, event.id):
            done = worktree.already_merged(pair.root, event.id)
            if done:
                remove_event(pair.root, event.id)
                _log(pair.root, f"{event.id}: already dreamed in {done[:10]}; event removed")
                return DreamResult(event.id, "already-dreamed", merge=done)
            if worktree.is_proposed(pair.root, event.id):
                return DreamResult(event.id, "proposed",
                                   proposal=worktree.review_branch(event.id),
                                   notes=["already proposed; waiting for review"])
            return _dream(pair, event, extractor or make_extractor(llm or dream_llm(pair), pair),
                          now or pair.now())


def dream_llm(pair: MemoryPair) -> LLM:
    """The model used for dreaming: its own provider/model settings, else the chat ones."""
    from memfs.agent.llm.registry import get_llm

    config = pair.config
    provider = config.dream_provider or config.llm_provider
    model = config.dream_model or (None if config.dream_provider else config.llm_model)
    return get_llm(provider, model)


def make_extractor(llm: LLM, pair: MemoryPair | None = None) -> Extractor:
    """The model's tool call, or offline the embedding extractor (with the pair's own embedding
    model) fronting the rules; with no pair, or ``offline_extractor = "rules"``, the rules alone."""
    if llm.name == "offline":
        from memfs.agent.dream.extract_offline import OfflineExtractor

        if pair is None or pair.config.offline_extractor == "rules":
            return OfflineExtractor(None)
        return OfflineExtractor(pair.store.embedder)

    from memfs.agent.dream.extract_llm import extract_with_llm

    def extract(window: Sequence[Message], cards: Sequence[Card], summary: str,
                now: dt.datetime) -> Extraction:
        return extract_with_llm(llm, window, cards, summary, now)

    return extract


# -- one dream ---------------------------------------------------------------------------


def _dream(pair: MemoryPair, event: CompactionEvent, extractor: Extractor,
           now: dt.datetime) -> DreamResult:
    root = pair.root
    result = DreamResult(event.id, "failed")
    tree: worktree.Worktree | None = None
    notes = _NoteHandler(result.notes)
    logging.getLogger("memfs.agent.dream").addHandler(notes)
    try:
        _commit_history(pair, event)
        tree = worktree.create(root)
        _checkpoint(root, "worktree")
        window = read_window(tree.path, event)
        cards, _ = load_cards(root, tree.base)
        active = [c for c in cards if c.status == "active"]
        summary = _read(tree.path / "summary.md")
        extraction = due_expiries(extractor(window, active, summary, now), active, now.date())
        apply_ops(pair.repo, tree.path, extraction, {c.id: c for c in cards}, now, event,
                  result.notes, window=window)
        result.commits = worktree.branch_subjects(root, tree)
        kept = bool(result.commits)
        if not kept:
            _nothing_kept(pair, tree, event)
        _checkpoint(root, "apply")
        msg = merge_message(event, result.commits)
        _checkpoint(root, "merge")
        if pair.config.dream_merge == "review" and kept:
            result.proposal = worktree.keep_for_review(root, tree, event.id).branch
            result.status, tree = "proposed", None
        else:
            with pair.repo.lock():
                result.merge = worktree.merge(root, tree, msg)
            result.status = "merged"
    except MemfsError as exc:
        result.error = str(exc)
        _fail(root, event, result)
    finally:
        logging.getLogger("memfs.agent.dream").removeHandler(notes)
        if tree is not None:
            worktree.remove(root, tree)
    if result.status == "merged":
        remove_event(root, event.id)
        _log(root, f"{event.id}: merged {result.merge} ({merge_subject(result.commits)})"
             + "".join(f"\n  {n}" for n in result.notes))
    elif result.status == "proposed":
        _log(root, f"{event.id}: proposed on {result.proposal} for review "
             f"({merge_subject(result.commits)})")
    return result


def _commit_history(pair: MemoryPair, event: CompactionEvent) -> None:
    """The conversation path runs no git: the history a dream reads is committed here,
    under the pair lock, before the dream's worktree is made from main."""
    from memfs.turn import commit_history

    with pair.repo.lock():
        commit_history(pair, f"for dream {event.id}")


class _NoteHandler(logging.Handler):
    """Collects what the extractors log (dropped ops) into the dream's notes and log file.

    The logger is one per process, and a server dreams several pairs at once on its pool's
    threads: a note is this dream's only if it was logged on this dream's thread, or one
    user's dropped ops (their words, their card ids) would land in another user's notes."""

    def __init__(self, notes: list[str]) -> None:
        super().__init__(logging.INFO)
        self.notes = notes
        self.thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.notes.append(record.getMessage())


def _nothing_kept(pair: MemoryPair, tree: worktree.Worktree, event: CompactionEvent) -> None:
    """An empty commit, so the merge still records that this window was dreamed."""
    from memfs.gitio import actor_env, run_git

    msg = message("summary", f"unchanged: nothing to keep from {event.window_trailer()}", DREAM)
    run_git(tree.path, "commit", "-q", "--allow-empty", "-m", msg, env=actor_env(DREAM))


def read_window(work: Path, event: CompactionEvent) -> list[Message]:
    """The event's messages, from the history committed at the dream's base commit."""
    window: list[Message] = []
    for session in dict.fromkeys(s.session for s in event.spans):
        path = work / "history" / f"{session}.jsonl"
        if not path.exists():
            raise BadInputError(f"event {event.id}: history/{session}.jsonl is not committed "
                                "on main yet; the window stays pending")
        window += [m for m in read_session(path) if event.covers(m)]
    if not window:
        raise BadInputError(f"event {event.id}: none of its messages "
                            f"({event.window_trailer()}) are committed on main yet")
    return window


def merge_subject(commits: Sequence[str]) -> str:
    """``3 new cards, 1 superseded, 1 expired, summary rewritten`` from the branch subjects."""
    counts: dict[str, int] = {}
    for subject in commits:
        key = subject.split(" ", 2)[1] if subject.startswith("card: ") else subject
        counts[key] = counts.get(key, 0) + 1
    words = [("write", "new card", "new cards"), ("supersede", "superseded", "superseded"),
             ("merge", "merged", "merged"), ("expire", "expired", "expired"),
             ("close", "closed", "closed"), ("flag", "may have changed", "may have changed")]
    parts = [f"{counts[k]} {one if counts[k] == 1 else many}" for k, one, many in words
             if counts.get(k)]
    if counts.get("summary: rewrite"):
        parts.append("summary rewritten")
    return ", ".join(parts) or "nothing new to keep"


def merge_message(event: CompactionEvent, commits: Sequence[str]) -> str:
    return message("dream", merge_subject(commits), DREAM, body="\n".join(commits),
                   extra={"Memfs-Event": event.id, "Memfs-Window": event.window_trailer()})


def _fail(root: Path, event: CompactionEvent, result: DreamResult) -> None:
    event.attempts += 1
    event.last_error = result.error
    save_event(root, event)
    _log(root, f"{event.id}: dream failed (attempt {event.attempts}), window stays pending: "
         f"{result.error}" + "".join(f"\n  {n}" for n in result.notes))


def _recover(pair: MemoryPair) -> None:
    proposals = {worktree.review_branch(e.id) for e in pending_events(pair.root)}
    with pair.repo.lock():
        notes = worktree.recover(pair.root, keep=proposals)
    for note in notes:
        _log(pair.root, f"recovery: {note}")


# -- the lock, the status file, the log ------------------------------------------------------

_held: set[str] = set()


@contextmanager
def dream_lock(root: Path) -> Iterator[bool]:
    """Try to become the pair's one dream; yields False at once if another dream is running.

    ``flock`` is released by the kernel when its process dies, so a killed dream never
    blocks the next one. Re-entrant within a process (``run_pending`` → ``dream_once``).
    """
    key = str(root.resolve())
    if key in _held:
        yield True
        return
    (root / LOCK).parent.mkdir(exist_ok=True)
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        _held.add(key)
        try:
            yield True
        finally:
            _held.discard(key)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def _status(root: Path, event_id: str) -> Iterator[None]:
    _write_status(root, {"pid": os.getpid(), "started": format_ts(utcnow()), "event": event_id,
                         "step": "start"})
    try:
        yield
    finally:
        (root / STATUS).unlink(missing_ok=True)


def _write_status(root: Path, data: dict[str, Any]) -> None:
    from memfs.atomic import atomic_write

    atomic_write(root / STATUS, json.dumps(data) + "\n")


def read_status(root: Path) -> dict[str, Any] | None:
    """The running dream's status (pid, started, event, step), or None if none is running."""
    try:
        data: dict[str, Any] = json.loads((root / STATUS).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return data if pid_alive(data.get("pid")) else None




def _checkpoint(root: Path, step: str) -> None:
    """Record the step; under the test hook ``MEMFS_DREAM_PAUSE_AT=step``, sleep there."""
    data = read_status(root) or {"pid": os.getpid(), "started": format_ts(utcnow())}
    paused = os.environ.get(PAUSE_ENV) == step
    _write_status(root, {**data, "step": step, "paused": paused})
    if paused:
        time.sleep(float(os.environ.get("MEMFS_DREAM_PAUSE_SECONDS", "600")))


def _log(root: Path, line: str) -> None:
    (root / LOG).parent.mkdir(exist_ok=True)
    with (root / LOG).open("a", encoding="utf-8") as handle:
        handle.write(f"{format_ts(utcnow())} [{os.getpid()}] {line}\n")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


# -- the subprocess ---------------------------------------------------------------------------

_CONFIG_ENV = {"dream_provider": "MEMFS_DREAM_PROVIDER", "dream_model": "MEMFS_DREAM_MODEL",
               "llm_provider": "MEMFS_LLM_PROVIDER", "llm_model": "MEMFS_LLM_MODEL"}


def spawn_dream(pair: MemoryPair, event_id: str | None = None) -> subprocess.Popen[bytes]:
    """Start ``python -m memfs.agent.dream`` for the pair as a detached OS process.

    It runs in its own session (a Ctrl-C in the chat does not kill it), writes to
    ``.memfs/dream.log``, and gets the pair's provider settings through ``MEMFS_*``.
    The caller may ``wait()`` or forget it; a second spawn while one runs reports busy.
    """
    env = dict(os.environ)
    for name, var in _CONFIG_ENV.items():
        value = getattr(pair.config, name)
        if value:
            env[var] = str(value)
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    args = [sys.executable, "-m", "memfs.agent.dream", "--home", str(pair.store.home),
            "--user", pair.user, "--character", pair.character]
    if event_id:
        args += ["--event", event_id]
    (pair.root / LOG).parent.mkdir(exist_ok=True)
    with (pair.root / LOG).open("ab") as log:
        return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, env=env, cwd=str(pair.root),
                                start_new_session=True)
