"""Hand edits: commit what people save in their own editor, once the save has settled.

Two layers, so that the logic can be tested without a file watcher (STYLE.md habit 10):

- ``handle_changes(repo, paths)`` decides and commits. Under the pair lock it asks git
  which of ``paths`` really differ from HEAD (so memfs's own commits, a ``memfs revert``
  or a ``git checkout`` produce nothing), reads each changed file twice a moment apart
  (a file still being written is retried later, never committed), validates it with
  ``memfs.check.validate_file`` and commits exactly the bytes it validated as one
  ``edit:`` commit by ``user``. It stages those bytes in a private index, so a save that
  lands while it commits can never slip half-written into the commit, and the person's
  own ``git add`` staging is left alone. An invalid file is not committed and stays as
  saved; its problem is reported once per content.
- ``Watcher`` adapts watchdog events into ``on_paths_changed(root, paths)`` calls and
  flushes a pair's paths once no event has arrived for ``settle`` seconds (editors write
  a temp file, rename it, write twice). One worker thread does every flush, so a pair is
  never committed by two threads of the watcher at once.

``history/`` is ignored: the conversation appends to it and the turn code commits it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Self

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from memfs.atomic import atomic_write
from memfs.check import Problem, validate_file
from memfs.errors import BadInputError, ConflictError, GitError, LockError, MemfsError
from memfs.gitio import USER, actor_env, message, run_git
from memfs.repo import PairRepo

WATCHED_TOP = ("system", "cards", "summary.md", ".gitignore")
"""What a person edits by hand. ``history/`` is the conversation's; ``.memfs/`` is derived."""

IGNORED_NAMES = ("*.swp", "*.swx", "*.swo", "*~", ".#*", "#*#", "4913", "*.tmp",
                 ".memfs-*", "*.kate-swp", ".goutputstream-*", ".DS_Store")
"""Editor swap, backup, lock and temporary files (vim's ``4913`` probes a folder's write access)."""

def watched_path(rel: str) -> bool:
    """Is this repository-relative path one a hand edit of which should be committed?"""
    parts = PurePosixPath(rel).parts
    if not parts or parts[0] not in WATCHED_TOP or any(p in ("", ".", "..") for p in parts):
        return False
    name = parts[-1]
    if name.startswith(".") and rel != ".gitignore":
        return False
    return not any(fnmatch.fnmatchcase(name, pattern) for pattern in IGNORED_NAMES)


@dataclass(frozen=True)
class WatchReport:
    """What one flush did for one pair."""

    commit: str | None = None
    committed: tuple[str, ...] = ()
    """Paths in the commit (a deletion or each side of a rename included)."""
    problems: tuple[Problem, ...] = ()
    """Newly found validation problems: each file's problem is reported once per content."""
    unsettled: tuple[str, ...] = ()
    """Files that changed while being read: retry them after the next settle."""


def handle_changes(repo: PairRepo, paths: Iterable[str], *,
                   reported: dict[str, str] | None = None,
                   recheck: float = 0.05) -> WatchReport:
    """Commit the hand edits among ``paths`` (repository-relative files or folders).

    ``reported`` maps a path to the blob id of the invalid content already reported, so
    that a watcher does not repeat itself on every event; pass the same dict each call.
    """
    wanted = sorted({p for p in paths if watched_path(p)})
    if not wanted:
        return WatchReport()
    seen = {} if reported is None else reported
    with repo.lock():
        changed = _differing(repo, wanted)
        for path in [p for p in seen if p not in changed and _under(p, wanted)]:
            del seen[path]
        stable, unsettled = _read_stable(repo, changed, recheck)
        blobs: dict[str, bytes | None] = {}
        problems: list[Problem] = []
        for path, data in stable.items():
            found = [] if data is None else validate_file(path, data)
            if not found:
                blobs[path] = data
                seen.pop(path, None)
            elif data is not None and seen.get(path) != blob_id(data):
                seen[path] = blob_id(data)
                problems += found
        _hold_renames_of_invalid(repo, blobs, stable, {p.path for p in problems} | set(seen))
        sha = _commit_exact(repo, blobs) if blobs else None
    return WatchReport(sha, tuple(sorted(blobs)) if sha else (), tuple(problems),
                       tuple(unsettled))


def _hold_renames_of_invalid(repo: PairRepo, blobs: dict[str, bytes | None],
                             stable: dict[str, bytes | None], invalid: set[str]) -> None:
    """A file renamed to a name that does not validate (``mv c-1.md c-2.md`` with ``id:
    c-1`` inside) must not be committed as a bare deletion: the memory would vanish until
    the user notices. Its deletion waits until the new file validates."""
    moved_to = {blob_id(data) for path, data in stable.items()
                if path in invalid and data is not None}
    deleted = [path for path, data in blobs.items() if data is None]
    if not moved_to or not deleted:
        return
    head = _head_blobs(repo, deleted)
    for path in deleted:
        if head.get(path) in moved_to:
            del blobs[path]


def _under(path: str, prefixes: list[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def blob_id(data: bytes) -> str:
    """The git (sha-1) object id of a file with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _differing(repo: PairRepo, paths: list[str]) -> list[str]:
    """Files under ``paths`` whose working-tree state differs from HEAD (git's view)."""
    out = run_git(repo.root, "status", "--porcelain=v1", "-z", "--no-renames",
                  "--untracked-files=all", "--", *paths)
    found = [entry[3:] for entry in out.split("\0") if len(entry) > 3 and watched_path(entry[3:])]
    head = _head_blobs(repo, found)
    differing = []
    for path in found:
        full = repo.root / path
        if full.is_file():
            if head.get(path) != blob_id(full.read_bytes()):
                differing.append(path)
        elif path in head:
            differing.append(path)
    return sorted(differing)


def _head_blobs(repo: PairRepo, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    out = run_git(repo.root, "ls-tree", "-z", "HEAD", "--", *paths)
    blobs = {}
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        if path:
            blobs[path] = meta.split()[2]
    return blobs


def _read_stable(repo: PairRepo, paths: list[str],
                 recheck: float) -> tuple[dict[str, bytes | None], list[str]]:
    """Read each file, wait ``recheck`` seconds, and have git store it again.

    A file whose stored blob differs from the bytes read first, or that was modified
    within the last ``recheck`` seconds (an editor between truncating and writing), is
    still being written: it goes to the second list, to be retried after the next settle. Everything in the
    first dict (None: deleted) is now in git's object store exactly as it was read.
    """
    first = {p: _read(repo.root / p) for p in paths}
    if paths and recheck > 0:
        time.sleep(recheck)
    stable: dict[str, bytes | None] = {}
    unsettled = []
    for path, data in first.items():
        if data is None:
            if (repo.root / path).exists():
                unsettled.append(path)
            else:
                stable[path] = None
            continue
        try:
            oid = run_git(repo.root, "hash-object", "-w", "--no-filters", "--", path).strip()
        except GitError:
            oid = ""
        if oid == blob_id(data) and not _touched_within(repo.root / path, recheck):
            stable[path] = data
        else:
            unsettled.append(path)
    return stable, unsettled


def _touched_within(full: Path, seconds: float) -> bool:
    """Modified less than ``seconds`` ago? (A clock-skewed future mtime cannot tell: no.)"""
    try:
        age = time.time() - full.stat().st_mtime
    except FileNotFoundError:
        return True
    return 0 <= age < seconds


def _read(full: Path) -> bytes | None:
    try:
        return full.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _commit_exact(repo: PairRepo, blobs: dict[str, bytes | None]) -> str | None:
    """Commit exactly these bytes (None deletes) on top of HEAD, hooks included.

    The blobs are already in the object store (``_read_stable``). They are staged in a
    private index, checked by the pair's pre-commit hook, and the branch moves only if
    it still points where we started (compare-and-swap): a commit made meanwhile by a
    hand ``git commit`` is never overwritten, we retry instead. The person's own index is
    touched only to reset the committed paths to the new HEAD.
    """
    try:
        branch = run_git(repo.root, "symbolic-ref", "-q", "HEAD").strip()
    except GitError:
        raise BadInputError(f"{repo.root}: HEAD is detached (an old revision checked out?); "
                            "hand edits are committed again once a branch is checked out"
                            ) from None
    base = repo.head()
    head = _head_blobs(repo, list(blobs))
    index = repo.root / ".git" / "memfs-watch-index"
    env = {"GIT_INDEX_FILE": str(index), **actor_env(USER)}
    try:
        run_git(repo.root, "read-tree", base, env=env)
        added = [arg for p, data in blobs.items() if data is not None
                 for arg in ("--cacheinfo", f"100644,{blob_id(data)},{p}")]
        if added:
            run_git(repo.root, "update-index", "--add", *added, env=env)
        removed = [p for p, data in blobs.items() if data is None]
        if removed:
            run_git(repo.root, "update-index", "--force-remove", "--", *removed, env=env)
        if not run_git(repo.root, "diff", "--cached", "--name-only", base, env=env).strip():
            return None
        run_git(repo.root, "hook", "run", "--ignore-missing", "pre-commit", env=env)
        tree = run_git(repo.root, "write-tree", env=env).strip()
    finally:
        index.unlink(missing_ok=True)
    msg = message("edit", _summary(blobs, head), USER, body=_body(blobs))
    sha = run_git(repo.root, "commit-tree", tree, "-p", base, "-m", msg, env=env).strip()
    try:
        run_git(repo.root, "update-ref", "-m", f"commit: {msg.splitlines()[0]}",
                branch, sha, base)
    except GitError as exc:
        raise ConflictError(f"{repo.root}: HEAD moved while committing hand edits; "
                            "they will be committed on the next try") from exc
    run_git(repo.root, "reset", "-q", "HEAD", "--", *blobs)
    return sha


def _summary(blobs: dict[str, bytes | None], head: dict[str, str]) -> str:
    """``rename a -> b; delete c; add d; update e`` (git's subject is cut at 100 chars)."""
    added = {p: blob_id(d) for p, d in blobs.items() if d is not None}
    renames: dict[str, str] = {}
    for old in (p for p, d in blobs.items() if d is None and p in head):
        new = next((p for p, oid in added.items()
                    if oid == head[old] and p not in head and p not in renames.values()), None)
        if new is not None:
            renames[old] = new
    items = [f"rename {old} -> {new}" for old, new in renames.items()]
    items += [f"delete {p}" for p, d in blobs.items() if d is None and p not in renames]
    items += [f"{'update' if p in head else 'add'} {p}" for p in added
              if p not in renames.values()]
    return "; ".join(items)


def _body(blobs: dict[str, bytes | None]) -> str:
    return "Saved by hand, committed by memfs watch:\n" + "\n".join(
        f"  {'deleted ' if data is None else ''}{path}" for path, data in sorted(blobs.items()))


# -- the daemon: watchdog events -> settled batches -> handle_changes ------------------------------

ReportCallback = Callable[[Path, WatchReport], None]
ErrorCallback = Callable[[Path, MemfsError], None]


class Watcher:
    """Watch pair repositories and commit their hand edits once each save has settled.

    ``roots`` are pair repositories; ``home`` (instead, or as well) watches every pair under
    a memfs home, including pairs created while it runs. ``on_report`` hears every flush
    that committed or found a problem; ``on_error`` hears a ``MemfsError`` (a git failure,
    say) and the watcher goes on. A pair whose lock another process holds for too long is
    simply retried.
    """

    def __init__(self, roots: Sequence[Path] = (), *, home: Path | None = None,
                 settle: float = 0.3, recheck: float = 0.05,
                 on_report: ReportCallback | None = None,
                 on_error: ErrorCallback | None = None,
                 status_file: Path | None = None) -> None:
        self.roots = [Path(r).resolve() for r in roots]
        self.home = Path(home).resolve() if home is not None else None
        self.settle = settle
        self.recheck = recheck
        self.on_report = on_report
        self.on_error = on_error
        self.status_file = status_file
        self.commits = 0
        self._reported: dict[Path, dict[str, str]] = {}
        self._batcher = _Batcher(settle, self._flush)
        self._observer: BaseObserver | None = None
        self._adapter = _EventAdapter(self)
        self._watches: dict[Path, ObservedWatch] = {}
        self._watch_lock = threading.Lock()
        self._sweep = True
        self._status: dict[str, object] = {}

    def start(self, *, initial: bool = True) -> None:
        """Start watching; with ``initial``, first commit edits saved while nobody watched."""
        self._observer = Observer()
        self._observer.start()
        self._batcher.start()
        self._sweep = initial
        self.rescan()
        self._sweep = True
        self._write_status(started=_now())

    def rescan(self) -> None:
        """Watch exactly what a person edits, and notice folders that came or went.

        Each pair's top folder is watched alone (so git's churn in ``.git/`` never wakes
        us), ``system/`` and ``cards/`` recursively; with a home, the home and each user
        folder too, so a pair created later is seen. A pair or folder watched for the first
        time is swept at once: whatever was saved before the watch began gets committed.
        """
        observer = self._observer
        if observer is None:
            return
        wanted: dict[Path, tuple[bool, Path | None]] = {}
        if self.home is not None:
            wanted[self.home] = (False, None)
            for user in _subdirs(self.home):
                wanted.update((d, (False, None)) for d in [user, *_subdirs(user)])
        for root in self.pair_roots():
            wanted[root] = (False, root)
            wanted.update((root / sub, (True, root)) for sub in ("system", "cards")
                          if (root / sub).is_dir())
        with self._watch_lock:
            for path in [p for p in self._watches if p not in wanted]:
                observer.unschedule(self._watches.pop(path))
            for path, (recursive, pair_root) in wanted.items():
                if path in self._watches or not path.is_dir():
                    continue
                self._watches[path] = observer.schedule(self._adapter, str(path),
                                                        recursive=recursive)
                if self._sweep and pair_root is not None:
                    self._batcher.add(pair_root, set(WATCHED_TOP), delay=0.0)

    def stop(self) -> None:
        """Stop watching; edits still settling are flushed first."""
        observer = self._observer
        if observer is not None:
            self._observer = None
            observer.stop()
            observer.join()
            self._watches.clear()
        self._batcher.stop()
        if self.status_file is not None:
            self.status_file.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check(self) -> None:
        """Re-raise, in the caller's thread, a bug that killed the worker thread."""
        self._batcher.check()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no path is pending or being flushed; False on timeout."""
        return self._batcher.wait_idle(timeout)

    def pair_roots(self) -> list[Path]:
        """Every pair watched now (pairs created under ``home`` since are included)."""
        found = list(self.roots)
        if self.home is not None:
            found += sorted(g.parent for g in self.home.glob("*/*/.git") if g.parent not in found)
        return found

    def on_paths_changed(self, root: Path, paths: Iterable[str]) -> None:
        """The seam the event adapter calls: these files of this pair were touched."""
        wanted = {p for p in paths if watched_path(p)}
        if wanted:
            self._batcher.add(root, wanted)

    def root_of(self, path: str) -> tuple[Path, str] | None:
        """The watched pair holding an absolute ``path``, and the path inside it."""
        full = Path(path)
        for root in self.roots:
            if full.is_relative_to(root):
                return root, full.relative_to(root).as_posix()
        if self.home is not None and full.is_relative_to(self.home):
            parts = full.relative_to(self.home).parts
            root = self.home.joinpath(*parts[:2])
            if len(parts) > 2 and (root / ".git").is_dir():
                return root, PurePosixPath(*parts[2:]).as_posix()
        return None

    def _flush(self, root: Path, paths: set[str]) -> set[str]:
        """Handle one settled batch; returns the paths to try again later."""
        reported = self._reported.setdefault(root, {})
        if not _born(root):
            return set()  # a pair being created: its first commit is memfs's own
        try:
            report = handle_changes(PairRepo.open(root), paths, reported=reported,
                                    recheck=self.recheck)
        except (LockError, ConflictError):
            return paths
        except MemfsError as exc:
            if self.on_error is not None:
                self.on_error(root, exc)
            return set()
        if report.commit:
            self.commits += 1
            self._write_status(last_commit={"pair": str(root), "sha": report.commit,
                                            "paths": list(report.committed), "at": _now()})
        if (report.commit or report.problems) and self.on_report is not None:
            self.on_report(root, report)
        return set(report.unsettled)

    def _write_status(self, **changes: object) -> None:
        """``watch-status.json``: who is watching what, since when, and the last commit."""
        if self.status_file is None:
            return
        self._status.update(pid=os.getpid(), roots=[str(r) for r in self.pair_roots()],
                            home=str(self.home) if self.home else None,
                            commits=self.commits, **changes)
        atomic_write(self.status_file, json.dumps(self._status, indent=2) + "\n")


def _born(root: Path) -> bool:
    """Does the repository have a first commit yet?"""
    try:
        run_git(root, "rev-parse", "--verify", "-q", "HEAD")
    except GitError:
        return False
    return True


def _subdirs(folder: Path) -> list[Path]:
    try:
        return [d for d in folder.iterdir() if d.is_dir() and not d.name.startswith(".")]
    except FileNotFoundError:
        return []


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class _EventAdapter(FileSystemEventHandler):
    """Turns watchdog events into ``Watcher.on_paths_changed`` calls; nothing else."""

    _QUIET = ("opened", "closed_no_write")

    def __init__(self, watcher: Watcher) -> None:
        super().__init__()
        self.watcher = watcher

    def dispatch(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        if kind in self._QUIET or (event.is_directory and kind == "modified"):
            return
        if event.is_directory:
            self.watcher.rescan()
        for raw in (event.src_path, event.dest_path):
            path = os.fsdecode(raw) if raw else ""
            where = self.watcher.root_of(path) if path else None
            if where is not None:
                self.watcher.on_paths_changed(where[0], [where[1]])


class _Batcher:
    """Collects each pair's touched paths; flushes a pair once it has been quiet ``settle`` s.

    One worker thread runs every flush, so flushes never overlap. A flush returns the
    paths to try again (still being written, or the pair locked), which wait another
    ``settle``.
    """

    def __init__(self, settle: float, flush: Callable[[Path, set[str]], set[str]]) -> None:
        self.settle = settle
        self._flush = flush
        self._pending: dict[Path, set[str]] = {}
        self._due: dict[Path, float] = {}
        self._busy = False
        self._stopping = False
        self._error: BaseException | None = None
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="memfs-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add(self, root: Path, paths: set[str], delay: float | None = None) -> None:
        with self._cond:
            self._pending.setdefault(root, set()).update(paths)
            self._due[root] = time.monotonic() + (self.settle if delay is None else delay)
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    def check(self) -> None:
        if self._error is not None:
            raise self._error

    def wait_idle(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy
                                       or self._error is not None, timeout)

    def _next(self) -> tuple[Path, set[str]] | None:
        """Block until a pair is due (or, when stopping, take anything left)."""
        with self._cond:
            while True:
                now = time.monotonic()
                due = [r for r, t in self._due.items() if t <= now or self._stopping]
                if due:
                    root = min(due, key=self._due.__getitem__)
                    del self._due[root]
                    self._busy = True
                    return root, self._pending.pop(root)
                if self._stopping:
                    return None
                wait = min(self._due.values(), default=now + 1.0) - now
                self._cond.wait(max(wait, 0.01))

    def _run(self) -> None:
        try:
            while (item := self._next()) is not None:
                retry = self._flush(*item)
                with self._cond:
                    self._busy = False
                    if retry and not self._stopping:
                        self._pending.setdefault(item[0], set()).update(retry)
                        self._due.setdefault(item[0], time.monotonic() + self.settle)
                    self._cond.notify_all()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread by check()
            with self._cond:
                self._error = exc
                self._busy = False
                self._cond.notify_all()
