"""A pair whose history is the given user lines, each answered with the same filler, a few
hours apart: the small histories the constraint search tests rank over."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

from memfs.embed import Embedder
from memfs.store import MemoryPair


def user_lines_pair(home: Path, embedder: Embedder, lines: Sequence[str], user: str,
                    character: str) -> tuple[MemoryPair, dt.datetime]:
    """(the pair, a time the day after its last message)."""
    from memfs import history
    from memfs.app import MemoryStore

    pair = MemoryStore(home, embedder=embedder).pair(user, character)
    when = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.timezone.utc)
    for line in lines:
        sid = f"s-{when:%Y%m%d}-01"
        history.append(pair.root, sid, "user", line, when)
        history.append(pair.root, sid, "assistant", "Ha, tell me more.", when + dt.timedelta(minutes=1))
        when += dt.timedelta(hours=7)
    return pair, when + dt.timedelta(days=1)
