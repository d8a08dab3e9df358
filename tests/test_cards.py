"""Cards parse and write exactly: parse → write → parse is the identity."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memfs.cards import CARD_TYPES, STATUSES, Card, Source
from memfs.errors import CardParseError

ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True).filter(
    lambda s: s not in (".", ".."))
names = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20).filter(
    lambda s: s.strip() == s and s != "")
bodies = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00"),
                 min_size=1, max_size=300).map(lambda s: s.lstrip("\n").rstrip()).filter(bool)
times = st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(2200, 1, 1)).map(
    lambda d: d.replace(microsecond=0, tzinfo=dt.UTC))
dates = st.dates(min_value=dt.date(1970, 1, 1), max_value=dt.date(2200, 1, 1))

cards = st.builds(
    Card, id=ids, type=st.sampled_from(CARD_TYPES), body=bodies, status=st.sampled_from(STATUSES),
    entities=st.lists(names, max_size=4).map(tuple), created=times,
    updated=st.none() | times, valid_from=st.none() | dates, expires=st.none() | dates,
    supersedes=st.lists(ids, max_size=3).map(tuple), superseded_by=st.none() | ids,
    salience=st.floats(0, 1).map(lambda f: round(f, 6)),
    source=st.none() | st.builds(Source, session=ids,
                                 turns=st.lists(st.integers(0, 10_000), max_size=4).map(tuple)),
)


@settings(max_examples=300, deadline=None)
@given(cards)
def test_write_then_parse_is_identity(card: Card) -> None:
    assert Card.from_text(card.to_text()) == card


@settings(max_examples=100, deadline=None)
@given(cards)
def test_parse_write_parse_is_stable_on_text(card: Card) -> None:
    text = card.to_text()
    assert Card.from_text(text).to_text() == text


def test_design_example_parses_with_comments_and_round_trips() -> None:
    text = """---
id: c-7f3a2b
type: plan            # fact | preference | plan | event | relationship | boundary
status: active
entities: [user, Lin]
created: 2026-11-02T18:04:00Z
updated: 2026-11-05T09:12:00Z
valid_from: 2026-11-05
expires: 2026-11-08
supersedes: [c-1b2c3d]
superseded_by: null
salience: 0.8
source: {session: s-20261105-01, turns: [12, 15]}
---
The user's meeting with Lin moved from Thursday to Friday 3 pm.
Ünïcode and a second line — kept.
"""
    card = Card.from_text(text)
    assert card.expires == dt.date(2026, 11, 8)
    assert card.source == Source("s-20261105-01", (12, 15))
    assert card.body.endswith("kept.")
    assert Card.from_text(card.to_text()) == card


def test_unknown_fields_survive_a_rewrite() -> None:
    card = Card.from_text("---\nid: c-1\ntype: fact\nstatus: active\ncreated: 2026-01-01T00:00:00Z\n"
                          "mood: [happy, tired]\n---\nA fact.\n")
    assert dict(card.extra) == {"mood": ["happy", "tired"]}
    assert Card.from_text(card.to_text()) == card


@pytest.mark.parametrize(("text", "field", "reason"), [
    ("---\nid: c-1\ntype: rumour\nstatus: active\ncreated: 2026-01-01\n---\nx\n", "type", "must be one of"),
    ("---\nid: c-1\ntype: fact\nstatus: gone\ncreated: 2026-01-01\n---\nx\n", "status", "must be one of"),
    ("---\nid: c-1\ntype: fact\nstatus: active\n---\nx\n", "created", "is required"),
    ("---\nid: ../x\ntype: fact\nstatus: active\ncreated: 2026-01-01\n---\nx\n", "id", "invalid"),
    ("---\nid: c-1\ntype: fact\nstatus: active\ncreated: 2026-01-01\nsalience: 3\n---\nx\n",
     "salience", "between 0 and 1"),
    ("---\nid: c-1\ntype: fact\nstatus: active\ncreated: 2026-01-01\nexpires: soon\n---\nx\n",
     "expires", "not a date"),
    ("---\nid: c-1\ntype: fact\nstatus: active\ncreated: 2026-01-01\n---\n\n", "body", "is empty"),
    ("---\nid: c-1\ntype: [fact\n---\nx\n", "front matter", "not valid YAML"),
    ("no front matter\n", None, "does not start"),
])
def test_validation_names_file_field_and_reason(text: str, field: str | None, reason: str) -> None:
    with pytest.raises(CardParseError) as info:
        Card.from_text(text, "cards/c-1.md")
    assert info.value.path == "cards/c-1.md"
    assert info.value.field == field
    assert reason in info.value.reason
