"""The sample pairs that `memfs demo` ships: every file valid, every link and source real."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from memfs.cards import Card
from memfs.check import check_tree
from memfs.ids import check_id
from memfs.pins import parse_pins

ROOT = Path(__file__).resolve().parent.parent / "sample_memories"
PAIRS = sorted(p for p in ROOT.glob("*/*") if (p / "system").is_dir())
TODAY = dt.date(2026, 11, 29)


def _cards(pair: Path) -> dict[str, Card]:
    cards = {}
    for path in sorted((pair / "cards").glob("*.md")):
        card = Card.from_text(path.read_text(encoding="utf-8"), str(path))
        cards[card.id] = card
    return cards


def _history(pair: Path) -> dict[str, list[dict]]:
    return {p.stem: [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]
            for p in sorted((pair / "history").glob("*.jsonl"))}


def _ts(text: str) -> dt.datetime:
    assert text.endswith("Z"), text
    return dt.datetime.fromisoformat(text)


def test_both_pairs_are_shipped():
    assert {f"{p.parent.name}/{p.name}" for p in PAIRS} >= {"alex/mira", "sam/atlas"}


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p.parent.name}/{p.name}")
class TestPair:
    def test_memfs_check_finds_no_problem(self, pair):
        assert [str(p) for p in check_tree(pair)] == []

    def test_every_card_parses_round_trips_and_matches_its_file_name(self, pair):
        paths = sorted((pair / "cards").glob("*.md"))
        assert 8 <= len(paths) <= 12
        for path in paths:
            text = path.read_text(encoding="utf-8")
            card = Card.from_text(text, str(path))
            assert card.id == path.stem
            assert card.to_text() == text, f"{path.name} is not in canonical form"

    def test_card_mix_covers_statuses_and_types(self, pair):
        cards = _cards(pair).values()
        assert {"active", "stale", "expired"} <= {c.status for c in cards}
        assert len({c.type for c in cards if c.status == "active"}) >= 4
        for card in cards:
            if card.status == "expired":
                assert card.expires is not None and card.expires < TODAY

    def test_supersede_links_are_consistent_both_ways(self, pair):
        cards = _cards(pair)
        for card in cards.values():
            if card.status == "stale":
                assert card.superseded_by in cards, card.id
            if card.superseded_by:
                assert card.status == "stale"
                assert card.id in cards[card.superseded_by].supersedes
            for old in card.supersedes:
                assert cards[old].superseded_by == card.id
        assert any(c.supersedes for c in cards.values())

    def test_every_source_points_at_a_real_history_turn(self, pair):
        history = _history(pair)
        for card in _cards(pair).values():
            assert card.source is not None, card.id
            assert card.source.session in history, card.id
            turns = {m["turn"] for m in history[card.source.session]}
            assert card.source.turns and set(card.source.turns) <= turns, card.id
            newest = max(_ts(m["ts"]) for m in history[card.source.session]
                         if m["turn"] in card.source.turns)
            assert card.created >= newest, f"{card.id} was created before what it remembers"

    def test_history_lines_have_the_message_shape(self, pair):
        history = _history(pair)
        assert 2 <= len(history) <= 3
        assert 30 <= sum(len(v) for v in history.values()) <= 60
        for session, lines in history.items():
            check_id(session, "session id")
            assert [m["turn"] for m in lines] == list(range(len(lines)))
            for m in lines:
                assert list(m) == ["session", "turn", "role", "content", "ts"]
                assert m["session"] == session and m["role"] in ("user", "assistant")
                assert m["content"].strip()
            stamps = [_ts(m["ts"]) for m in lines]
            assert stamps == sorted(stamps)

    def test_pins_are_a_markdown_list(self, pair):
        parsed = parse_pins((pair / "system/pins.md").read_text(encoding="utf-8"))
        assert parsed.problems == []
        assert 3 <= len(parsed.pins) <= 5

    def test_conversation_is_a_replayable_transcript(self, pair):
        lines = (pair / "conversation.jsonl").read_text(encoding="utf-8").splitlines()
        messages = [json.loads(line) for line in lines]
        assert 40 <= len(messages) <= 60
        assert [m["role"] for m in messages] == ["user", "assistant"] * (len(messages) // 2)
        assert all(set(m) == {"role", "content", "ts", "session"} for m in messages)
        stamps = [_ts(m["ts"]) for m in messages]
        assert stamps == sorted(stamps) and stamps[0].date() == TODAY
        assert messages[0]["session"] not in _history(pair)

    def test_persona_summary_and_probes_are_present(self, pair):
        assert (pair / "system/persona.md").read_text(encoding="utf-8").startswith("# ")
        assert (pair / "summary.md").read_text(encoding="utf-8").strip()
        probes = (pair / "probes.txt").read_text(encoding="utf-8").splitlines()
        assert len(probes) >= 3 and all(p.strip() for p in probes)


def test_alex_pins_and_first_probe_match_the_demo_story():
    pair = ROOT / "alex" / "mira"
    pins = parse_pins((pair / "system/pins.md").read_text(encoding="utf-8")).texts()
    assert "Alex is allergic to peanuts." in pins
    probes = (pair / "probes.txt").read_text(encoding="utf-8").splitlines()
    assert probes[0] == "Any snack ideas for tonight?"
