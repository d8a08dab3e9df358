"""One writer per pair repository at a time, and recovery from writers that died.

The lock is ``flock`` on ``.memfs/lock``: the kernel releases it when its process dies,
even under ``kill -9``, so a dead writer can never wedge the pair. What a dead writer can
leave behind is git's own ``*.lock`` files (``index.lock``, ``refs/heads/main.lock``);
holding our lock means no memfs process is inside git, so those are removed when no live
process has them open (a hand ``git commit`` in another terminal keeps its lock).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memfs.errors import LockError

DEFAULT_TIMEOUT = 60.0
ORPHAN_PATIENCE = 10.0


@contextmanager
def pair_lock(root: Path, timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold the pair's write lock; re-entrant within one process via ``_held``."""
    key = str(root.resolve())
    held = _held()
    if held.get(key):
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    state = root / ".memfs"
    state.mkdir(exist_ok=True)
    fd = os.open(state / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, root, timeout)
        # The holder's pid, for a person looking; padded and written in place, because
        # truncating the file first cost a journal commit per turn (~5 ms on a busy disk).
        os.pwrite(fd, f"{os.getpid():<15}\n".encode(), 0)
        held[key] = 1
        recover_git_locks(root / ".git")
        try:
            yield
        finally:
            held.pop(key, None)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


_local = threading.local()


def _held() -> dict[str, int]:
    """Re-entrancy counts of this thread: another thread must really wait on the flock."""
    if not hasattr(_local, "held"):
        _local.held = {}
    held: dict[str, int] = _local.held
    return held


def _acquire(fd: int, root: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise LockError(f"{root}: another memfs process has held the lock for {timeout:.0f}s") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def recover_git_locks(git_dir: Path) -> list[Path]:
    """Remove git lock files that no live process holds; return what was removed."""
    if not git_dir.is_dir():
        return []
    candidates = [git_dir / "index.lock", git_dir / "HEAD.lock", git_dir / "config.lock"]
    candidates += list((git_dir / "refs").rglob("*.lock"))
    candidates += list((git_dir / "worktrees").glob("*/index.lock"))
    stale = [p for p in candidates if p.exists()]
    if not stale:
        return []
    deadline = time.monotonic() + ORPHAN_PATIENCE
    git_running = _git_processes_in(git_dir.parent)
    while git_running and time.monotonic() < deadline:
        # A writer killed mid-commit leaves its git child running: let it finish.
        time.sleep(0.05)
        git_running = _git_processes_in(git_dir.parent)
    stale = [p for p in stale if p.exists()]
    if git_running:
        return []  # a live git (a hand commit in an editor) owns them: never pull them away
    open_now = _open_files()
    removed = []
    for path in stale:
        if open_now is None and time.time() - path.stat().st_mtime < 60:
            continue  # cannot see open files here: only clearly old locks are stale
        if open_now is not None and str(path.resolve()) in open_now:
            continue
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def _git_processes_in(root: Path) -> bool:
    """Is a live ``git`` process (say a hand commit waiting in an editor) working here?"""
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    top = str(root.resolve())
    me = os.getpid()
    for pid_dir in proc.glob("[0-9]*"):
        try:
            if int(pid_dir.name) == me or (pid_dir / "comm").read_text().strip() != "git":
                continue
            cwd = os.readlink(pid_dir / "cwd")
        except OSError:
            continue
        if cwd == top or cwd.startswith(top + os.sep):  # includes .memfs/worktrees/
            return True
    return False


def _open_files() -> set[str] | None:
    """Every file some process has open (Linux ``/proc``), or None where we cannot tell."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return None
    seen: set[str] = set()
    for fd_dir in proc.glob("[0-9]*/fd"):
        try:
            for entry in fd_dir.iterdir():
                try:
                    seen.add(os.readlink(entry))
                except OSError:
                    continue
        except OSError:
            continue
    return seen


def pid_alive(pid: object) -> bool:
    """Is there a live process with this pid (status files name their writer)?"""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, just not ours
    return True
