"""Compaction: when the recent window outgrows its budget, its oldest messages leave it.

The moment detail is about to leave the window is the moment to decide what deserves to
be kept, so each compaction writes a *compaction event* naming the evicted messages, and
dreaming (a separate process) turns them into summary and cards.

State, and why deleting ``.memfs/`` loses nothing:
- ``.memfs/events/<id>.json`` holds pending events (evicted, not yet dreamed).
- ``.memfs/window.json`` is the window state derived from them (``memfs/window.py``).
- Git is the truth: each dream's merge commit carries ``Memfs-Event`` and ``Memfs-Window``
  trailers. If ``.memfs/`` is lost, the window is rebuilt from history and the trailers:
  evicted-but-undreamed messages rejoin the window, to be evicted again.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memfs.atomic import atomic_write
from memfs.history import Message, format_ts
from memfs.tokens import count_tokens


@dataclass(frozen=True)
class Span:
    """Turns ``first..last`` (inclusive) of one session."""

    session: str
    first: int
    last: int

    def __str__(self) -> str:
        return f"{self.session}:{self.first}-{self.last}"

    @classmethod
    def parse(cls, text: str) -> Span:
        session, _, turns = text.rpartition(":")
        first, _, last = turns.partition("-")
        return cls(session, int(first), int(last or first))


@dataclass
class CompactionEvent:
    id: str
    created: str
    spans: list[Span]
    reason: str = "window over budget"
    attempts: int = 0
    last_error: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def covers(self, message: Message) -> bool:
        return any(s.session == message.session and s.first <= message.turn <= s.last
                   for s in self.spans)

    def window_trailer(self) -> str:
        return ",".join(str(s) for s in self.spans)

    @property
    def evicted(self) -> int:
        """How many messages left the window with this event."""
        return sum(s.last - s.first + 1 for s in self.spans)


def spans_of(messages: Sequence[Message]) -> list[Span]:
    """Group consecutive messages into per-session spans."""
    spans: list[Span] = []
    for m in messages:
        if spans and spans[-1].session == m.session and spans[-1].last + 1 == m.turn:
            spans[-1] = Span(m.session, spans[-1].first, m.turn)
        else:
            spans.append(Span(m.session, m.turn, m.turn))
    return spans


def events_dir(root: Path) -> Path:
    return root / ".memfs" / "events"


def new_event(evicted: Sequence[Message], reason: str, now: dt.datetime) -> CompactionEvent:
    return CompactionEvent(
        id=f"e-{now.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}",
        created=format_ts(now), spans=spans_of(evicted), reason=reason)


def write_event(root: Path, evicted: Sequence[Message], reason: str,
                now: dt.datetime) -> CompactionEvent:
    event = new_event(evicted, reason, now)
    save_event(root, event)
    return event


def save_event(root: Path, event: CompactionEvent) -> None:
    data = asdict(event)
    data["spans"] = [str(s) for s in event.spans]
    atomic_write(events_dir(root) / f"{event.id}.json", json.dumps(data, indent=2) + "\n")


def load_event(path: Path) -> CompactionEvent:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["spans"] = [Span.parse(s) for s in data["spans"]]
    return CompactionEvent(**data)


def pending_events(root: Path) -> list[CompactionEvent]:
    """Events not yet dreamed, oldest first. A corrupt event file is set aside
    (``*.json.bad``): its messages rejoin the window, so nothing is lost. A file that is
    gone between the listing and the read was just merged by a dream running in another
    process: it is not pending any more, not an error."""
    folder = events_dir(root)
    if not folder.is_dir():
        return []
    events = []
    for path in sorted(folder.glob("e-*.json")):
        try:
            events.append(load_event(path))
        except FileNotFoundError:
            continue
        except (ValueError, TypeError, KeyError, UnicodeDecodeError):
            try:
                path.replace(path.with_name(path.name + ".bad"))
            except FileNotFoundError:
                continue
    return events


def remove_event(root: Path, event_id: str) -> None:
    (events_dir(root) / f"{event_id}.json").unlink(missing_ok=True)


def split_window(window: Sequence[Message], budget: int) -> tuple[list[Message], list[Message]]:
    """(evicted, kept): drop the oldest messages until the rest fits ``budget`` tokens.

    A user message and the reply that follows it leave together; the newest exchange always
    stays, however long it is.
    """
    window = list(window)
    total = sum(count_tokens(m.content) for m in window)
    cut = 0
    while len(window) - cut > 2 and total > budget:
        take = 2 if window[cut].role == "user" and window[cut + 1].role == "assistant" else 1
        total -= sum(count_tokens(m.content) for m in window[cut:cut + take])
        cut += take
    return window[:cut], window[cut:]
