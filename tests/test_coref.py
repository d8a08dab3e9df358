"""Issue 13, card hygiene: a card names the person its he or she is (``agent/dream/coref.py``).

A wrong name asserts a fact about the wrong person, so most cases here are the ones where the
step must leave the card as said. The demo pair's two cards are checked through the shipped
offline extractor with the real model."""

from __future__ import annotations

import datetime as dt

import pytest
from memfs.agent.dream.coref import name_in_body, people_known
from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.learned import name_people
from memfs.agent.dream.ops import SupersedeOp, WriteOp

from memfs.cards import Card
from memfs.embed import Embedder
from memfs.history import Message

from .test_dream_spine import apply_in_memory, demo_pair


def named(body: str, before: list[str], cards: tuple[str, ...] = (), names: tuple[str, ...] = ()) -> str:
    return name_in_body(body, before, people_known([*before, *cards], names))[0]


@pytest.mark.parametrize("body,before,want", [
    # the kin word of the pronoun's gender, read past one of the other gender
    ("He's 88. He's the one who taught the user to draw.",
     ["Mum called. Grandad had a fall on Friday and he's in hospital.", "Not great."],
     "The user's grandad is 88. He's the one who taught the user to draw."),
    ("She's furious about it.", ["Mum called. Grandad had a fall on Friday."], "The user's mum is furious about it."),
    # a name a kin word ties to a person; an inner pronoun keeps its place
    ("The user wants to do something special for her.", ["my sister Maya is visiting", "Maybe the cinema."],
     "The user wants to do something special for her (Maya)."),
    ("She's got a new job in Leeds.", ["my big sister told me last night"], "The user's big sister's got a new job in Leeds."),
    ("The vet says his kidneys are weak.", ["our cat is 15 now"], "The vet says the user's cat's kidneys are weak."),
    ("She's off coffee till the baby comes.", ["my cousin aroha is pregnant"], "Aroha is off coffee till the baby comes."),
    ("He'd gone by the time the user got there.", ["my dad left early"], "The user's dad had gone by the time the user got there."),
    ("He'd love it.", ["my dad"], "The user's dad would love it."),
])
def test_a_pronoun_is_written_as_the_person_it_points_back_to(body: str, before: list[str], want: str) -> None:
    assert named(body, before) == want


@pytest.mark.parametrize("body,before", [
    ("He says the user should quit.", ["kwabena rang from accra"]),  # a name the step cannot place
    ("He laughed so hard he fell off the jetty.", ["my uncle was there", "I chatted to the boatman in struga"]),
    ("She's lovely.", ["her sister came round"]),  # someone else's kin
    ("The user's sister thinks he is lying.", ["my dad said so"]),  # the body names someone already
    ("Yui can't go near the kiln, her asthma.", ["my sister works there too"]),  # the sentence's own name
    ("He's 88.", ["Grandad is in hospital", "I moved to Glasgow last year"]),  # a place in between
    ("She's 12.", ["my brother is home"]),  # no one of her gender
    ("The user loves it.", ["my sister Maya"]),  # no pronoun
])
def test_a_card_stays_as_said_when_the_person_cannot_be_placed(body: str, before: list[str]) -> None:
    assert named(body, before) == body


def test_a_relationship_cards_people_are_known_and_the_assistant_is_not_read(real_embedder: Embedder) -> None:
    """"Maya is Alex's sister" (an active card) makes Maya a person; "Oh, Alex." said by the
    assistant right before the sentence is never taken for the one the user means."""
    ts = dt.datetime(2027, 1, 4, 19, 0, tzinfo=dt.UTC)
    window = [Message("s-1", 0, "user", "Maya's down next weekend.", ts),
              Message("s-1", 1, "assistant", "Oh, Alex. That's lovely news!", ts),
              Message("s-1", 2, "user", "It's been a rough term for her.", ts)]
    from memfs.agent.dream.extract_semantic import Cand

    cand = Cand("relationship", "relationship", "It's been a rough term for her.", window[2], 0.65,
                real_embedder.embed(["x"])[0], sentence="It's been a rough term for her.")
    sister = Card(id="c-1", type="relationship", body="Maya is Alex's sister.", entities=("Alex", "Maya"),
                  created=ts)
    name_people([cand], window, [sister])
    assert cand.body == "It's been a rough term for her (Maya)."
    assert "Maya" in cand.entities


def test_the_demo_cards_name_grandad_and_maya(real_embedder: Embedder) -> None:
    """`memfs demo` wrote "He's 88. He's the one who taught the user to draw …" and "… it's been
    a rough term for her." into the profile, with no one in them."""
    cards, summary, windows = demo_pair()
    extractor = OfflineExtractor(real_embedder)
    bodies: list[str] = []
    for window in windows:
        extraction = extractor(window, list(cards.values()), summary, window[-1].ts)
        apply_in_memory(cards, extraction.ops, window[-1].ts)
        summary = extraction.summary
        bodies += [op.body for op in extraction.ops if isinstance(op, (WriteOp, SupersedeOp))]
    assert any(b.startswith("The user's grandad is 88.") for b in bodies), bodies
    assert any("rough term for her (Maya)" in b for b in bodies), bodies
    assert not any(b.startswith("He's 88") for b in bodies)
    assert "grandad is 88" in summary and "her (Maya)" in summary, summary
