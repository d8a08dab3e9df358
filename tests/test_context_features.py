"""A standing fact is carded whatever small talk came just before it (issue 13: the profile
never misses a fact because of where in the chat it was said).

The learned extractor reads, beside the sentence, the user's sentence before it and the
assistant turn before its message: they are there for facts told over two messages and for
answers to a question. Read always, unrelated small talk just before a fact lowered its card
probability by 0.1-0.2 (stop 33: on profile blind7 four standing facts carded at 200 messages
were not at 1,600). The sentences here are new (no data set's)."""

from __future__ import annotations

import datetime as dt

import pytest
from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.extract_semantic import _units
from memfs.agent.dream.learned import rows_of

from memfs.embed import Embedder
from memfs.history import Message

SAID = dt.datetime(2027, 5, 2, 19, 0, tzinfo=dt.UTC)
CHATTER = ["watched a squirrel bury a walnut in my neighbour's flowerpot for ten mins", "nature tv"]


def _window(lines: list[str]) -> list[Message]:
    return [Message("s-1", i, "user" if i % 2 == 0 else "assistant", t, SAID + dt.timedelta(minutes=i))
            for i, t in enumerate(lines)]


def _cards(embedder: Embedder, lines: list[str]) -> list[str]:
    window = _window(lines)
    return [op.body for op in OfflineExtractor(embedder)(window, [], "", window[-1].ts).ops]


@pytest.mark.parametrize("fact,word", [
    ("name's horatia but everyone calls me hattie", "horatia"),
    ("i work nights as a baggage handler at the airport, been doing it 4 yrs", "baggage"),
])
def test_small_talk_before_a_fact_does_not_decide_whether_it_is_carded(real_embedder: Embedder, fact: str,
                                                                       word: str) -> None:
    """On main the name was carded as a session's first message and not after the squirrel."""
    alone = _cards(real_embedder, [fact, "oh nice"])
    after = _cards(real_embedder, [*CHATTER, fact, "oh nice"])
    assert any(word in body.lower() for body in alone)
    assert any(word in body.lower() for body in after)


def test_the_context_is_read_only_where_the_sentence_leans_on_it() -> None:
    """The sentence before in the same message, or one the sentence leans on ("she's ..."), and
    a question the assistant asked, are kept; unrelated chatter and a non-question are not."""
    window = _window(["the bus was late again, classic", "ugh",
                      "my aunt runs a bakery in leeds. she does the best parkin", "Do you bake too?",
                      "no", "fair enough", "I'm a tram driver btw", "cool"])
    rows = {r.sentence: r for r in rows_of(window, _units(window))}
    assert rows["my aunt runs a bakery in leeds."].previous == ""  # the bus, another message
    assert rows["she does the best parkin"].previous == "my aunt runs a bakery in leeds."
    assert rows["my aunt runs a bakery in leeds."].asked == ""  # "ugh" asked nothing
    assert rows["no"].asked == "Do you bake too?"
    assert rows["I'm a tram driver btw"].previous == "" and rows["I'm a tram driver btw"].asked == ""
