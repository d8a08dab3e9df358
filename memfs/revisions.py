"""The history of memory: log, diff, show and revert over a pair's git repository.

A revert is itself a commit by ``user`` (so it can be reverted in turn); reverting a
dream's merge commit undoes the whole dream. A revert that conflicts is aborted, leaving
the repository exactly as it was.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from memfs.errors import BadInputError, ConflictError, GitError
from memfs.gitio import USER, actor_env, message, run_git
from memfs.pins import add_pin, parse_pins, remove_pin
from memfs.repo import PairRepo

_SEP = "\x1f"
_END = "\x1e"


@dataclass(frozen=True)
class LogEntry:
    sha: str
    subject: str
    author: str
    date: dt.datetime
    parents: tuple[str, ...]
    trailers: dict[str, str] = field(default_factory=dict)
    files: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return self.subject.split(":", 1)[0] if ":" in self.subject else ""

    @property
    def is_dream(self) -> bool:
        return self.author == "memfs-dream" and len(self.parents) > 1

    def to_json(self) -> dict[str, object]:
        return {"sha": self.sha, "subject": self.subject, "kind": self.kind,
                "author": self.author, "date": self.date.isoformat(),
                "merge": len(self.parents) > 1, "dream": self.is_dream,
                "trailers": self.trailers, "files": list(self.files)}


def log(repo: PairRepo, n: int | None = None, rev: str = "HEAD",
        author: str | None = None, skip: int = 0) -> list[LogEntry]:
    """Commits on the first-parent line (a dream shows as its one merge), newest first;
    ``skip`` leaves out that many of the newest (a page of the inspector's timeline)."""
    fmt = "%x1e" + "%x1f".join(["%H", "%s", "%an", "%aI", "%P",
                                "%(trailers:only,unfold,separator=%x1d)", ""])
    args = ["log", "--first-parent", f"--format={fmt}", "--name-only"]
    if n is not None:
        args.append(f"-n{n}")
    if skip:
        args.append(f"--skip={skip}")
    if author:
        args.append(f"--author={author}")
    out = run_git(repo.root, *args, rev, "--")
    entries = []
    for chunk in out.split(_END):
        if not chunk.strip():
            continue
        sha, subject, who, date, parents, trailers, names = chunk.split(_SEP)
        entries.append(LogEntry(
            sha=sha, subject=subject, author=who, date=dt.datetime.fromisoformat(date),
            parents=tuple(parents.split()), trailers=_trailers(trailers),
            files=tuple(line for line in names.splitlines() if line)))
    return entries


def _trailers(raw: str) -> dict[str, str]:
    result = {}
    for item in raw.split("\x1d"):
        key, sep, value = item.partition(":")
        if sep:
            result[key.strip()] = value.strip()
    return result


def resolve(repo: PairRepo, rev: str) -> str:
    """A revision as a full sha; an unknown one is bad input (exit 2)."""
    if not rev or rev.startswith("-"):
        raise BadInputError(f"{rev!r}: not a revision")
    try:
        return run_git(repo.root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except GitError:
        raise BadInputError(f"{rev!r}: no such revision in this pair's history") from None


def diff(repo: PairRepo, rev: str | None = None) -> str:
    """Uncommitted changes (no ``rev``), or what ``rev`` changed against its first parent."""
    if rev is None:
        return run_git(repo.root, "diff", "HEAD") + _untracked(repo)
    sha = resolve(repo, rev)
    parents = run_git(repo.root, "rev-list", "--parents", "-n1", sha).split()[1:]
    base = parents[0] if parents else _empty_tree(repo)
    return run_git(repo.root, "diff", base, sha)


def _untracked(repo: PairRepo) -> str:
    """New files nobody committed yet (a hand-written card), as diffs against nothing."""
    out = []
    listed = run_git(repo.root, "ls-files", "--others", "--exclude-standard", "-z")
    for path in sorted(p for p in listed.split("\0") if p and not p.rsplit("/", 1)[-1].startswith(".")):
        try:
            lines = (repo.root / path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            lines = ["(not UTF-8 text)"]
        out.append(f"diff --git a/{path} b/{path}\nnew file (untracked)\n--- /dev/null\n"
                   f"+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n"
                   + "".join(f"+{line}\n" for line in lines))
    return "".join(out)


def show(repo: PairRepo, rev: str) -> str:
    sha = resolve(repo, rev)
    return run_git(repo.root, "show", "--stat", "--patch", "--diff-merges=first-parent", sha)


def _empty_tree(repo: PairRepo) -> str:
    return run_git(repo.root, "hash-object", "-t", "tree", "/dev/null").strip()


def revert(repo: PairRepo, rev: str) -> str:
    """Undo ``rev`` with a new commit; on conflict abort and raise ``ConflictError``."""
    with repo.lock():
        sha = resolve(repo, rev)
        entry = log(repo, 1, sha)[0]
        if not entry.parents:
            raise BadInputError(f"{rev}: the first commit of a pair cannot be reverted")
        staged = run_git(repo.root, "diff", "--cached", "--name-only").split()
        if staged:
            raise ConflictError(f"staged changes in {', '.join(staged[:3])}: commit or unstage "
                                "them first (`git restore --staged .`); nothing was reverted")
        args = ["revert", "--no-commit"] + (["-m", "1"] if len(entry.parents) > 1 else [])
        try:
            run_git(repo.root, *args, sha)
        except GitError as exc:
            _abort(repo)
            if is_pin_commit(repo, entry):
                return _revert_pins(repo, entry)
            raise ConflictError(
                f"revert {sha[:10]} conflicts with later changes; nothing was changed "
                f"({exc.stderr.splitlines()[0] if exc.stderr else 'git revert failed'})"
            ) from exc
        msg = message("revert", entry.subject, USER, body=f"This reverts commit {sha}.",
                      extra={"Memfs-Reverts": sha})
        try:
            run_git(repo.root, "commit", "-q", "--allow-empty", "-m", msg, env=actor_env(USER))
        except GitError:
            _abort(repo)
            raise
        return repo.head()


def is_pin_commit(repo: PairRepo, entry: LogEntry) -> bool:
    """A commit that changed only ``system/pins.md``: undone as pin operations if need be."""
    if not entry.subject.startswith("pin: ") or len(entry.parents) != 1:
        return False
    changed = run_git(repo.root, "diff", "--name-only", entry.parents[0], entry.sha).split()
    return changed == ["system/pins.md"]


def _revert_pins(repo: PairRepo, entry: LogEntry) -> str:
    """Undo a ``pin:`` commit as pin operations when its lines no longer apply as text.

    Pins sit on adjacent lines, so reverting an older pin commit as a diff almost always
    conflicts with the pins added since. What the person means is clear, though: remove
    the pins that commit added and put back the ones it removed; the others stay.
    """
    if (repo.read_worktree("system/pins.md") or "") != (repo.read_head("system/pins.md") or ""):
        raise ConflictError("system/pins.md has uncommitted changes: commit or drop them "
                            "first; nothing was reverted")
    sha = repo.commit({"system/pins.md": pins_reverted(repo, entry)}, "revert", entry.subject,
                      USER,
                      body=f"This reverts commit {entry.sha} as pin operations (its lines "
                           "conflicted with later pins).",
                      extra={"Memfs-Reverts": entry.sha})
    return sha or repo.head()


def pins_reverted(repo: PairRepo, entry: LogEntry) -> str:
    """HEAD's pins file with ``entry``'s pins taken out and the ones it removed put back."""
    before = parse_pins(repo.read_head("system/pins.md", entry.parents[0]) or "").texts()
    after = parse_pins(repo.read_head("system/pins.md", entry.sha) or "").texts()
    text = repo.read_head("system/pins.md") or ""
    for added in (t for t in after if t not in before):
        now = parse_pins(text).texts()
        if added in now:
            text, _ = remove_pin(text, now.index(added) + 1)
    for removed in (t for t in before if t not in after):
        if removed not in parse_pins(text).texts():
            text = add_pin(text, removed)
    return text


def _abort(repo: PairRepo) -> None:
    try:
        run_git(repo.root, "revert", "--abort")
    except GitError:
        run_git(repo.root, "reset", "--merge")
