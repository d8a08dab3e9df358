"""API keys for ``memfs serve``: who may reach which user's memory.

A key is ``mfs_<id>_<secret>``. Only its SHA-256 is kept, in ``<home>/.memfs/keys.json``
(mode 0600; a dot folder can never be a user id), so a copy of the home folder gives no
one a working key. SHA-256 without salt or stretching is enough here: the secret is 32
random bytes, not a password, so there is nothing to guess. The ``id`` is public: it is
what ``key ls`` shows and ``key rm ID`` takes, and it lets a request find its record in
one lookup before the constant-time comparison.

A key made with ``--user U`` sees U's pairs only; an admin key sees every user's. The
file is re-read when it changes, so ``memfs key add`` and ``key rm`` take effect in a
running server at its next request.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from memfs.errors import BadInputError
from memfs.ids import check_id

PREFIX = "mfs_"


@dataclass(frozen=True)
class KeyRecord:
    """One stored key: never the key itself, only its hash."""

    id: str
    user: str | None
    """The one user this key may reach; None for an admin key."""
    hash: str
    created: str

    @property
    def admin(self) -> bool:
        return self.user is None

    def can_see(self, user: str) -> bool:
        return self.user is None or hmac.compare_digest(self.user, user)

    def describe(self) -> str:
        return "admin (every user)" if self.admin else f"user {self.user}"

    def to_json(self) -> dict[str, object]:
        """What ``key ls --json`` shows: the hash stays in the file."""
        return {"id": self.id, "user": self.user, "admin": self.admin, "created": self.created}


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class KeyStore:
    """The hashed keys of one home folder."""

    def __init__(self, home: Path) -> None:
        self.path = home / ".memfs" / "keys.json"
        self._cache: tuple[tuple[int, int, int], dict[str, KeyRecord]] | None = None
        self._mutex = threading.Lock()

    # -- reading -------------------------------------------------------------------------

    def records(self) -> dict[str, KeyRecord]:
        """Every key by id; re-read only when the file changed (it is replaced on write)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return {}
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        with self._mutex:
            if self._cache is None or self._cache[0] != stamp:
                self._cache = (stamp, self._read())
            return self._cache[1]

    def _read(self) -> dict[str, KeyRecord]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {r["id"]: KeyRecord(r["id"], r["user"], r["hash"], r["created"])
                    for r in data["keys"]}
        except (ValueError, KeyError, TypeError) as exc:
            raise BadInputError(f"{self.path}: not a memfs key file ({exc}); "
                                "fix it or remove it and add the keys again") from None

    def verify(self, key: str) -> KeyRecord | None:
        """The record of a presented key, or None (unknown, removed or malformed)."""
        if not key.startswith(PREFIX):
            return None
        key_id = key[len(PREFIX):].split("_", 1)[0]
        record = self.records().get(key_id)
        if record is None or not hmac.compare_digest(record.hash, _digest(key)):
            return None
        return record

    def __bool__(self) -> bool:
        return bool(self.records())

    # -- changing ------------------------------------------------------------------------

    def add(self, user: str | None) -> tuple[KeyRecord, str]:
        """A new key for ``user`` (None: admin); returns its record and the key, which
        is shown this once and never stored."""
        if user is not None:
            check_id(user, "user id")
        with self._locked() as records:
            key_id = secrets.token_hex(4)
            while key_id in records:
                key_id = secrets.token_hex(4)
            key = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
            created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            record = KeyRecord(key_id, user, _digest(key), created)
            records[key_id] = record
        return record, key

    def remove(self, key_id: str) -> KeyRecord:
        with self._locked() as records:
            record = records.pop(key_id, None)
            if record is None:
                raise BadInputError(f"key {key_id!r}: no such key (see `memfs key ls`)")
        return record

    @contextmanager
    def _locked(self) -> Iterator[dict[str, KeyRecord]]:
        """Read-modify-write under a file lock, so two ``key add`` never lose one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name("keys.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            records = dict(self._read()) if self.path.exists() else {}
            yield records
            self._write(records)
        finally:
            os.close(fd)

    def _write(self, records: dict[str, KeyRecord]) -> None:
        data = {"keys": [asdict(r) for r in records.values()]}
        tmp = self.path.with_name(f".keys.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
