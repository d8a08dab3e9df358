"""One process, many pairs: the store a server shares, and who may open which pair.

Every HTTP request and MCP tool call goes through ``Host.pair(key, user, character)``:

1. both ids are checked (``InvalidIdError`` names which one) before any path is built;
2. the key must be for that user (``AccessError``) — checked before the pair is even
   looked for, so a stranger cannot learn which pairs exist;
3. the pair's in-process lock is taken, so two requests on one pair take turns (the
   warm index is not safe to refresh from two threads at once); other pairs run in
   parallel. Across processes the pair's ``flock`` (``memfs/lock.py``) still applies,
   so a ``memfs pin add`` in a terminal and the server never interleave a write.

The embedding model is the store's (``SharedEmbedder`` in a server: loaded once, on first
need); the warm pair indexes are bounded by ``max_pairs`` (least recently used dropped;
reloaded from their snapshot).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Protocol

from memfs.compaction import pending_events
from memfs.errors import AccessError, InvalidIdError, NoKeyError, NotARepoError
from memfs.ids import check_id
from memfs.keys import KeyStore

if TYPE_CHECKING:
    from memfs.app import MemoryStore
    from memfs.store import MemoryPair

DEFAULT_MAX_PAIRS = 64


class Principal(Protocol):
    """Who is asking: an API key's record (``memfs.keys.KeyRecord``) or the open mode."""

    def can_see(self, user: str) -> bool: ...

    def describe(self) -> str: ...


class OpenAccess:
    """No keys exist and the server listens on loopback only: every local caller is admin."""

    def can_see(self, user: str) -> bool:
        return True

    def describe(self) -> str:
        return "open (no keys exist; loopback only)"


class FieldInvalidIdError(InvalidIdError):
    """An invalid id that knows which request field it came from."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class MissingPairError(NotARepoError):
    """The pair named in a request has no repository (yet)."""

    field = "character"

    def __init__(self, user: str, character: str) -> None:
        super().__init__(f"pair {user}/{character} does not exist "
                         f"(create it: PUT /v1/pairs/{user}/{character})")


def check_pair_ids(user: str, character: str) -> None:
    for value, field in ((user, "user"), (character, "character")):
        try:
            check_id(value, f"{field} id")
        except InvalidIdError as exc:
            raise FieldInvalidIdError(str(exc), field) from None


class Host:
    """The store of a long-running process, with per-pair locks and key checks."""

    def __init__(self, store: MemoryStore, *, max_pairs: int = DEFAULT_MAX_PAIRS,
                 keys: KeyStore | None = None, allow_open: bool = False) -> None:
        self.store = store
        self.max_pairs = max_pairs
        from memfs.index import set_open_limit  # numpy: not for `memfs --help`

        set_open_limit(max_pairs)
        self.keys = keys or KeyStore(store.home)
        self.allow_open = allow_open
        """With no keys at all, let every caller in (only ever set for a loopback bind)."""
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def principal(self, authorization: str | None) -> Principal:
        """Who sent ``Authorization: Bearer <key>`` (``NoKeyError`` when nobody valid)."""
        if self.allow_open and not self.keys:
            return OpenAccess()
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise NoKeyError("missing API key: send 'Authorization: Bearer <key>' "
                             "(make one with `memfs key add --user USER`)")
        record = self.keys.verify(token.strip())
        if record is None:
            raise NoKeyError("unknown or removed API key")
        return record

    def allow(self, who: Principal, user: str, character: str) -> None:
        """Ids valid and the key for this user, or raise (nothing on disk is touched)."""
        check_pair_ids(user, character)
        if not who.can_see(user):
            raise AccessError(f"this key may not reach the memory of user {user!r}")

    @contextmanager
    def pair(self, who: Principal, user: str, character: str, *,
             locked: bool = True) -> Iterator[MemoryPair]:
        """The existing pair, held for this request alone (``locked=False`` for work that
        never touches the warm index, like a dream, which has its own lock)."""
        self.allow(who, user, character)
        with self._lock(user, character) if locked else nullcontext():
            pair = self.store.pair(user, character, create=False)
            if not (pair.root / ".git").is_dir():
                raise MissingPairError(user, character)
            yield pair

    def init(self, who: Principal, user: str, character: str) -> tuple[MemoryPair, bool]:
        """Create the pair if needed (idempotent); True when it was created."""
        self.allow(who, user, character)
        with self._lock(user, character):
            pair = self.store.pair(user, character, create=False)
            return pair, pair.init()

    def visible_pairs(self, who: Principal) -> list[tuple[str, str]]:
        return [(u, c) for u, c in self.store.pairs() if who.can_see(u)]

    def _lock(self, user: str, character: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault((user, character), threading.Lock())

    # -- the process's lifetime -----------------------------------------------------------

    def resume_pending(self) -> int:
        """Hand every pair with undreamed events to the queue (after a restart)."""
        count = 0
        for user, character in self.store.pairs():
            pair = self.store.pair(user, character, create=False)
            if pending_events(pair.root):
                self.store.services.queue.submit(pair)
                count += 1
        return count

    def status(self) -> dict[str, object]:
        from memfs.index import open_index_count

        queue = self.store.services.queue
        snapshot = getattr(queue, "snapshot", None)
        return {"pairs_loaded": open_index_count(), "max_pairs": self.max_pairs,
                "queue": snapshot() if callable(snapshot) else type(queue).__name__}

    def stop_dreaming(self) -> None:
        """Shutdown has begun: start no more dreams (safe to call from a signal handler)."""
        self.store.services.queue.close(wait=False)

    def close(self) -> None:
        """Stop the dream queue: running dreams finish, the rest stay pending on disk."""
        self.store.services.queue.close(wait=True)
