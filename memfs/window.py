"""The recent window: the messages the model still sees verbatim.

The window is derived, not stored: every message of ``history/`` that no compaction event
has evicted yet. Evicted spans come from pending events in ``.memfs/events/`` and from
the ``Memfs-Window`` trailers on ``main`` (each dream merge carries one; so does an import
of history whose memory already exists, like the demo's sample pairs) — so if ``.memfs/`` is deleted,
undreamed messages simply rejoin the window, to be evicted (and dreamed) again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memfs.compaction import Span, pending_events
from memfs.gitio import run_git
from memfs.history import Message, iter_messages

if TYPE_CHECKING:
    from memfs.store import MemoryPair


def evicted_spans(pair: MemoryPair) -> list[Span]:
    spans = [s for event in pending_events(pair.root) for s in event.spans]
    out = run_git(pair.root, "log", "--first-parent",
                  "--format=%(trailers:key=Memfs-Window,valueonly,separator=%x2C)")
    for line in out.splitlines():
        spans += [Span.parse(item.strip()) for item in line.split(",") if item.strip()]
    return spans


def current_window(pair: MemoryPair) -> list[Message]:
    """Messages not yet evicted, oldest first."""
    evicted: dict[str, list[tuple[int, int]]] = {}
    for span in evicted_spans(pair):
        evicted.setdefault(span.session, []).append((span.first, span.last))
    return [m for m in iter_messages(pair.root)
            if not any(a <= m.turn <= b for a, b in evicted.get(m.session, ()))]
