"""Issue 12, point 1, inside the constraint slots: k slots hold k different limits. A limit the
user restates with an opener ("like i said, …", "reminder, …") takes one slot; two different
limits of the same domain keep one each. Real model, a small synthetic pair; the sentences
are written for this file (not from a probe set)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memfs.embed import Embedder

RESTATED = ("i don't drink alcohol, haven't for years", "like i said, i don't drink alcohol, haven't for years",
            "reminder, i don't drink alcohol, haven't for years")
OTHER = "fizzy stuff gives me awful hiccups so no bubbles for me"
TALK = ("morning! slept badly again", "the cat has decided my keyboard is her bed", "just put a wash on",
        "watching a documentary about octopuses, wild", "rain all day here", "finally sorted the spare room",
        "the bus was twenty minutes late", "my plants are thriving for once", "thinking of repainting the hallway",
        "heading to bed soon", "the neighbours got a puppy", "work was quiet today")


@pytest.mark.model
def test_a_restated_limit_takes_one_slot_and_another_limit_keeps_its_own(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    from memfs import history
    from memfs.app import MemoryStore
    from memfs.constraints import rank_constraints
    from memfs.search import open_index, refresh
    from memfs.search_types import make_query

    lines = list(TALK)
    for at, line in zip((2, 6, 10), RESTATED, strict=True):
        lines.insert(at, line)
    lines.insert(8, OTHER)
    pair = MemoryStore(isolated_env, embedder=real_embedder).pair("sam", "distinct")
    when = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.timezone.utc)
    for line in lines:
        sid = f"s-{when:%Y%m%d}-01"
        history.append(pair.root, sid, "user", line, when)
        history.append(pair.root, sid, "assistant", "Ha, tell me more.", when + dt.timedelta(minutes=1))
        when += dt.timedelta(hours=7)
    index = open_index(pair.root, pair.store.embedder)
    refresh(index)
    hits = [h.text for h in rank_constraints(index, make_query("drinks with the team tonight, what should i get?", 3,
                                                                  now=when + dt.timedelta(days=1)), ["drink"])]
    assert sum(h in RESTATED for h in hits) == 1, hits
    assert OTHER in hits, hits
