"""Issue 13, second round: whose fact a sentence states, and one card per fact.

These check the gates the shipped offline extractor added (measured in BENCHMARKS.md): a plan
or a user-slot fact is the user's only when the sentence says so about the user, an embedding
card that repeats one the dream already writes is not a second card, and the profile does not
repeat a line it already has. The sentences are new, not taken from any split of the
extraction set or from the planted-facts scenario.
"""

from __future__ import annotations

import datetime as dt

import pytest
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream.cardtext import someone_else_acts
from memfs.agent.dream.dates import find_date
from memfs.agent.dream.extract_offline import OfflineExtractor, combine, extract_offline
from memfs.agent.dream.ops import Extraction, WriteOp
from memfs.agent.dream.summary import PROFILE, compose_summary, parse_summary, same_fact

from memfs.embed import Embedder
from memfs.history import Message

DAY = dt.datetime(2028, 6, 5, 18, 0, tzinfo=dt.UTC)  # a Monday


def said(*texts: str) -> list[Message]:
    out = []
    for i, text in enumerate(texts):
        out.append(Message("s-1", 2 * i, "user", text, DAY + dt.timedelta(minutes=4 * i)))
        out.append(Message("s-1", 2 * i + 1, "assistant", "I see.", DAY + dt.timedelta(minutes=4 * i + 2)))
    return out


@pytest.mark.parametrize("sentence,other", [
    ("his band plays the Fleece on Friday", True),
    ("the plumber says he'll come round on Thursday", True),
    ("Noor's brother is flying in on Saturday", True),
    ("my cousin flies in on Saturday", False),          # the user's own news about a cousin
    ("I'm seeing the optician on Friday", False),
    ("they moved my driving test to Thursday", False),  # the user is in the clause
    ("we're off to the coast on Saturday", False),
])
def test_whose_plan_it_is(sentence: str, other: bool) -> None:
    assert someone_else_acts(sentence, find_date(sentence, DAY.date())) is other


def test_strict_rules_write_no_plan_or_fact_of_someone_else() -> None:
    """The old rules made the uncle's asthma the user's and the flatmate's race a plan."""
    window = said("my uncle got diagnosed with asthma last week",
                  "hes running the half marathon on sunday",
                  "I have a dentist appointment on Friday")
    now = DAY + dt.timedelta(hours=1)
    old = [getattr(op, "body", "") for op in extract_offline(window, [], "", now).ops]
    strict = [getattr(op, "body", "") for op in extract_offline(window, [], "", now, strict=True).ops]
    assert any(b.startswith("The user has asthma") for b in old) and any("marathon" in b for b in old)
    assert not any(b.startswith("The user has asthma") or "marathon" in b for b in strict), strict
    assert any("uncle" in b and "asthma" in b for b in strict), strict
    assert any("dentist" in b for b in strict), strict


def test_an_embedding_card_repeating_a_rule_card_is_not_a_second_card() -> None:
    window = said("I started at Quillon Labs this week, as a data engineer")
    ruled = Extraction("", [WriteOp(type="fact", body="The user works at Quillon Labs.", turns=(0,), session="s-1")])
    semantic = Extraction("", [
        WriteOp(type="fact", body="The user started at Quillon Labs this week, as a data engineer.", turns=(2,),
                session="s-1"),
        WriteOp(type="preference", body="The user loves bouldering.", turns=(2,), session="s-1"),
    ])
    out = combine(ruled, semantic, window, [], "", DAY + dt.timedelta(hours=1))
    assert [op.body for op in out.ops if isinstance(op, WriteOp)] == [
        "The user works at Quillon Labs.", "The user loves bouldering."]


def test_the_profile_does_not_repeat_a_fact_it_already_has() -> None:
    """Nor does the story repeat what the profile says."""
    previous = "Sam (he/him) is a tram driver in Sheffield and keeps two ferrets.\n"
    ops = [WriteOp(type="fact", body="The user is a tram driver."),
           WriteOp(type="fact", body="The user is learning the cello.")]
    summary = parse_summary(compose_summary(previous, said("hi"), ops, [], DAY.date()))
    profile = summary.profile
    assert not any("cello" in line or "tram" in line for line in summary.story), summary.story
    assert sum("tram driver" in line for line in profile) == 1, profile
    assert any("cello" in line for line in profile), profile
    assert compose_summary(previous, said("hi"), ops, [], DAY.date()).startswith(PROFILE)
    assert same_fact("The user is a tram driver.", profile[0])
    assert not same_fact("The user is learning the cello.", profile[0])


def test_the_shipped_extractor_on_blind7_now_dev(real_embedder: Embedder) -> None:
    """Regression guard, not an estimate: blind7 was measured blind in the first round (P 0.658,
    R 0.610, 3 false cards) and is dev since; after the second round's gates and calibration it
    gives P 0.846, R 0.537 and no false card (BENCHMARKS.md)."""
    windows = [w for w in ev.load_dataset() if w.split in ("blind7", "misleading")]
    report = ev.score_extraction(OfflineExtractor(real_embedder), windows)
    numbers = report.as_json()
    assert report.false_cards() == 0, [w.false_cards for w in report.windows]
    assert numbers["blind7"]["precision"] >= 0.8 and numbers["blind7"]["recall"] >= 0.5, numbers["blind7"]
