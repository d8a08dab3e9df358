"""The raw conversation log: every message, durable before anything else happens.

``history/<session>.jsonl`` is append-only: a message is one JSON line, written with
``O_APPEND`` and fsynced before the call that wrote it returns (``Appender`` batches the
fsyncs: one per touched file per batch), so a crash after that cannot lose it. Git commits the files at compaction and at session end; they
are never rewritten. Lines are JSON so any unicode, newline or 100 kB message survives
byte for byte.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memfs import journal
from memfs.errors import BadInputError
from memfs.ids import check_id

ROLES = ("user", "assistant")
OFFLINE_PLACEHOLDER = "(offline) No language model is configured, so this is not a real reply."
"""How every reply of the offline chat begins (``memfs.agent.llm.offline``): such a reply
is kept in history like any message, but it is not memory, so it is never indexed."""


def is_placeholder(role: str, content: str) -> bool:
    """True for a placeholder reply of the offline chat (see ``OFFLINE_PLACEHOLDER``)."""
    return role == "assistant" and content.startswith(OFFLINE_PLACEHOLDER)


@dataclass(frozen=True)
class Message:
    session: str
    turn: int
    role: str
    content: str
    ts: dt.datetime

    @property
    def id(self) -> str:
        return f"{self.session}:{self.turn}"

    def to_json(self) -> str:
        record = {"session": self.session, "turn": self.turn, "role": self.role,
                  "content": self.content, "ts": format_ts(self.ts)}
        return json.dumps(record, ensure_ascii=False)


def format_ts(ts: dt.datetime) -> str:
    return ts.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def parse_ts(value: object, where: str = "ts") -> dt.datetime:
    """An ISO-8601 timestamp (``Z`` allowed); naive times are taken as UTC."""
    if isinstance(value, dt.datetime):
        parsed = value
    else:
        try:
            parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise BadInputError(f"{where}: not an ISO-8601 timestamp ({value!r})") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def new_session_id(root: Path, when: dt.datetime) -> str:
    """``s-YYYYMMDD-NN``: the first number not used by a file in ``history/``."""
    day = when.astimezone(dt.UTC).strftime("%Y%m%d")
    for n in range(1, 10_000):
        candidate = f"s-{day}-{n:02d}"
        if not (root / "history" / f"{candidate}.jsonl").exists():
            return candidate
    raise BadInputError(f"too many sessions on {day}")


def session_path(root: Path, session: str) -> Path:
    return root / "history" / f"{check_id(session, 'session id')}.jsonl"


def next_turn(root: Path, session: str) -> int:
    """The turn number the next message of ``session`` gets: its count of non-empty lines.
    Reads the whole file; the turn keeps this count in the window state instead."""
    path = session_path(root, session)
    if not path.exists():
        return 0
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def append(root: Path, session: str, role: str, content: str, ts: dt.datetime,
           turn: int | None = None) -> Message:
    """Append one message durably. Callers hold the pair lock (turn numbers are counted)."""
    with Appender(root) as appender:
        appender.open(session)  # drops a torn last line first: it is not a turn
        turn = next_turn(root, session) if turn is None else turn
        message = appender.write(session, role, content, ts, turn).message
    return message


@dataclass(frozen=True)
class Written:
    """One appended line: the message, and where its line sits in the session file."""

    message: Message
    at: int
    end: int
    tail: bytes
    """The last (up to 32) bytes of the file after the write, for the window's append check."""


class Appender:
    """Appends messages to session files and fsyncs each touched file once, on ``sync``
    (and on leaving the ``with`` block without an exception).

    A batch of messages costs one fsync per session file rather than one per message; the
    caller acknowledges nothing before ``sync`` returns. Callers hold the pair lock."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fds: dict[str, int] = {}
        self._dirty: set[str] = set()
        self._created: set[Path] = set()
        """Folders that gained a session file: their entry is made durable at the sync."""

    def __enter__(self) -> Appender:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.sync()  # also on the way out of an error: what was written stays written
        finally:
            self.close()

    def write(self, session: str, role: str, content: str, ts: dt.datetime,
              turn: int) -> Written:
        if role not in ROLES:
            raise BadInputError(f"role: must be 'user' or 'assistant' (got {role!r})")
        if not isinstance(content, str):
            raise BadInputError("content: must be a string")
        fd = self.open(session)
        message = Message(session, turn, role, content, parse_ts(ts))
        data = (message.to_json() + "\n").encode("utf-8")
        at = os.lseek(fd, 0, os.SEEK_END)
        os.write(fd, data)
        self._dirty.add(session)
        end = at + len(data)
        tail = data[-32:] if len(data) >= 32 else _read_at(fd, max(0, end - 32), end)
        return Written(message, at, end, tail)

    def sync(self) -> None:
        """Make every message written so far durable, then name the touched files in the
        journal that warm readers follow (``memfs.journal``).

        ``fdatasync`` per file: it writes the data and the size an append changed, not the
        file's times, which is all a reader needs after a crash (p95 4.5 vs 5.0 ms, p50
        0.13 vs 0.22 ms on this machine's disk, two per turn). A new session file's folder
        is fsynced too, so the file itself is found after a power cut."""
        for session in sorted(self._dirty):
            os.fdatasync(self._fds[session])
        for folder in sorted(self._created):
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self._created.clear()
        journal.note(self.root, self._dirty)
        self._dirty.clear()

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def open(self, session: str) -> int:
        """The session file, open for appending (a torn last line from a crash is cut)."""
        if session not in self._fds:
            path = session_path(self.root, session)
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                _drop_torn_tail(path)
            else:
                self._created.add(path.parent)
            self._fds[session] = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        return self._fds[session]


def _read_at(fd: int, start: int, end: int) -> bytes:
    return os.pread(fd, end - start, start)


def _drop_torn_tail(path: Path) -> None:
    """A crash mid-write can leave half a line; it was never acknowledged, so cut it."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return
        handle.seek(0)
        data = handle.read()
        handle.truncate(data.rfind(b"\n") + 1)


def line_problem(record: object) -> str | None:
    """Why a parsed history line is not a message (None when it is one)."""
    if not isinstance(record, dict):
        return "not a JSON object"
    if record.get("role") not in ROLES:
        return "role: must be 'user' or 'assistant'"
    if not isinstance(record.get("content"), str):
        return "content: must be a string"
    turn = record.get("turn")
    if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int) or turn < 0):
        return "turn: must be a whole number"
    if "ts" in record:
        try:
            parse_ts(record["ts"])
        except BadInputError:
            return "ts: not an ISO-8601 timestamp"
    return None


def json_object_line(line: str, where: str) -> dict[str, Any]:
    """One line of a JSON Lines file a person wrote (a transcript, a probe set), as an
    object; anything else is a ``BadInputError`` naming ``where`` (file and line)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{where}: not valid JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise BadInputError(f"{where}: must be a JSON object")
    return record


def parse_line(line: str | bytes, session: str, position: int) -> Message | None:
    """One history line as a message of ``session`` (the file's: ids and paths point at
    the file), or None when it is not one. A line without ``turn`` (written by hand) gets
    its ``position``. The one reader of history lines: the window, dreaming and the search
    index must agree on what was said."""
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if line_problem(record) is not None:
        return None
    return Message(session=session, turn=int(record.get("turn", position)), role=record["role"],
                   content=record["content"],
                   ts=parse_ts(record.get("ts", "1970-01-01T00:00:00Z")))


def read_session(path: Path) -> list[Message]:
    """The messages of one session file. Lines that are not messages (a hand edit gone
    wrong, a torn last line) are skipped here and reported by `memfs check`."""
    messages: list[Message] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            message = parse_line(line, path.stem, len(messages))
            if message is not None:
                messages.append(message)
    return messages


def iter_messages(root: Path, sessions: Iterable[str] | None = None) -> Iterator[Message]:
    """Every message, session by session in time order."""
    folder = root / "history"
    if sessions is None:
        paths = sorted(folder.glob("*.jsonl"))
    else:
        paths = [session_path(root, s) for s in sessions]
    loaded = [read_session(p) for p in paths if p.exists()]
    loaded.sort(key=lambda msgs: (msgs[0].ts, msgs[0].session) if msgs else (_EPOCH, ""))
    for msgs in loaded:
        yield from msgs


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
