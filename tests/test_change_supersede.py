"""A change told against the old value replaces that value (issue 13: memory knows which fact is
still true).

Chat ends a single-valued slot more often by naming the old value than by stating the new one:
"the user and dmitri are done" is a relationship sentence, not a partner one, and its cosine to
"Dmitri is the user's boyfriend." is under ``Thresholds.supersede``; on the dev splits (stop 33)
62 of 71 missed supersedes were such, and the old card stayed active beside the new one. The
sentences here are new (no data set's), and the real model scores them."""

from __future__ import annotations

import datetime as dt

from memfs.agent.dream.change import ENDS, change_scores
from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.ops import SupersedeOp
from memfs.agent.dream.prototypes import load_prototypes

from memfs.cards import Card, Source
from memfs.embed import Embedder
from memfs.history import Message

UTC = dt.UTC
SAID = dt.datetime(2027, 3, 1, 18, 0, tzinfo=UTC)


def _card(id_: str, type_: str, body: str, *entities: str) -> Card:
    return Card(id=id_, type=type_, body=body, entities=("user", *entities), created=SAID - dt.timedelta(days=40),
                salience=0.7, source=Source("s-0", (4,)))


def _active() -> list[Card]:
    return [_card("c-part01", "relationship", "Tomasz is the user's boyfriend.", "Tomasz"),
            _card("c-job001", "fact", "The user works at a garden centre in Leeds."),
            _card("c-home01", "fact", "The user lives in Porto, near the river.", "Porto")]


def _replaced(embedder: Embedder, lines: list[str]) -> set[str]:
    window = [Message("s-1", i, "user" if i % 2 == 0 else "assistant", t, SAID + dt.timedelta(minutes=i))
              for i, t in enumerate(lines)]
    ops = OfflineExtractor(embedder)(window, _active(), "", window[-1].ts).ops
    return {op.old_id for op in ops if isinstance(op, SupersedeOp)}


def test_an_ending_told_by_the_old_value_replaces_it(real_embedder: Embedder) -> None:
    """The move left "lives in Porto" active before stop 33 (its sentence is no home sentence);
    the break-up and the job read as their slot and were replaced already. A sentence the
    extractor writes no card from cannot replace one: "tomasz and me called it quits in the
    end" is no candidate, on main or here."""
    assert "c-part01" in _replaced(real_embedder, ["me and tomasz broke up last month, still a bit raw tbh",
                                                   "I'm sorry, that's hard."])
    assert "c-job001" in _replaced(real_embedder, ["quit the garden centre on friday, no more leeds ring road for me",
                                                   "Good for you!"])
    assert "c-home01" in _replaced(real_embedder, ["porto is behind us now, we got a flat in braga in january",
                                                   "How exciting!"])


def test_a_mention_of_the_value_without_a_change_replaces_nothing(real_embedder: Embedder) -> None:
    assert _replaced(real_embedder, ["tomasz's brother is staying with us all weekend, send help",
                                     "Ha, good luck!"]) == set()
    assert _replaced(real_embedder, ["the garden centre was absolutely rammed today, everyone wants tomato plants",
                                     "Sounds busy!"]) == set()


def test_the_change_slots_are_the_single_valued_slots(real_embedder: Embedder) -> None:
    """A multi-valued slot (a pet, a sibling) is not ended by a new value; the prototypes say
    which slots are single, and the change sets cover exactly those."""
    single = {name for name, cls in load_prototypes(real_embedder).classes.items() if cls.single}
    assert set(ENDS) == single
    ending, staying = change_scores(real_embedder.embed(["we split up last month", "my boyfriend cooked tonight"]),
                                    real_embedder)
    assert ending["partner"] > 0 > staying["partner"]
