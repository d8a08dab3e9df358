"""Fixtures shared by the dream tests: a committed conversation, and a scripted extractor."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from memfs.agent.dream.ops import Extraction, parse_ops

from memfs import gitio
from memfs.cards import Card
from memfs.compaction import CompactionEvent, write_event
from memfs.history import Message, append, iter_messages
from memfs.store import MemoryPair

T0 = dt.datetime(2026, 11, 5, 9, 0, tzinfo=dt.UTC)
NOW = dt.datetime(2026, 11, 5, 12, 0, tzinfo=dt.UTC)
SESSION = "s-20261105-01"


def chat(pair: MemoryPair, lines: Sequence[str], session: str = SESSION) -> CompactionEvent:
    """Append alternating user/assistant lines, commit the history, write the event."""
    first = sum(1 for m in iter_messages(pair.root) if m.session == session)
    for i, text in enumerate(lines):
        append(pair.root, session, "user" if (first + i) % 2 == 0 else "assistant", text,
               T0 + dt.timedelta(minutes=first + i))
    pair.repo.commit_paths(pair.root, [f"history/{session}.jsonl"],
                           gitio.message("history", f"{session}", gitio.USER), gitio.USER)
    evicted = [m for m in iter_messages(pair.root) if m.session == session and m.turn >= first]
    return write_event(pair.root, evicted, "test", NOW)


class ScriptedExtractor:
    """Answers with ops given as model-shaped JSON (validated by ``parse_ops``).

    ``before`` runs inside the extractor, i.e. after the dream read main: a test uses it
    to make a user change "while the dream is thinking".
    """

    def __init__(self, ops: list[dict[str, Any]], summary: str = "They talked.",
                 before: Callable[[], None] | None = None) -> None:
        self.ops = ops
        self.summary = summary
        self.before = before
        self.calls: list[tuple[list[Message], list[Card], str]] = []
        self.log: list[str] = []

    def __call__(self, window: Sequence[Message], cards: Sequence[Card], summary: str,
                 now: dt.datetime) -> Extraction:
        self.calls.append((list(window), list(cards), summary))
        if self.before is not None:
            self.before()
        ops, log = parse_ops(self.ops, {c.id for c in cards})
        self.log += log
        return Extraction(self.summary, ops)


def write_op(body: str, turns: list[int], **extra: Any) -> dict[str, Any]:
    return {"op": "write", "type": "fact", "body": body, "entities": ["user"],
            "salience": 0.6, "turns": turns, **extra}
