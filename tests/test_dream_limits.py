"""Issue 12, point 3: a limit the user states once becomes a boundary card and a profile line.

The quality tests dream windows of small talk with the shipped offline extractor and the real
embedding model (the session fixture); the gates and the card mechanics are checked on their own.
"""

from __future__ import annotations

import datetime as dt

import pytest
from memfs.agent.dream import limits
from memfs.agent.dream.cardtext import write_body
from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.limits import Limit, blocked
from memfs.agent.dream.ops import Op, WriteOp
from memfs.agent.dream.summary import parse_summary

from memfs.embed import Embedder
from memfs.history import Message

UTC = dt.UTC
TS = dt.datetime(2027, 2, 8, 19, 0, tzinfo=UTC)
CHATTER = ["the bus was ten minutes late again", "made a big pot of soup tonight", "watching a baking show",
           "it's been raining all afternoon", "finally sorted the laundry lol"]
REPLY = "Thanks for telling me."


def dream_window(said: str) -> list[Message]:
    """Small talk with ``said`` once in the middle, as a compaction window."""
    lines = [*CHATTER[:3], said, *CHATTER[3:]]
    turns = [x for text in lines for x in (("user", text), ("assistant", REPLY))]
    return [Message("s-20270208-01", i, role, text, TS + dt.timedelta(minutes=i))
            for i, (role, text) in enumerate(turns)]


def boundaries(ops: list[Op]) -> list[str]:
    return [op.body for op in ops if isinstance(op, WriteOp) and op.type == "boundary"]


@pytest.mark.parametrize("said,word", [
    ("Being on a boat turns my stomach inside out.", "boat"),
    ("Heights make me dizzy and shaky, I stay off ladders.", "ladders"),
])
def test_an_indirect_limit_said_once_becomes_a_boundary_card_and_a_profile_line(real_embedder: Embedder,
                                                                              said: str, word: str) -> None:
    """Neither sentence is carded by the learned extractor or the rules alone."""
    window = dream_window(said)
    extraction = OfflineExtractor(real_embedder)(window, [], "", window[-1].ts)
    cards = boundaries(extraction.ops)
    assert any(word in body and "user" in body for body in cards), extraction.ops
    profile = parse_summary(extraction.summary).profile
    assert any(word in line for line in profile), extraction.summary


@pytest.mark.parametrize("said", [
    "My boyfriend can't handle spicy food at all, it makes him sick.",  # another person's limit
    "If I ever got pregnant I'd have to stop drinking coffee.",  # a hypothetical
    "I used to hate the sea, being on a boat turned my stomach.",  # a dropped limit
])
def test_someone_elses_a_hypothetical_or_a_dropped_limit_is_no_boundary(real_embedder: Embedder,
                                                                         said: str) -> None:
    window = dream_window(said)
    extraction = OfflineExtractor(real_embedder)(window, [], "", window[-1].ts)
    assert boundaries(extraction.ops) == [], extraction.ops


@pytest.mark.parametrize("sentence,reason", [
    ("I haven't had a drink in three years", None),
    ("loud crowds make me freeze up", None),
    ("my son can't have eggs, so we never keep them in the house", None),
    ("my son can't have eggs", "someone else"),
    ("can you suggest somewhere quiet", "question"),
    ("tell me a recipe without nuts", "request"),
    ("if I were pregnant I couldn't drink at all", "hypothetical"),
    ("maybe I should cut back on coffee", "hedge"),
    ("my doctor says I can't lift anything heavy", "reported"),
    ("I used to be vegetarian", "past"),
])
def test_the_grammar_gates(sentence: str, reason: str | None) -> None:
    assert blocked(sentence) == reason


class _Msg:
    def __init__(self, turn: int, content: str) -> None:
        self.session, self.turn, self.role, self.content, self.ts = "s-1", turn, "user", content, TS


def test_a_limit_already_carded_is_not_carded_again_and_an_event_of_it_becomes_the_boundary() -> None:
    said = _Msg(4, "Crowded trains make me panic so I walk everywhere.")
    limit = Limit(said, said.content, "", 0.7, 0.5, None, {})
    body = write_body(said.content, None)
    event = WriteOp(type="event", body=body, turns=(4,), session="s-1", valid_from=TS.date())
    ops: list[Op] = [event]
    assert limits._card_limit(limit, ops, [])
    assert [(op.type, op.valid_from) for op in ops if isinstance(op, WriteOp)] == [("boundary", None)]
    assert not limits._card_limit(limit, ops, [])  # now standing: not a second card
    fresh: list[Op] = []
    assert limits._card_limit(limit, fresh, []) and boundaries(fresh)[0].startswith("Crowded trains")
    other_turn = _Msg(9, said.content)
    assert not limits._card_limit(Limit(other_turn, said.content, "", 0.7, 0.5, None, {}), fresh, [])
