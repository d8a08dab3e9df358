"""The conversation side of a turn: append messages durably, then maybe compact.

A message is in ``history/`` (fsynced before ``add_messages`` returns, one fsync per file
per batch) before anything else happens. After each assistant message the window is
measured — from the window state (``memfs/window.py``), so a turn reads only what is new
— and when it outgrows its budget (or every N messages, per the trigger setting) a
compaction event evicts its oldest messages and the pair is handed to the dream queue
(``Services.queue``). That is all the conversation path does: no git, no dream work. The
history files are committed at session end and by the dream itself, before it reads them.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memfs import history
from memfs.atomic import atomic_write
from memfs.compaction import CompactionEvent, events_dir, new_event, save_event, split_window
from memfs.errors import BadInputError, InvalidIdError
from memfs.gitio import USER
from memfs.gitio import message as commit_message
from memfs.history import Appender, Message
from memfs.ids import check_id
from memfs.index import announce
from memfs.window import WindowState, window_state
from memfs.window_files import Stamp

if TYPE_CHECKING:
    from memfs.store import MemoryPair

BATCH = 512
"""Messages appended under one hold of the pair lock (a long ingest lets other writers,
such as a dream's merge, in between batches)."""
EXPECT_MAX = 4
"""Up to this many messages in one call are a turn, announced to the embedder; more are an
ingest, embedded in bulk by the next search."""

Checked = tuple[str, str, dt.datetime, str | None]


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
    if len(checked) <= EXPECT_MAX:  # a turn: its messages ride with the next model run
        announce(pair.root, [(role, content) for role, content, _, _ in checked])
    for start in range(0, len(checked), BATCH):
        with pair.repo.lock():
            state = window_state(pair, refresh=False)
            with state.lock:
                state.refresh()
                try:
                    _append_batch(pair, state, checked[start:start + BATCH], session,
                                  appended, events)
                except BaseException:
                    state.invalidate()  # what was written is durable; re-derive the rest
                    raise
                state.save_if_needed()
    if options.report is not None:
        options.report.events += events
    if events:
        outcome = fire_dream(pair, options.dream)
        if options.report is not None:
            options.report.dream = outcome
    return appended


def _append_batch(pair: MemoryPair, state: WindowState, batch: list[Checked],
                  session: str | None, appended: list[Message],
                  events: list[CompactionEvent]) -> None:
    """Append ``batch`` under the pair lock: one fsync per file; the batch's compaction
    events are written after it, so an event never names a message that is not durable."""
    open_session = _open_session(pair)
    touched: set[str] = set()
    created = False
    deferred: list[CompactionEvent] = []
    try:
        with Appender(pair.root) as appender:
            for role, content, ts, own_session in batch:
                sid = own_session or session or open_session or \
                    history.new_session_id(pair.root, ts)
                tail = state.tail_for(sid)
                created = created or tail.stamp is None
                written = appender.write(sid, role, content, ts, turn=tail.lines)
                state.appended(written)
                touched.add(sid)
                appended.append(written.message)
                open_session = sid
                if role == "assistant":
                    event = maybe_compact(pair, ts, state=state, deferred=deferred)
                    if event is not None:
                        events.append(event)
        # the appender has fsynced every message of the batch: now its events may name them
        _save_events(pair, state, deferred)
        state.settle(touched, created)
    finally:
        if open_session:
            _remember_session(pair, open_session)


def _save_events(pair: MemoryPair, state: WindowState, events: list[CompactionEvent]) -> None:
    for event in events:
        before = Stamp.of(events_dir(pair.root))
        save_event(pair.root, event)
        state.recorded(before)


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
    return _open_session(pair) or history.new_session_id(pair.root, now)


def _open_session(pair: MemoryPair) -> str | None:
    path = pair.root / ".memfs" / "session.json"
    try:
        return str(json.loads(path.read_text())["session"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _remember_session(pair: MemoryPair, session: str) -> None:
    if _open_session(pair) != session:
        atomic_write(pair.root / ".memfs" / "session.json", json.dumps({"session": session}) + "\n")


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
    """Commit every session file as it is now (caller holds the pair lock); None when
    nothing changed. Runs the pair's hooks, like every memfs commit."""
    if next((pair.root / "history").glob("*.jsonl"), None) is None:
        return None
    msg = commit_message("history", summary, USER, session)
    return pair.repo.commit_paths(pair.root, ["history/*.jsonl"], msg, USER)


# -- compaction ----------------------------------------------------------------------------


def maybe_compact(pair: MemoryPair, now: dt.datetime, force: bool = False, *,
                 state: WindowState | None = None,
                 deferred: list[CompactionEvent] | None = None) -> CompactionEvent | None:
    """Evict the window's oldest messages if the trigger fires (caller holds the lock).

    Costs what the window costs, not what history costs: the window and its token count
    come from the window state. With ``deferred``, the event file is written by the
    caller once the messages it names are fsynced (``add_messages`` does, per batch)."""
    config = pair.config
    own = state is None
    state = state or window_state(pair)
    window = state.messages()
    tokens = state.tokens
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
    event = new_event(evicted, reason, now)
    state.note_event(event)
    if deferred is not None:
        deferred.append(event)
        return event
    before = Stamp.of(events_dir(pair.root))
    save_event(pair.root, event)
    state.recorded(before)
    if own:
        state.save()
    return event


def _oldest_messages(window: list[Message], keep: int) -> tuple[list[Message], list[Message]]:
    cut = len(window) - keep
    if cut < len(window) and window[cut].role == "assistant":
        cut += 1  # never split a user message from its reply
    return window[:cut], window[cut:]


def compact_now(pair: MemoryPair, dream: str = "queue",
                report: TurnReport | None = None) -> CompactionEvent | None:
    """``/compact``: evict the whole window except the newest exchange, and dream on it."""
    with pair.repo.lock():
        state = window_state(pair, refresh=False)
        with state.lock:
            state.refresh()
            event = maybe_compact(pair, dt.datetime.now(dt.UTC), force=True, state=state)
            state.save_if_needed()
    if event is not None:
        outcome = fire_dream(pair, dream)
        if report is not None:
            report.events.append(event)
            report.dream = outcome
    return event


def window_status(pair: MemoryPair) -> tuple[int, int]:
    """(messages, tokens) of the recent window: why nothing is pending yet."""
    state = window_state(pair, refresh=False)
    with state.lock:
        state.refresh()
        return len(state.messages()), state.tokens


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
    return window_state(pair).pending_messages()
