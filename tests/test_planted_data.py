"""The planted-facts scenario: reproducible, the right shape, varied, and fairly scored."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import re

import pytest
from memfs.agent.evals.planted_data import (
    FACT_WORDS,
    PLANTED,
    PROBES,
    _bank,
    generate_planted,
    judge_probe,
    mentions,
    score_probe,
)

from memfs.errors import BadInputError

PLANT_POINTS = {50, 200, 500, 900}


@pytest.fixture(scope="module")
def scenario():
    return generate_planted()


def _ts(text: str) -> dt.datetime:
    assert text.endswith("Z")
    return dt.datetime.fromisoformat(text)


def test_same_seed_gives_identical_scenario(scenario):
    again = generate_planted()
    assert again.sessions == scenario.sessions
    assert again.to_jsonl() == scenario.to_jsonl()


def test_other_seed_changes_small_talk_but_not_plants(scenario):
    other = generate_planted(seed=8)
    a, b = scenario.messages(), other.messages()
    planted = {p.index for p in PLANTED}
    assert [a[i]["content"] for i in sorted(planted)] == [b[i]["content"] for i in sorted(planted)]
    talk_a = [m["content"] for i, m in enumerate(a) if i not in planted]
    talk_b = [m["content"] for i, m in enumerate(b) if i not in planted]
    assert sum(x != y for x, y in zip(talk_a, talk_b)) > len(talk_a) // 2
    assert scenario.probes == other.probes


def test_counts_alternation_and_time_order(scenario):
    msgs = scenario.messages()
    assert len(msgs) == 1000
    assert len(scenario.sessions) == 20
    assert [m["role"] for m in msgs] == ["user", "assistant"] * 500
    stamps = [_ts(m["ts"]) for m in msgs]
    assert all(b > a for a, b in itertools.pairwise(stamps))
    for session in scenario.sessions:
        gaps = [(_ts(b["ts"]) - _ts(a["ts"])).total_seconds() for a, b in itertools.pairwise(session)]
        assert all(60 <= g <= 180 for g in gaps)
        assert session[0]["role"] == "user" and session[-1]["role"] == "assistant"


def test_sessions_have_ids_on_distinct_days(scenario):
    ids = [s[0]["session"] for s in scenario.sessions]
    assert len(set(ids)) == 20
    for session, sid in zip(scenario.sessions, ids):
        assert re.fullmatch(r"s-\d{8}-\d{2}", sid)
        assert sid[2:10] == _ts(session[0]["ts"]).strftime("%Y%m%d")
        assert {m["session"] for m in session} == {sid}
    assert scenario.sessions[0][0]["ts"] == "2026-09-01T09:00:00Z"
    assert scenario.probe_session not in ids
    assert scenario.probe_start > _ts(scenario.sessions[-1][-1]["ts"])


def test_plants_sit_at_the_stated_indices(scenario):
    msgs = scenario.messages()
    assert {p.index for p in scenario.planted if p.kind == "plant"} == PLANT_POINTS
    assert [p.index for p in scenario.planted] == [p.index for p in PLANTED]
    for p in scenario.planted:
        assert msgs[p.index]["role"] == "user"
        assert msgs[p.index]["content"] == p.content
    for probe in scenario.probes:
        text = msgs[probe.planted_at]["content"]
        assert probe.planted_at in PLANT_POINTS
        if probe.updated_at is None:
            assert all(mentions(text, k) for k in probe.expected), probe.id
        else:
            assert all(mentions(text, k) for k in probe.outdated), probe.id
            assert probe.updated_at > probe.planted_at
            assert all(mentions(msgs[probe.updated_at]["content"], k) for k in probe.expected)


def test_at_least_three_updates_and_several_card_types():
    assert sum(p.updated_at is not None for p in PROBES) >= 3
    assert len(PROBES) >= 8
    assert {"fact", "preference", "plan", "relationship", "boundary"} <= {p.card_type for p in PROBES}


def test_probe_questions_do_not_give_the_answer_away(scenario):
    for probe in scenario.probes:
        assert not any(mentions(probe.question, k) for k in probe.expected + probe.outdated), probe.id


@pytest.mark.parametrize("seed", [7, 1, 12345])
def test_small_talk_is_varied(seed):
    msgs = generate_planted(seed=seed).messages()
    users = [m["content"] for m in msgs if m["role"] == "user"]
    assert len(set(users)) / len(users) >= 0.7
    assert all(a["content"] != b["content"] for a, b in itertools.pairwise(msgs))
    assert all(a != b for a, b in itertools.pairwise(users))
    replies = [m["content"] for m in msgs if m["role"] == "assistant"]
    assert all(a != b for a, b in itertools.pairwise(replies))


@pytest.mark.parametrize("seed", [7, 1, 12345])
def test_small_talk_never_mentions_a_planted_fact(seed):
    msgs = generate_planted(seed=seed).messages()
    planted = {p.index for p in PLANTED}
    for i, m in enumerate(msgs):
        if i in planted or i - 1 in planted:
            continue
        leaked = [w for w in FACT_WORDS if mentions(m["content"], w)]
        assert not leaked, (i, m["content"], leaked)


def test_small_talk_bank_has_no_fact_words_and_known_slots():
    bank = _bank()
    slots = set(bank["slots"]) | {"outing2"}
    texts = [v for opts in bank["slots"].values() for v in opts]
    for line in [ln for t in bank["topics"] for ln in t["lines"]] + bank["signoff"]:
        texts += [line["user"], *line["replies"]]
        used = set(re.findall(r"{(\w+)}", line["user"]))
        assert used <= slots, line["user"]
        for reply in line["replies"]:
            assert set(re.findall(r"{(\w+)}", reply)) <= used, reply
    for text in texts:
        assert not [w for w in FACT_WORDS if mentions(text, w)], text


def test_jsonl_round_trips_in_ingest_shape(scenario):
    per_session = scenario.to_jsonl_sessions()
    assert [sid for sid, _ in per_session] == [s[0]["session"] for s in scenario.sessions]
    lines = [json.loads(line) for _, text in per_session for line in text.splitlines()]
    assert lines == scenario.messages()
    assert set(lines[0]) == {"role", "content", "ts", "session"}
    probe = scenario.probe_message(PROBES[0])
    assert probe["session"] == scenario.probe_session and probe["role"] == "user"


def test_too_few_messages_is_refused():
    with pytest.raises(BadInputError, match="950"):
        generate_planted(n_messages=600, n_sessions=10)
    with pytest.raises(BadInputError):
        generate_planted(n_messages=999)


JOB = next(p for p in PROBES if p.id == "job")
ALLERGY = next(p for p in PROBES if p.id == "allergy")


def test_score_recalled_when_current_value_in_context():
    assert score_probe("Card: the user works as a NURSE on a children's ward.", JOB) == "recalled"
    assert score_probe("Alex is allergic to Peanuts.", ALLERGY) == "recalled"


def test_score_stale_when_only_the_superseded_value_is_there():
    assert score_probe("The user works at a bakery and starts at 4am.", JOB) == "stale"


def test_score_missed_when_neither_value_is_there():
    assert score_probe("The user likes crosswords and green tea.", JOB) == "missed"
    assert score_probe("", ALLERGY) == "missed"


def test_score_flags_outdated_value_next_to_the_current_one():
    both = judge_probe("Used to work at a bakery; now a nurse.", JOB)
    assert both.outcome == "recalled" and both.also_stale
    assert both.matched == ("nurse",) and both.matched_outdated == ("bakery",)
    assert not judge_probe("Now a nurse.", JOB).also_stale


def test_plan_dates_are_real_and_still_ahead_when_asked(scenario):
    dentist = next(p for p in scenario.probes if p.id == "dentist")
    msgs = scenario.messages()
    plant, update = msgs[dentist.planted_at]["content"], msgs[dentist.updated_at]["content"]
    thu = re.search(r"Thursday (\d+) (\w+)", plant)
    fri = re.search(r"Friday (\d+) (\w+)", update)
    assert thu and fri
    thu_date = dt.datetime.strptime(f"{thu[1]} {thu[2]} 2026", "%d %B %Y").date()
    fri_date = dt.datetime.strptime(f"{fri[1]} {fri[2]} 2026", "%d %B %Y").date()
    assert thu_date.weekday() == 3 and fri_date == thu_date + dt.timedelta(days=1)
    assert thu_date > scenario.probe_start.date()
    assert score_probe(f"Dentist moved to {fri_date.isoformat()}.", dentist) == "recalled"
    assert score_probe(f"Dentist on {thu_date.day} {thu_date:%B}.", dentist) == "stale"
    assert score_probe("Dentist moved to Fri.", dentist) == "missed"


def test_keyword_match_is_wordish():
    assert mentions("two PEANUTS", "peanut")
    assert not mentions("peanutty", "peanut")
    assert not mentions("the nursery", "nurse")
    assert mentions("Fleetwood  Mac", "fleetwood mac")
    assert mentions("on Fri 16 Oct", "Friday|16 Oct") and not mentions("16 October", "Friday|16 Oct")
