"""Issue 12, point 1, inside the constraint slots: k slots hold k different limits. A limit the
user restates with an opener ("like i said, …", "reminder, …") takes one slot; two different
limits of the same domain keep one each. Real model, the eval's own small talk
(``history_with``); the limits are written for this file (not from a probe set)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.embed import Embedder

RESTATED = ("i don't drink alcohol, haven't for years", "like i said, i don't drink alcohol, haven't for years",
            "reminder, i don't drink alcohol, haven't for years")
OTHER = "fizzy stuff gives me awful hiccups so no bubbles for me"


@pytest.mark.model
def test_a_restated_limit_takes_one_slot_and_another_limit_keeps_its_own(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    from memfs.agent.evals.constraints import START, history_with

    from memfs import history
    from memfs.search import constraint_search

    pair = MemoryStore(isolated_env, embedder=real_embedder).pair("sam", "distinct")
    said = [(RESTATED[0], "Noted."), (OTHER, "Ha, fair."), (RESTATED[1], "Got it."), (RESTATED[2], "Of course.")]
    for sid, msgs in history_with(said, 200):
        for m in msgs:
            history.append(pair.root, sid, m["role"], m["content"], m["ts"])
    hits = [h.text for h in constraint_search(pair, "drinks with the team tonight, what should i get?", ("drink",),
                                              k=3, now=START + dt.timedelta(days=60))]
    assert sum(h in RESTATED for h in hits) == 1, hits
    assert OTHER in hits, hits
