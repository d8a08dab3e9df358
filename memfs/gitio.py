"""Running git for memfs: fixed identities, a clean environment, errors translated.

Everything goes through GitPython's ``Git`` command wrapper rather than its in-process
index writer, because only the real ``git`` runs the pair's hooks: a commit made by memfs
is checked exactly like a commit typed by hand.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import git

from memfs.errors import GitError


@dataclass(frozen=True)
class Actor:
    """Who made a change: the git author and the ``Memfs-Actor`` trailer value."""

    name: str
    email: str
    trailer: str


USER = Actor("user", "user@memfs.local", "user")
DREAM = Actor("memfs-dream", "dream@memfs.local", "dream")
AGENT = Actor("agent", "agent@memfs.local", "agent")
ACTORS = {a.trailer: a for a in (USER, DREAM, AGENT)}


def actor_env(actor: Actor) -> dict[str, str]:
    return {
        "GIT_AUTHOR_NAME": actor.name,
        "GIT_AUTHOR_EMAIL": actor.email,
        "GIT_COMMITTER_NAME": actor.name,
        "GIT_COMMITTER_EMAIL": actor.email,
    }


_SCRUB = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")


def run_git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run ``git args`` in ``cwd`` and return stdout; failures become ``GitError``."""
    full_env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    full_env.setdefault("GIT_AUTHOR_NAME", USER.name)
    full_env.setdefault("GIT_AUTHOR_EMAIL", USER.email)
    full_env.setdefault("GIT_COMMITTER_NAME", USER.name)
    full_env.setdefault("GIT_COMMITTER_EMAIL", USER.email)
    full_env.update(env or {})
    runner = git.Git(str(cwd))
    try:
        out = runner.execute(
            ["git", "-c", "core.quotepath=off", "-c", "commit.gpgsign=false", *args],
            env=full_env, strip_newline_in_stdout=False,
        )
    except git.GitCommandError as exc:
        stderr = exc.stderr if isinstance(exc.stderr, str) else str(exc.stderr)
        raise GitError(args, exc.status if isinstance(exc.status, int) else None,
                       stderr.replace("stderr: ", "").strip(" '\n")) from exc
    return out if isinstance(out, str) else str(out)


def run_git_status(cwd: Path, *args: str, ok: tuple[int, ...] = (0, 1)) -> tuple[int, str]:
    """Run ``git args`` where a non-zero status is an answer, not a failure (``merge-tree``
    exits 1 for "conflicts", with its findings on stdout); other statuses raise ``GitError``."""
    full_env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    runner = git.Git(str(cwd))
    status, out, err = runner.execute(
        ["git", "-c", "core.quotepath=off", *args], env=full_env, with_exceptions=False,
        with_extended_output=True, strip_newline_in_stdout=False)
    if status not in ok:
        raise GitError(args, status, str(err))
    return status, out if isinstance(out, str) else str(out)


def message(kind: str, summary: str, actor: Actor, session: str | None = None,
            body: str = "", extra: Mapping[str, str] | None = None) -> str:
    """A commit message in the DESIGN.md convention: ``kind: summary`` plus trailers."""
    subject = f"{kind}: {' '.join(summary.split())}"
    if len(subject) > 100:
        subject = subject[:97] + "..."
    trailers = [f"Memfs-Actor: {actor.trailer}"]
    if session:
        trailers.append(f"Memfs-Session: {session}")
    for key, value in (extra or {}).items():
        trailers.append(f"{key}: {value}")
    parts = [subject]
    if body.strip():
        parts.append(body.strip())
    parts.append("\n".join(trailers))
    return "\n\n".join(parts) + "\n"


def head_sha(root: Path) -> str | None:
    """HEAD's sha from the ref files (no subprocess: this runs several times per turn, so
    plain ``os`` reads of string paths, not pathlib's ``read_text``: ~0.3 → ~0.03 ms)."""
    git_dir = os.path.join(root, ".git")
    head = _read_small(os.path.join(git_dir, "HEAD"))
    if head is None:
        return None
    if not head.startswith("ref: "):
        return head
    ref = head[5:]
    sha = _read_small(os.path.join(git_dir, ref))
    if sha is not None:
        return sha
    packed = _read_small(os.path.join(git_dir, "packed-refs"), limit=1 << 24)
    for line in (packed or "").splitlines():
        if line.endswith(" " + ref):
            return line.split(" ", 1)[0]
    return None  # an unborn branch


def _read_small(path: str, limit: int = 4096) -> str | None:
    """A small file's text, stripped; None when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return os.read(fd, limit).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
