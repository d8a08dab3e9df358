"""The LLM extractor: what the model is shown, and how its answer is gated."""

from __future__ import annotations

import datetime as dt
import logging

import pytest
from memfs.agent.dream.extract_llm import dream_prompt, extract_with_llm
from memfs.agent.dream.ops import EXTRACTION_TOOL, ExpireOp, SupersedeOp, WriteOp

from memfs.cards import Card
from memfs.errors import LLMError
from memfs.history import Message as Msg
from tests.conftest import FakeLLM

UTC = dt.UTC
TS = dt.datetime(2026, 11, 4, 19, 30, tzinfo=UTC)
NOW = dt.datetime(2026, 11, 4, 21, 0, tzinfo=UTC)


WINDOW = [
    Msg("s-20261104-01", 7, "user", "ugh I have a dentist appointment tomorrow at 9", TS),
    Msg("s-20261104-01", 8, "assistant", "Good luck! Ask about numbing gel.", TS + dt.timedelta(minutes=1)),
    Msg("s-20261104-01", 9, "user", "also the meeting with Lin got moved to Friday", TS + dt.timedelta(minutes=2)),
]
CARDS = [
    Card(id="c-meet01", type="plan", body="The user has a meeting with Lin on Thursday 2026-11-12.",
         expires=dt.date(2026, 11, 12), created=TS),
    Card(id="c-old001", type="fact", body="The user used to live in Leeds.", status="stale", created=TS),
]
ANSWER = {
    "story": "The user has a dentist appointment on 2026-11-05.",
    "ops": [
        {"op": "write", "type": "plan", "body": "The user has a dentist appointment on 2026-11-05 at 9.",
         "entities": ["user"], "salience": 0.6, "valid_from": "2026-11-04", "expires": "2026-11-05", "turns": [7]},
        {"op": "supersede", "old_id": "c-meet01", "type": "plan", "body": "The user's meeting with Lin moved to Friday 2026-11-06.",
         "entities": ["user", "Lin"], "salience": 0.6, "expires": "2026-11-06", "turns": [9]},
        {"op": "expire", "id": "c-old001"},
    ],
}


def test_prompt_shows_the_window_with_turns_and_the_active_cards_by_id() -> None:
    llm = FakeLLM().enqueue(tool={"name": EXTRACTION_TOOL.name, "input": ANSWER})
    extract_with_llm(llm, WINDOW, CARDS, "Previous summary text.", NOW)
    (call,) = llm.calls
    assert call["system"] == [dream_prompt()]
    assert call["tools"] == [EXTRACTION_TOOL.name] and call["tool_choice"] == EXTRACTION_TOOL.name
    assert call["max_tokens"] == 2048
    request = call["messages"][0]["content"]
    assert "[s-20261104-01:7 2026-11-04T19:30Z Wed] user: ugh I have a dentist appointment tomorrow at 9" in request
    assert "[s-20261104-01:9 " in request and "assistant: Good luck!" in request
    assert "c-meet01 [plan, expires 2026-11-12]" in request
    assert "c-old001" not in request  # stale cards are not offered as targets
    assert "Previous summary text." in request and "Today: 2026-11-04" in request


def test_prompt_states_the_lessons() -> None:
    prompt = dream_prompt().lower()
    for lesson in ("unfinished plans", "no trivia", "absolute dates", "turns", "stand alone", "system/"):
        assert lesson in prompt


def test_answer_is_parsed_and_ops_on_unknown_or_inactive_cards_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    llm = FakeLLM().enqueue(tool={"name": EXTRACTION_TOOL.name, "input": ANSWER})
    with caplog.at_level(logging.WARNING, logger="memfs.agent.dream.extract_llm"):
        ex = extract_with_llm(llm, WINDOW, CARDS, "", NOW)
    assert ex.summary.startswith("## Profile") and "## Recent story" in ex.summary
    assert "2026-11-04: The user has a dentist appointment on 2026-11-05." in ex.summary  # the story line
    assert "Open plans:" in ex.summary and "meeting with Lin moved to Friday" in ex.summary
    assert [type(op) for op in ex.ops] == [WriteOp, SupersedeOp]
    write = ex.ops[0]
    assert isinstance(write, WriteOp) and write.expires == dt.date(2026, 11, 5) and write.turns == (7,)
    assert write.session == "s-20261104-01"  # filled in: the window has one session
    assert not any(isinstance(op, ExpireOp) for op in ex.ops)
    assert "c-old001" in caplog.text


def test_one_repair_then_llm_error() -> None:
    bad = {"name": EXTRACTION_TOOL.name, "input": {"ops": "none"}}
    llm = FakeLLM().enqueue(tool=bad).enqueue(tool=bad)
    with pytest.raises(LLMError):
        extract_with_llm(llm, WINDOW, CARDS, "", NOW)
    assert len(llm.calls) == 2


def test_repaired_answer_is_used() -> None:
    llm = FakeLLM().enqueue("I think the user...").enqueue(tool={"name": EXTRACTION_TOOL.name, "input": ANSWER})
    ex = extract_with_llm(llm, WINDOW, CARDS, "", NOW)
    assert len(ex.ops) == 2
