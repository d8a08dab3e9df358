"""The opt-in card gates of the learned extractor (BENCHMARKS "Stop 27, false cards"): off by
default, measured by ``bench/extract_loso.py --extractor gate``. The sentences are new (written
for this file, in no split of the extraction set)."""

from __future__ import annotations

import datetime as dt

from memfs.agent.dream.dates import find_date
from memfs.agent.dream.fit_learned import with_rules
from memfs.agent.dream.learned import LearnedExtractor, one_episode, shipped_model
from memfs.agent.dream.ops import MergeOp, SupersedeOp, WriteOp

from memfs.embed import Embedder
from memfs.history import Message

UTC = dt.UTC
DAY = dt.date(2029, 6, 13)


def _episode(sentence: str) -> bool:
    return one_episode(sentence, DAY, find_date(sentence, DAY))


def test_one_past_episode_is_told_apart_from_a_standing_fact() -> None:
    assert _episode("Burnt the risotto tonight, the whole flat smells of smoke.")
    assert _episode("Went bouldering on tuesday and my forearms are still dead.")
    assert not _episode("I teach maths at a secondary school in Derby.")
    assert not _episode("I can't stand coriander.")
    assert not _episode("Moved to Bristol last year for the job.")  # a year, not one day


def _cards(embedder: Embedder, lines: list[str], gates: frozenset[str]) -> str:
    ts = dt.datetime(2029, 6, 13, 19, 0, tzinfo=UTC)
    window = [Message("s-1", i, "user" if i % 2 == 0 else "assistant", t, ts + dt.timedelta(minutes=i))
              for i, t in enumerate(lines)]
    extract = with_rules(LearnedExtractor(embedder, shipped_model(), gates=gates))
    ops = extract(window, [], "", window[-1].ts).ops
    return " | ".join(f"{op.type}: {op.body}" for op in ops
                      if isinstance(op, (WriteOp, SupersedeOp, MergeOp))).lower()


def test_the_gates_keep_the_users_standing_facts(real_embedder: Embedder) -> None:
    lines = ["I'm a sound engineer at a theatre in Hull.", "Oh nice, what's that like?",
             "I'm vegetarian, have been since I was twelve.", "Good to know."]
    plain = _cards(real_embedder, lines, frozenset())
    gated = _cards(real_embedder, lines, frozenset({"own", "episode"}))
    for word in ("sound engineer", "vegetarian"):
        assert word in plain and word in gated, (plain, gated)


def test_the_episode_gate_writes_no_fact_from_one_evening(real_embedder: Embedder) -> None:
    lines = ["Burnt the risotto tonight, the whole flat smells of smoke.", "Oh no! Takeaway then?"]
    assert "risotto" not in _cards(real_embedder, lines, frozenset({"episode"}))
