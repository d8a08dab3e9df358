"""The change stage's mechanics (stop 39's x-chg, flagging since stop 41's x-flag), with a stand-in
judge (no model).

The sentences are written for this file (not from an extraction split or a bank)."""

from __future__ import annotations

import datetime as dt

import numpy as np
from memfs.agent.dream.change import Nearby, Said, decide, flag, judged, nearest
from memfs.agent.dream.ops import Extraction, FlagOp, SupersedeOp, WriteOp

from memfs.cards import Card, Source
from memfs.history import Message

SAID = dt.datetime(2027, 5, 3, 18, 0, tzinfo=dt.UTC)


def _card(cid: str, body: str, kind: str = "fact") -> Card:
    return Card(id=cid, type=kind, body=body, entities=("user",), created=SAID - dt.timedelta(days=40),
                salience=0.7, source=Source("s-0", (2,)))


JOB = _card("c-job001", "The user works at a bakery on Mill Road.")
HOME = _card("c-home01", "The user lives in Leeds.")


def _said(turn: int, text: str) -> Said:
    return Said(Message("s-1", turn, "user", text, SAID), text, "")


class _Judge:
    """A stand-in for ``CrossJudge``: a fixed probability per sentence; records what it was asked."""

    def __init__(self, p: dict[str, float]) -> None:
        self.p, self.asked = p, []  # type: ignore[var-annotated]

    def __call__(self, said: list[str], cards: list[str]) -> np.ndarray:
        self.asked += list(zip(said, cards, strict=True))
        return np.array([self.p.get(s, 0.0) for s in said], dtype=np.float32)


def test_each_card_takes_its_best_sentence_and_a_sentence_ends_one_card() -> None:
    p = np.array([[0.99, 0.97], [0.2, 0.1]])
    assert decide(p, 0.95) == [(0, 0)]  # sentence 0 is the job card's; the home card's best is taken
    assert decide(p, 0.995) == []


def test_only_the_nearest_cards_are_judged_and_a_replaced_card_is_not() -> None:
    found = Nearby([_said(0, "handed in my apron at the bakery"), _said(2, "leeds is grey today")], [JOB, HOME],
                   np.array([[0.6, 0.1], [0.2, 0.5]], dtype=np.float32))
    assert nearest(found.sims, 1) == [(0, 0), (1, 1)]
    judge = _Judge({"handed in my apron at the bakery": 0.99})
    p = judged(found, judge, used={HOME.id}, top=1)  # type: ignore[arg-type]
    assert judge.asked == [("handed in my apron at the bakery", JOB.body)]
    assert p[0, 0] > 0.98 and p[1, 1] == 0.0


def test_a_change_is_flagged_on_the_old_card_and_nothing_is_written_or_ended() -> None:
    """Stop 41: a judged change records the user's words and when they were said beside the card;
    the window's own ops are untouched, and a card an op already supersedes is left to that op."""
    said = [_said(0, "handed in my apron at the bakery"), _said(2, "doing the books at a brewery now")]
    found = Nearby(said, [JOB, HOME], np.zeros((2, 2), dtype=np.float32))
    own = WriteOp(type="fact", body="The user does the books at a brewery now.", entities=("user",), turns=(2,),
                  session="s-1")
    p = np.array([[0.2, 0.0], [0.9, 0.0]])
    ops = flag(Extraction("", [own]), found, p, 0.5).ops
    assert ops == [own, FlagOp(id=JOB.id, words="doing the books at a brewery now", said=SAID, session="s-1", turn=2)]
    assert flag(Extraction("", [own]), found, p, 0.95).ops == [own]
    already = SupersedeOp(old_id=JOB.id, type="fact", body="The user works at the brewery.", turns=(5,), session="s-1")
    assert flag(Extraction("", [already]), found, p, 0.5).ops == [already]


def test_a_sentence_about_something_else_is_not_judged_against_the_card_nearest_it() -> None:
    """Stop 40: judged against its nearest card however far, a sentence about something else was read
    as ending that card; under the floor the pair is never asked."""
    found = Nearby([_said(0, "took another spot off my shoulder at the skin doctor"), _said(1, "handed in my apron")],
                   [JOB, HOME], np.array([[0.12, 0.05], [0.41, 0.02]], dtype=np.float32))
    assert nearest(found.sims, 1, floor=0.275) == [(1, 0)]
    judge = _Judge({"took another spot off my shoulder at the skin doctor": 0.99, "handed in my apron": 0.99})
    p = judged(found, judge, used=set(), top=1, floor=0.275)  # type: ignore[arg-type]
    assert [s for s, _ in judge.asked] == ["handed in my apron"]
    assert p[0].max() == 0.0 and p[1, 0] > 0.98
