"""The one exception tree of memfs.

Every error a user can cause or meet is a ``MemfsError``; the CLI turns it into one
line on stderr and an exit code (2 for bad input, 1 for a failure). Anything that is not
a ``MemfsError`` is a bug and keeps its traceback. Third-party errors (git, yaml, the
LLM SDKs) are translated where they enter, with ``raise ... from exc``.

    MemfsError                    exit 1 unless noted
    ├── BadInputError             exit 2: the user gave us something we refuse
    │   ├── InvalidIdError        a user, character or card id outside the allowed pattern
    │   ├── CardParseError        a card (or other memory file) that does not validate
    │   └── NeedsKeyError         a provider was chosen but its key/endpoint is not set
    ├── NotARepoError             exit 2: the pair repository does not exist (run init)
    ├── AccessError               exit 2: this API key may not reach that user (HTTP 403)
    │   └── NoKeyError            no API key, or one that is unknown or removed (HTTP 401)
    ├── ConflictError             a write raced a hand edit, or a revert/merge conflicted
    ├── LockError                 another process holds the pair lock for too long
    ├── GitError                  a git command failed (command, status, stderr)
    └── LLMError                  the model provider failed or answered nonsense
"""

from __future__ import annotations

from collections.abc import Sequence


class MemfsError(Exception):
    """Base of every error memfs raises on purpose."""

    exit_code = 1


class BadInputError(MemfsError):
    """The user (or a file they wrote) gave input we refuse; nothing was changed."""

    exit_code = 2


class InvalidIdError(BadInputError):
    """An id (user, character, card, session) does not match the allowed pattern."""


class CardParseError(BadInputError):
    """A memory file failed validation. ``path`` and ``field`` say where."""

    def __init__(self, path: str, field: str | None, reason: str) -> None:
        self.path = path
        self.field = field
        self.reason = reason
        where = f"{path}: {field}" if field else path
        super().__init__(f"{where}: {reason}")


class NeedsKeyError(BadInputError):
    """A provider needs configuration (an API key, an endpoint) that is missing."""


class NotARepoError(MemfsError):
    """The pair repository does not exist yet."""

    exit_code = 2


class AccessError(MemfsError):
    """An API key asked for a user's memory it was not made for."""

    exit_code = 2


class NoKeyError(AccessError):
    """A request without a valid API key."""


class ConflictError(MemfsError):
    """A change could not be applied without overwriting someone else's change."""


class LockError(MemfsError):
    """The pair repository stayed locked by a live process past our patience."""


class GitError(MemfsError):
    """A git operation failed; carries what was run and what git said."""

    def __init__(self, command: Sequence[str] | str, status: int | None, stderr: str) -> None:
        self.command = command if isinstance(command, str) else " ".join(command)
        self.status = status
        self.stderr = stderr.strip()
        verb = self.command.split(" ", 1)[0]
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        said = next((line for line in lines if line.startswith("memfs: ")
                     and "refused the commit" not in line),
                    next((line for line in lines if line.startswith(("fatal:", "error:"))),
                         lines[-1] if lines else "no message"))
        super().__init__(f"git {verb} failed ({status}): {said}")


class LLMError(MemfsError):
    """The language model provider failed, or its answer could not be used."""
