"""The conversation side of a turn: append messages durably, then maybe compact.

A message is in ``history/`` (fsynced) before anything else happens. After appending, the
window is measured; when it outgrows its budget (or every N messages, per the trigger
setting) a compaction event evicts its oldest messages, commits the history files, and
hands the pair to the dream queue (``Services.queue``) — the conversation never waits.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memfs import history
from memfs.atomic import atomic_write
from memfs.compaction import CompactionEvent, pending_events, split_window, write_event
from memfs.errors import BadInputError, InvalidIdError
from memfs.gitio import USER
from memfs.gitio import message as commit_message
from memfs.history import Message
from memfs.ids import check_id
from memfs.tokens import count_tokens
from memfs.window import current_window

if TYPE_CHECKING:
    from memfs.store import MemoryPair


@dataclass
class TurnReport:
    """What a batch of messages set off: the compaction events, and what became of the
    dream (``queued``, ``dreamed``, or why not: ``dreaming off``, ``waiting for ...``)."""

    events: list[CompactionEvent] = field(default_factory=list)
    dream: str | None = None


@dataclass
class TurnOptions:
    """How a batch of messages is handled; ``dream`` is 'queue' (hand the pair to the
    services' dream queue and return), 'inline' (dream now, in this call) or 'none'.
    ``report``, when given, is filled in with what happened."""

    dream: str = "queue"
    report: TurnReport | None = None


def add_messages(pair: MemoryPair, messages: Iterable[Mapping[str, Any]],
                 session: str | None = None, options: TurnOptions | None = None
                 ) -> list[Message]:
    """Append each message (durably, first); compact when the trigger says so."""
    options = options or TurnOptions()
    appended: list[Message] = []
    events: list[CompactionEvent] = []
    # Every message is checked before the first is appended: a bad line 3 must not leave
    # lines 1-2 in history, to be appended again when the user fixes the file.
    checked = [_validate(raw, number) for number, raw in enumerate(messages)]
    for role, content, ts, own_session in checked:
        with pair.repo.lock():
            sid = own_session or session or current_session(pair, ts)
            appended.append(history.append(pair.root, sid, role, content, ts))
            _remember_session(pair, sid)
            if role == "assistant":
                event = maybe_compact(pair, ts)
                if event is not None:
                    events.append(event)
    if options.report is not None:
        options.report.events += events
    if events:
        outcome = fire_dream(pair, options.dream)
        if options.report is not None:
            options.report.dream = outcome
    return appended


def _validate(raw: Mapping[str, Any], number: int) -> tuple[str, str, dt.datetime, str | None]:
    if not isinstance(raw, Mapping):
        raise BadInputError(f"message {number + 1}: must be an object with role and content")
    role, content = raw.get("role"), raw.get("content")
    if role not in history.ROLES:
        raise BadInputError(f"message {number + 1}: role: must be 'user' or 'assistant' (got {role!r})")
    if not isinstance(content, str):
        raise BadInputError(f"message {number + 1}: content: must be a string")
    ts = history.parse_ts(raw["ts"], f"message {number + 1}: ts") if raw.get("ts") else \
        dt.datetime.now(dt.UTC)
    session = raw.get("session")
    if session is not None:
        if not isinstance(session, str):
            raise BadInputError(f"message {number + 1}: session: must be a string")
        try:
            check_id(session, "session id")
        except InvalidIdError as exc:
            raise BadInputError(f"message {number + 1}: session: {exc}") from None
    return role, content, ts, session


# -- sessions ------------------------------------------------------------------------------


def current_session(pair: MemoryPair, now: dt.datetime) -> str:
    """The open session, or a new ``s-YYYYMMDD-NN`` one."""
    path = pair.root / ".memfs" / "session.json"
    if path.exists():
        try:
            data = json.loads(path.read_text())
            return str(data["session"])
        except (ValueError, KeyError):
            pass
    return history.new_session_id(pair.root, now)


def _remember_session(pair: MemoryPair, session: str) -> None:
    path = pair.root / ".memfs" / "session.json"
    if not path.exists() or json.loads(path.read_text() or "{}").get("session") != session:
        atomic_write(path, json.dumps({"session": session}) + "\n")


def end_session(pair: MemoryPair) -> str | None:
    """Close the open session: commit its history; the next message starts a new one."""
    with pair.repo.lock():
        path = pair.root / ".memfs" / "session.json"
        session = json.loads(path.read_text())["session"] if path.exists() else None
        sha = commit_history(pair, f"session {session} ended" if session else "session ended",
                             session)
        path.unlink(missing_ok=True)
        return sha


def commit_history(pair: MemoryPair, summary: str, session: str | None = None) -> str | None:
    paths = [f"history/{p.name}" for p in sorted((pair.root / "history").glob("*.jsonl"))]
    if not paths:
        return None
    msg = commit_message("history", summary, USER, session)
    return pair.repo.commit_paths(pair.root, paths, msg, USER)


# -- compaction ----------------------------------------------------------------------------


def maybe_compact(pair: MemoryPair, now: dt.datetime, force: bool = False) -> CompactionEvent | None:
    """Evict the window's oldest messages if the trigger fires (caller holds the lock)."""
    config = pair.config
    window = current_window(pair)
    tokens = sum(count_tokens(m.content) for m in window)
    if force:
        evicted, _ = split_window(window, 0)
        reason = "forced (/compact)"
    elif config.compaction_trigger == "compaction-event" and tokens > config.window_budget:
        evicted, _ = split_window(window, config.window_budget // 2)
        reason = f"window of {tokens} tokens over its budget of {config.window_budget}"
    elif config.compaction_trigger == "step-count" and len(window) >= 2 * config.step_count:
        evicted, _ = _oldest_messages(window, config.step_count)
        reason = f"step count {config.step_count}"
    else:
        return None
    if not evicted:
        return None
    commit_history(pair, f"compaction: {len(evicted)} messages leave the window",
                   evicted[-1].session)
    return write_event(pair.root, evicted, reason, now)


def _oldest_messages(window: list[Message], keep: int) -> tuple[list[Message], list[Message]]:
    cut = len(window) - keep
    if cut < len(window) and window[cut].role == "assistant":
        cut += 1  # never split a user message from its reply
    return window[:cut], window[cut:]


def compact_now(pair: MemoryPair, dream: str = "queue",
                report: TurnReport | None = None) -> CompactionEvent | None:
    """``/compact``: evict the whole window except the newest exchange, and dream on it."""
    with pair.repo.lock():
        event = maybe_compact(pair, dt.datetime.now(dt.UTC), force=True)
    if event is not None:
        outcome = fire_dream(pair, dream)
        if report is not None:
            report.events.append(event)
            report.dream = outcome
    return event


def window_status(pair: MemoryPair) -> tuple[int, int]:
    """(messages, tokens) of the recent window: why nothing is pending yet."""
    window = current_window(pair)
    return len(window), sum(count_tokens(m.content) for m in window)


def fire_dream(pair: MemoryPair, mode: str) -> str:
    """The compaction hook: start dreaming as the dream trigger says; says what it did."""
    if mode == "none":
        return "not started (`memfs dream` runs it)"
    if pair.config.dream_trigger == "off":
        return "not started: dream_trigger is off (`memfs dream` runs it)"
    pending = _pending_messages(pair)
    if pair.config.dream_trigger == "step-count" and pending < pair.config.dream_step_count:
        return f"waiting: {pending} of {pair.config.dream_step_count} messages pending"
    if mode == "inline":
        merged = pair.dream()
        return f"dreamed ({len(merged)} merge commit(s))"
    said = pair.store.services.queue.submit(pair)
    return said or "started in the background"


def _pending_messages(pair: MemoryPair) -> int:
    return sum(s.last - s.first + 1 for e in pending_events(pair.root) for s in e.spans)
