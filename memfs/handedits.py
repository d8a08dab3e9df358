"""Hand edits: decide what a person saved and commit exactly that (``handle_changes``).

Under the pair lock it asks git which of ``paths`` really differ from HEAD (so memfs's own
commits, a ``memfs revert`` or a ``git checkout`` produce nothing), reads each changed
file twice a moment apart (a file still being written is retried later, never
committed), validates it with ``memfs.check.validate_file`` and commits exactly the bytes
it validated as one ``edit:`` commit by ``user``. It stages those bytes in a private
index, so a save that lands while it commits can never slip half-written into the
commit, and the person's own ``git add`` staging is left alone. An invalid file is not
committed and stays as saved; its problem is reported once per content.

``memfs/watch.py`` feeds it from a file watcher; tests call it directly (STYLE habit 10).
``history/`` is ignored: the conversation appends to it and the turn code commits it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memfs.check import Problem, validate_file
from memfs.errors import BadInputError, ConflictError, GitError
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
