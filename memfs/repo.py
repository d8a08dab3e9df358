"""The pair repository on disk: create it, read committed memory, commit changes safely.

All writes to a pair go through ``PairRepo.commit``: it takes the pair lock, refuses paths
outside the memory layout (and ``system/`` for dreaming), writes each file atomically
(temp file, fsync, ``os.replace``) and commits only the paths it wrote, through real
``git`` so the pair's hooks check memfs exactly as they check a person.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from memfs import hooks
from memfs.assets import read_template
from memfs.atomic import atomic_write
from memfs.errors import BadInputError, GitError, NotARepoError
from memfs.gitio import AGENT, DREAM, USER, Actor, actor_env, message, run_git
from memfs.ids import check_id
from memfs.lock import pair_lock

TOP_LEVEL = ("system", "cards", "history", "summary.md", ".gitignore")


class PairRepo:
    """One (user, character) pair's git repository."""

    def __init__(self, root: Path) -> None:
        self.root = root

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def open(cls, root: Path) -> PairRepo:
        if not (root / ".git").exists():
            raise NotARepoError(f"{root}: no pair repository here (run `memfs init`)")
        repo = cls(root)
        hooks.install(root / ".git")
        return repo

    @classmethod
    def create(cls, root: Path, user: str, character: str, *, user_name: str | None = None,
               character_name: str | None = None) -> tuple[PairRepo, bool]:
        """Create the pair (idempotent). Returns the repo and whether anything was created.

        ``user_name`` and ``character_name`` are display names for the persona; ids are
        not names (a user id may be ``u-4821`` or ``you``), so without a display name the
        persona names nobody rather than the id."""
        check_id(user, "user id")
        check_id(character, "character id")
        if (root / ".git").exists():
            return cls.open(root), False
        persona_text = persona(character_name or _name(character), user_name)
        try:
            if root.exists() and any(root.iterdir()):
                raise BadInputError(f"{root}: exists and is not a memfs pair repository")
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInputError(f"{root}: cannot create the pair repository "
                                f"({exc.strerror})") from None
        run_git(root, "init", "-q", "-b", "main")
        hooks.install(root / ".git")
        repo = cls(root)
        files: dict[str, str | None] = {
            "system/persona.md": persona_text,
            "system/pins.md": read_template("pair/system/pins.md"),
            "summary.md": "",
            "cards/.gitkeep": "",
            "history/.gitkeep": "",
            ".gitignore": read_template("pair/gitignore"),
        }
        repo.commit(files, "edit", f"create pair {user}/{character}", USER)
        return repo, True

    # -- reading committed memory -----------------------------------------------------------

    def head(self) -> str:
        return run_git(self.root, "rev-parse", "HEAD").strip()

    def read_head(self, path: str, rev: str = "HEAD") -> str | None:
        """A file's text at ``rev`` (committed HEAD by default), or None if absent."""
        try:
            return run_git(self.root, "show", f"{rev}:{path}")
        except GitError:
            return None

    def list_head(self, prefix: str, rev: str = "HEAD") -> list[str]:
        """Paths under ``prefix`` at ``rev``, sorted."""
        out = run_git(self.root, "ls-tree", "-r", "--name-only", rev, "--", prefix)
        return sorted(line for line in out.splitlines() if line)

    def read_worktree(self, path: str) -> str | None:
        full = self.root / safe_path(path)
        try:
            return full.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    # -- writing -----------------------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        with pair_lock(self.root):
            yield

    def commit(self, changes: Mapping[str, str | None], kind: str, summary: str, actor: Actor,
               session: str | None = None, body: str = "",
               extra: Mapping[str, str] | None = None, cwd: Path | None = None) -> str | None:
        """Write ``changes`` (path → text, None deletes) and commit them as one commit.

        Returns the new commit's sha, or None when nothing changed. ``cwd`` lets dreaming
        commit in its own worktree; locking is then the caller's business.
        """
        paths = [safe_path(p, actor) for p in changes]
        work = cwd or self.root
        if cwd is None:
            with self.lock():
                return self._commit(work, changes, paths, kind, summary, actor, session, body, extra)
        return self._commit(work, changes, paths, kind, summary, actor, session, body, extra)

    def _commit(self, work: Path, changes: Mapping[str, str | None], paths: list[str],
                kind: str, summary: str, actor: Actor, session: str | None, body: str,
                extra: Mapping[str, str] | None) -> str | None:
        for path, text in zip(paths, changes.values()):
            target = work / path
            if text is None:
                target.unlink(missing_ok=True)
            else:
                atomic_write(target, text)
        return self.commit_paths(work, paths, message(kind, summary, actor, session, body, extra),
                                 actor)

    def record(self, kind: str, summary: str, actor: Actor, body: str = "",
               extra: Mapping[str, str] | None = None) -> str:
        """An empty commit on the current branch that only records a decision in its
        trailers (a rejected dream). Made without the index, so nothing the user has
        staged is swept into it; the branch moves only if nobody committed meanwhile."""
        with self.lock():
            head = self.head()
            ref = run_git(self.root, "symbolic-ref", "-q", "HEAD").strip()
            msg = message(kind, summary, actor, body=body, extra=extra)
            sha = run_git(self.root, "commit-tree", f"{head}^{{tree}}", "-p", head, "-m", msg,
                          env=actor_env(actor)).strip()
            run_git(self.root, "update-ref", "-m", f"memfs {kind}", ref, sha, head)
            return sha

    def commit_paths(self, work: Path, paths: list[str], msg: str, actor: Actor) -> str | None:
        """Commit the working-tree state of ``paths`` (and only them), if it changed.

        A refused commit leaves the user's staging area as it found it, and a refusal by
        the pair's hook is bad input (the hook's own words), not a git failure.
        """
        run_git(work, "add", "-A", "--", *paths)
        if not run_git(work, "diff", "--cached", "--name-only", "--", *paths).strip():
            return None
        try:
            run_git(work, "commit", "-q", "-m", msg, "--", *paths, env=actor_env(actor))
        except GitError as exc:
            try:
                run_git(work, "reset", "-q", "--", *paths)
            except GitError:
                pass  # no HEAD yet: nothing to reset to
            refusals = [line.strip()[7:] for line in exc.stderr.splitlines()
                        if line.strip().startswith("memfs: ") and "refused the commit" not in line]
            if refusals:
                raise BadInputError("; ".join(refusals)) from exc
            raise
        return run_git(work, "rev-parse", "HEAD").strip()


def persona(character: str, user_name: str | None) -> str:
    """A new pair's ``system/persona.md`` (the person edits it from then on)."""
    for label, value in (("character name", character), ("user name", user_name)):
        if value is not None and (not value.strip() or "\n" in value or len(value) > 80):
            raise BadInputError(f"{label}: must be one line of 1-80 characters")
    to_user = f" to {user_name.strip()}" if user_name else ""
    return read_template("pair/system/persona.md").format(character=character.strip(),
                                                          to_user=to_user)


def _name(identifier: str) -> str:
    return identifier[:1].upper() + identifier[1:]


def safe_path(path: str, actor: Actor = USER) -> str:
    """Normalize a repository-relative path, refusing anything outside the memory layout."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or not pure.parts or any(p in ("", ".", "..") for p in pure.parts):
        raise BadInputError(f"{path!r}: not a path inside the pair repository")
    if pure.parts[0] not in TOP_LEVEL:
        raise BadInputError(f"{path!r}: outside the memory layout ({', '.join(TOP_LEVEL)})")
    if actor in (DREAM, AGENT) and pure.parts[0] == "system":
        raise BadInputError(f"{path!r}: only the user writes system/ ({actor.name} may not)")
    if pure.parts[0] == "cards" and len(pure.parts) == 2 and pure.name.endswith(".md"):
        check_id(pure.name[:-3], "card id")
    return str(pure)
