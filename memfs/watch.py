"""``memfs watch``: turn file-system events into hand-edit commits, once each save settles.

``Watcher`` adapts watchdog events into ``on_paths_changed(root, paths)`` calls and flushes
a pair's paths through ``memfs.handedits.handle_changes`` once no event has arrived for
``settle`` seconds (editors write a temp file, rename it, write twice). One worker thread
does every flush, so a pair is never committed by two threads of the watcher at once.
The deciding and committing lives in ``handedits``, testable without a watcher.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Self

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from memfs.atomic import atomic_write
from memfs.errors import ConflictError, GitError, LockError, MemfsError
from memfs.gitio import run_git
from memfs.handedits import WATCHED_TOP, WatchReport, handle_changes, watched_path
from memfs.repo import PairRepo

__all__ = ["ReportCallback", "Watcher", "WatchReport", "handle_changes", "watched_path"]

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
