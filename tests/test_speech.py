"""Speech acts (issue 13, sixth round): a sentence said *to* the assistant is no fact about the
user. The sentences are new (in no split of the extraction set), typed the way chat is typed:
questions without "?", requests without "please"."""

from __future__ import annotations

import datetime as dt

from memfs.agent.dream.cardtext import called_off
from memfs.agent.dream.dates import find_date
from memfs.agent.dream.learned import states_nothing
from memfs.agent.dream.speech import addressed, asks, bids


def test_questions_typed_without_a_question_mark_are_questions() -> None:
    for said in ("do you think otters hold hands", "how do I descale a kettle", "is it bad that I skipped gym",
                 "what even is a mortgage broker", "ok whats the best pasta shape", "have you ever seen snow"):
        assert asks(said), said
    for said in ("I do spin on tuesdays", "what I love about leeds is the markets", "which is why I moved",
                 "had the worst week of my life", "how I met my wife is a long story"):
        assert not asks(said), said


def test_requests_are_addressed_but_boundaries_and_names_are_not() -> None:
    for said in ("tell me a joke about pigeons", "give me a recipe for dal", "you should try climbing",
                 "explain tax codes like I'm five", "ok recommend me a podcast"):
        assert bids(said) and addressed(said), said
    for said in ("don't mention my ex", "never call me sweetie", "call me jo", "I told my boss no",
                 "my sister works in a bakery", "remind me to ring the dentist friday"):
        assert not addressed(said), said


def test_a_sentence_said_to_the_assistant_writes_no_fact_but_a_boundary_stays() -> None:
    assert states_nothing("can you tell me something fun about octopuses", "fact")
    assert states_nothing("what should I cook tonight", "preference")
    assert not states_nothing("I'm a vet nurse in york", "fact")
    assert not states_nothing("please don't bring up my dad", "boundary")


def test_a_plan_said_in_the_negative_is_called_off() -> None:
    day = dt.date(2027, 3, 1)
    for said, off in (("the gig on the 12th isn't happening", True),
                      ("I'm not going to the party on friday after all", True),
                      ("can't wait for saturday, the whole gang is coming", False),
                      ("I'm flying to rome on friday, not sure about the hotel", False)):
        hit = find_date(said, day)
        assert hit is not None and called_off(said, hit) is off, said
