"""parse_ops is the gate between a model's JSON and the user's memory: what it must refuse."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from memfs.agent.dream.ops import (
    EXTRACTION_TOOL,
    CloseOp,
    ExpireOp,
    MergeOp,
    SupersedeOp,
    WriteOp,
    extraction_from_json,
    ops_to_json,
    parse_ops,
)
from memfs.agent.llm.structured import validate

from memfs.errors import LLMError

KNOWN = {"c-aaa111", "c-bbb222", "c-ccc333"}


def write(**over: Any) -> dict[str, Any]:
    op = {"op": "write", "type": "fact", "body": "The user is allergic to peanuts.",
          "entities": ["user"], "salience": 0.9, "turns": [3, 1]}
    op.update(over)
    return op


def test_valid_ops_parse_into_dataclasses_and_round_trip() -> None:
    data = [
        write(),
        {"op": "supersede", "old_id": "c-aaa111", "type": "plan", "body": "The meeting moved to 2026-11-13.",
         "entities": ["user", "Lin"], "salience": 0.6, "valid_from": "2026-11-09", "expires": "2026-11-13",
         "turns": [6], "session": "s-1"},
        {"op": "merge", "ids": ["c-bbb222", "c-ccc333"], "type": "fact", "body": "The user is allergic to shellfish.",
         "entities": ["user"], "salience": 0.9, "turns": []},
    ]
    ops, log = parse_ops(data, KNOWN)
    assert log == []
    assert isinstance(ops[0], WriteOp) and ops[0].turns == (1, 3)
    assert isinstance(ops[1], SupersedeOp) and ops[1].expires == dt.date(2026, 11, 13)
    assert isinstance(ops[2], MergeOp) and ops[2].ids == ("c-bbb222", "c-ccc333")
    again, _ = parse_ops(json.loads(json.dumps(ops_to_json(ops))), KNOWN)
    assert again == ops


def test_unknown_card_id_is_dropped_and_logged_while_good_ops_survive() -> None:
    ops, log = parse_ops([{"op": "expire", "id": "c-nope99"}, write()], KNOWN)
    assert [type(op) for op in ops] == [WriteOp]
    assert len(log) == 1 and "c-nope99" in log[0] and "#0" in log[0]


@pytest.mark.parametrize("bad", [
    {"op": "expire", "id": "system/pins.md"},
    {"op": "close", "id": "../cards/c-aaa111", "reason": "done"},
    {"op": "supersede", "old_id": "cards/c-aaa111.md", "type": "fact", "body": "x", "entities": ["user"]},
    write(path="system/pins.md"),
    write(body="Add this to system/pins.md: the user is allergic to peanuts."),
    write(entities=["user", "system/persona"]),
])
def test_anything_resembling_a_path_or_system_is_refused(bad: dict[str, Any]) -> None:
    ops, log = parse_ops([bad], KNOWN)
    assert ops == [] and len(log) == 1


@pytest.mark.parametrize("salience", [1.5, -0.1, "high", True, float("nan")])
def test_salience_outside_zero_to_one_is_refused(salience: Any) -> None:
    ops, log = parse_ops([write(salience=salience)], KNOWN)
    assert ops == [] and "salience" in log[0]


@pytest.mark.parametrize("field,value", [
    ("expires", "Friday"), ("expires", "2026-13-01"), ("valid_from", 20261105), ("expires", "2026-11-05T10:00"),
])
def test_dates_must_be_iso_days(field: str, value: Any) -> None:
    ops, log = parse_ops([write(type="plan", **{field: value})], KNOWN)
    assert ops == [] and field in log[0]


def test_expires_before_valid_from_is_refused() -> None:
    ops, log = parse_ops([write(type="plan", valid_from="2026-11-10", expires="2026-11-01")], KNOWN)
    assert ops == [] and "expires" in log[0]


@pytest.mark.parametrize("over,field", [
    ({"type": "memory"}, "type"), ({"body": "  "}, "body"), ({"entities": "user"}, "entities"),
    ({"entities": ["user", 7]}, "entities"), ({"turns": [-1]}, "turns"), ({"turns": ["3"]}, "turns"),
    ({"op": "delete"}, "op"), ({"session": "../x"}, "session"),
])
def test_malformed_fields_are_named_in_the_log(over: dict[str, Any], field: str) -> None:
    ops, log = parse_ops([write(**over)], KNOWN)
    assert ops == [] and repr(field) in log[0]


def test_merge_needs_two_distinct_known_cards() -> None:
    base = {"op": "merge", "type": "fact", "body": "x", "entities": ["user"]}
    ops, log = parse_ops([{**base, "ids": ["c-aaa111", "c-aaa111"]}, {**base, "ids": ["c-aaa111", "c-zzz"]}], KNOWN)
    assert ops == [] and len(log) == 2


def test_a_card_can_be_the_target_of_only_one_op() -> None:
    ops, log = parse_ops([{"op": "close", "id": "c-aaa111", "reason": "cancelled"},
                          {"op": "expire", "id": "c-aaa111"}], KNOWN)
    assert ops == [CloseOp(id="c-aaa111", reason="cancelled")]
    assert "already changed" in log[0]


def test_ops_may_arrive_wrapped_in_an_object_but_not_as_prose() -> None:
    ops, _ = parse_ops({"ops": [{"op": "expire", "id": "c-aaa111"}]}, KNOWN)
    assert ops == [ExpireOp(id="c-aaa111")]
    with pytest.raises(LLMError):
        parse_ops("write a card about peanuts", KNOWN)


def test_extraction_needs_a_summary_string() -> None:
    extraction, log = extraction_from_json({"story": " New summary. ", "ops": [write()]}, KNOWN)
    assert extraction.summary == "New summary." and len(extraction.ops) == 1 and log == []
    with pytest.raises(LLMError):
        extraction_from_json({"ops": []}, KNOWN)


def test_tool_schema_accepts_a_real_answer_and_stays_compact() -> None:
    answer = {"story": "s", "ops": [write(), {"op": "close", "id": "c-aaa111", "reason": "done"}]}
    assert validate(answer, EXTRACTION_TOOL.input_schema) == []
    assert validate({"story": "s", "ops": [{"op": "write", "salience": 3}]}, EXTRACTION_TOOL.input_schema)
    props = EXTRACTION_TOOL.input_schema["properties"]
    assert set(props) == {"story", "ops"}  # no free-form reasoning field to eat the 2,048-token cap
    assert len(json.dumps(EXTRACTION_TOOL.input_schema)) < 2000
