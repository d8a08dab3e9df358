"""The offline dream rules, sentence by sentence: what becomes a card, and what must not."""

from __future__ import annotations

import datetime as dt

import pytest
from memfs.agent.dream.extract_offline import extract_offline, find_date
from memfs.agent.dream.ops import CloseOp, ExpireOp, Extraction, MergeOp, SupersedeOp, WriteOp
from memfs.agent.dream.summary import SUMMARY_MAX_CHARS

from memfs.cards import Card
from memfs.history import Message as Msg

UTC = dt.UTC
WED = dt.datetime(2026, 11, 4, 19, 30, tzinfo=UTC)  # a Wednesday
SESSION = "s-20261104-01"


def window(*lines: str, ts: dt.datetime = WED, first: str = "user") -> list[Msg]:
    roles = ("user", "assistant") if first == "user" else ("assistant", "user")
    return [Msg(SESSION, i, roles[i % 2], text, ts + dt.timedelta(minutes=i)) for i, text in enumerate(lines)]


def card(card_id: str, body: str, type_: str = "fact", **kw: object) -> Card:
    return Card(id=card_id, type=type_, body=body, created=dt.datetime(2026, 10, 1, tzinfo=UTC), **kw)  # type: ignore[arg-type]


def run(*lines: str, cards: tuple[Card, ...] = (), now: dt.datetime | None = None,
        ts: dt.datetime = WED) -> Extraction:
    return extract_offline(window(*lines, ts=ts), cards, "", now or ts + dt.timedelta(hours=2))


def writes(ex: Extraction) -> list[WriteOp]:
    return [op for op in ex.ops if isinstance(op, WriteOp)]


def only_write(ex: Extraction) -> WriteOp:
    found = writes(ex)
    assert len(found) == 1, [op.body for op in found]
    return found[0]


# -- personal facts ----------------------------------------------------------------------------


@pytest.mark.parametrize("line,type_,words", [
    ("hey, my name is Alex btw", "fact", ["Alex"]),
    ("yeah my corgi Biscuit is snoring next to me", "fact", ["corgi", "Biscuit"]),
    ("we adopted a second cat last weekend, her name is Byte", "fact", ["cat", "Byte"]),
    ("I work as a frontend engineer at a small fintech startup", "fact", ["frontend engineer"]),
    ("I'm a nurse so I basically run on coffee", "fact", ["nurse"]),
    ("I live in Lisbon with two flatmates", "fact", ["Lisbon"]),
    ("I'm allergic to peanuts so no peanut butter please", "fact", ["allergic to peanuts"]),
    ("I got diagnosed with asthma last year", "fact", ["asthma"]),
    ("oh and I'm celiac so keep recipes gluten free", "fact", ["celiac"]),
    ("my sister Maya lives in Berlin now", "relationship", ["sister", "Maya"]),
    ("my wife Priya has been amazing", "relationship", ["wife", "Priya"]),
    ("we have two kids, Omar is 7 and Leila is 4", "relationship", ["Omar", "Leila"]),
])
def test_personal_facts_become_standalone_third_person_cards(line: str, type_: str, words: list[str]) -> None:
    op = only_write(run(line))
    assert op.type == type_
    assert op.body.startswith("The user")
    assert all(w in op.body for w in words)
    assert op.entities[0] == "user" and op.turns == (0,) and op.session == SESSION


def test_pet_and_family_names_are_entities() -> None:
    assert "Biscuit" in only_write(run("my corgi Biscuit is snoring")).entities
    assert "Maya" in only_write(run("my sister Maya lives in Berlin")).entities


def test_allergies_and_health_are_high_salience_tastes_are_not() -> None:
    assert only_write(run("I'm allergic to shellfish")).salience >= 0.9
    assert only_write(run("I really like jazz")).salience <= 0.6


@pytest.mark.parametrize("line,words", [
    ("I love horror movies, the older the better", ["loves horror movies"]),
    ("I can't stand jump scares though", ["can't stand jump scares"]),
    ("I really dislike musicals", ["dislikes musicals"]),
    ("my favorite director is John Carpenter", ["favorite director", "John Carpenter"]),
    ("I'm a huge fan of sci-fi novels, especially Ursula Le Guin", ["fan of sci-fi novels", "Le Guin"]),
    ("I'm obsessed with cross-country skiing", ["cross-country skiing"]),
    ("I prefer tea over coffee", ["prefers tea over coffee"]),
])
def test_likes_and_dislikes(line: str, words: list[str]) -> None:
    op = only_write(run(line))
    assert op.type == "preference" and all(w in op.body for w in words)


@pytest.mark.parametrize("line,word", [
    ("can you stop calling me sweetie? it weirds me out", "sweetie"),
    ("please don't bring up my ex, Jordan, ever", "Jordan"),
    ("please never use emojis with me", "emojis"),
])
def test_boundaries(line: str, word: str) -> None:
    op = only_write(run(line))
    assert op.type == "boundary" and word in op.body and op.salience >= 0.85


# -- what must not become a card -----------------------------------------------------------------


@pytest.mark.parametrize("line", [
    "I had pasta for lunch and now I'm just chilling on the couch lol",
    "it's raining here anyway so I'm staying in",
    "I'm going to a jazz show tonight",            # over before the dream matters
    "I'll study at the library tomorrow",          # small self-errand, nothing named
    "if I had a cat I'd name her Noodle",          # hypothetical
    "what's the capital of Australia again?",
    "I love that",                                  # no object
    "the apartment is tiny but I love the light",   # a specific thing, not a taste
    "ugh I'm so tired",
])
def test_trivia_and_hypotheticals_produce_nothing(line: str) -> None:
    assert writes(run(line)) == []


def test_quitting_a_habit_is_not_a_job_change() -> None:
    job = card("c-job001", "The user works as a nurse.")
    ex = run("I quit smoking last year", cards=(job,))
    assert not any(isinstance(o, SupersedeOp) for o in ex.ops)
    assert "smoking" in only_write(ex).body


def test_the_assistants_own_lines_are_not_the_users_facts() -> None:
    ex = extract_offline(window("I love dogs, personally. I'd get a golden retriever named Sunny.",
                                "lol you can't have a dog", first="assistant"), [], "", WED)
    assert writes(ex) == []


def test_an_assistant_promise_with_a_date_is_a_plan() -> None:
    ex = extract_offline(window("yes please", "Okay, I'll ask you about the portfolio on Monday."), [], "", WED)
    op = only_write(ex)
    assert op.type == "plan" and "assistant promised" in op.body and "portfolio" in op.body
    assert op.expires == dt.date(2026, 11, 9) and op.turns == (1,)


def test_a_request_and_the_matching_promise_are_one_plan() -> None:
    ex = run("can you remind me to renew my passport next Friday?",
             "Sure, I'll remind you next Friday to renew your passport.")
    op = only_write(ex)
    assert op.expires == dt.date(2026, 11, 13) and op.turns == (0, 1)


# -- dates -------------------------------------------------------------------------------------


@pytest.mark.parametrize("phrase,start,end", [
    ("tomorrow", "2026-11-05", "2026-11-05"),
    ("the day after tomorrow", "2026-11-06", "2026-11-06"),
    ("on Friday", "2026-11-06", "2026-11-06"),
    ("on Wednesday", "2026-11-11", "2026-11-11"),           # today's weekday means next week's
    ("next Friday", "2026-11-13", "2026-11-13"),
    ("next week", "2026-11-09", "2026-11-15"),
    ("this weekend", "2026-11-07", "2026-11-08"),
    ("March 12", "2027-03-12", "2027-03-12"),               # already past this year
    ("November 20", "2026-11-20", "2026-11-20"),
    ("12th of December", "2026-12-12", "2026-12-12"),
    ("on the 14th", "2026-11-14", "2026-11-14"),
    ("on the 2nd", "2026-12-02", "2026-12-02"),              # already past this month
    ("Saturday the 14th", "2026-11-14", "2026-11-14"),
    ("in two weeks", "2026-11-18", "2026-11-18"),
    ("in 3 days", "2026-11-07", "2026-11-07"),
    ("next month", "2026-12-01", "2026-12-31"),
    ("in January", "2027-01-01", "2027-01-31"),
    ("2026-12-24", "2026-12-24", "2026-12-24"),
])
def test_relative_dates_resolve_against_the_message_timestamp(phrase: str, start: str, end: str) -> None:
    hit = find_date(f"we are meeting {phrase} for sure", WED.date())
    assert hit is not None and not hit.past
    assert (hit.start.isoformat(), hit.end.isoformat()) == (start, end)


@pytest.mark.parametrize("phrase", ["yesterday", "last night", "last Friday", "last week"])
def test_past_dates_are_flagged(phrase: str) -> None:
    hit = find_date(f"it happened {phrase}", WED.date())
    assert hit is not None and hit.past


def test_a_dated_plan_gets_absolute_dates_from_its_message_not_from_now() -> None:
    ex = run("ugh I have a dentist appointment tomorrow at 9", now=dt.datetime(2026, 11, 20, tzinfo=UTC))
    op = only_write(ex)
    assert op.type == "plan" and op.valid_from == dt.date(2026, 11, 4) and op.expires == dt.date(2026, 11, 5)
    assert "2026-11-05" in op.body  # the card makes sense weeks later


def test_plan_with_a_person_and_a_range() -> None:
    op = next(w for w in writes(run("my sister Maya is visiting next week!!")) if w.type == "plan")
    assert op.expires == dt.date(2026, 11, 15) and "Maya" in op.entities


# -- updates that supersede ---------------------------------------------------------------------


def test_a_moved_meeting_supersedes_the_old_plan() -> None:
    old = card("c-meet01", "The user has a meeting with Lin on Thursday 2026-11-12.", "plan",
               entities=("user", "Lin"), expires=dt.date(2026, 11, 12))
    ex = run("oh and the meeting with Lin got moved to Friday", cards=(old,))
    (op,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert op.old_id == "c-meet01" and op.type == "plan" and op.expires == dt.date(2026, 11, 6)
    assert writes(ex) == []


@pytest.mark.parametrize("old_body,line,new_words", [
    ("The user works as a barista at the Bean There café.", "I start as a junior accountant at Harlow & Finch on December 1", ["accountant"]),
    ("The user works as a high school teacher.", "I handed in my notice today", ["notice", "teacher"]),
    ("The user lives in Portland.", "I moved to Denver last week", ["Denver"]),
    ("The user's partner is Sam.", "Sam and I broke up on Saturday", ["Sam", "broke up"]),
    ("The user is dating Chris.", "CHRIS PROPOSED", ["engaged", "Chris"]),
    ("The user's birthday is March 12.", "actually my birthday is March 21, not March 12", ["March 21"]),
    ("The user likes pineapple on pizza.", "I hate pineapple on pizza now", ["hates pineapple"]),
])
def test_updates_supersede_the_card_holding_the_old_value(old_body: str, line: str, new_words: list[str]) -> None:
    ex = run(line, cards=(card("c-old001", old_body),))
    sup = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert [o.old_id for o in sup] == ["c-old001"], [o.to_json() for o in ex.ops]
    assert all(w in sup[0].body for w in new_words)


def test_a_move_is_matched_to_the_existing_plan_even_without_a_plan_word() -> None:
    old = card("c-car001", "The user's car is booked in for a service on Monday 2026-11-09.", "plan",
               expires=dt.date(2026, 11, 9))
    ex = run("the car service got moved to next Thursday, the garage is short-staffed", cards=(old,))
    (op,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert op.old_id == "c-car001" and op.expires == dt.date(2026, 11, 12)


def test_disliking_a_nickname_is_not_a_name() -> None:
    assert not any("name is" in w.body for w in writes(run("I hate when people call me Liz, it's Elizabeth")))


def test_restating_a_known_fact_writes_nothing() -> None:
    cards = (card("c-pea001", "The user is allergic to peanuts."), card("c-hor001", "The user loves horror movies.", "preference"))
    ex = run("I'm allergic to peanuts remember", "Yes!", "I love horror movies, the older the better", cards=cards)
    assert ex.ops == []


def test_two_existing_cards_saying_the_same_thing_are_merged() -> None:
    cards = (card("c-sh0001", "The user is allergic to shellfish.", salience=0.9),
             card("c-sh0002", "The user has a shellfish allergy.", salience=0.8),
             card("c-jazz01", "The user likes jazz.", "preference"))
    ex = run("hello", cards=cards)
    (merge,) = [o for o in ex.ops if isinstance(o, MergeOp)]
    assert set(merge.ids) == {"c-sh0001", "c-sh0002"} and merge.salience == 0.9


def test_a_new_job_after_quitting_keeps_the_quit_as_an_event() -> None:
    old = card("c-job001", "The user works as a barista.")
    ex = run("I quit my job at the café today", "Whoa!", "I start as an accountant at Harlow & Finch on December 1",
             cards=(old,))
    assert [o.old_id for o in ex.ops if isinstance(o, SupersedeOp)] == ["c-job001"]
    assert any(w.type == "event" and "quit" in w.body for w in writes(ex))


# -- plans that end -----------------------------------------------------------------------------


def test_past_plans_expire_and_future_ones_do_not() -> None:
    past = card("c-p00001", "The user has a job interview on 2026-11-03.", "plan", expires=dt.date(2026, 11, 3))
    future = card("c-p00002", "The user flies to Tokyo on 2026-11-19.", "plan", expires=dt.date(2026, 11, 19))
    stale = card("c-p00003", "The user had a call on 2026-10-01.", "plan", expires=dt.date(2026, 10, 1), status="stale")
    ex = run("hi", cards=(past, future, stale))
    assert [o for o in ex.ops if isinstance(o, ExpireOp)] == [ExpireOp(id="c-p00001")]


@pytest.mark.parametrize("line,reason", [
    ("so the Lisbon trip is cancelled", "cancelled"),
    ("I did call grandma yesterday at least", "done"),
    ("sadly I'm out of the half marathon", "cancelled"),
])
def test_done_or_cancelled_plans_are_closed(line: str, reason: str) -> None:
    cards = (card("c-lis001", "The user and Sam plan a weekend trip to Lisbon on 2026-11-21.", "plan",
                  entities=("user", "Sam", "Lisbon"), expires=dt.date(2026, 11, 22)),
             card("c-gra001", "The user promised to call their grandmother on Sunday 2026-11-15.", "plan",
                  expires=dt.date(2026, 11, 15)),
             card("c-mar001", "The user is running the city half marathon on 2026-11-22.", "plan",
                  expires=dt.date(2026, 11, 22)))
    ex = run(line, cards=cards, ts=dt.datetime(2026, 11, 10, 12, tzinfo=UTC))
    closes = [o for o in ex.ops if isinstance(o, CloseOp)]
    assert len(closes) == 1 and closes[0].reason.startswith(reason)


# -- emotion and summary ------------------------------------------------------------------------


def test_strong_feelings_raise_the_salience_of_what_they_are_about() -> None:
    calm = only_write(run("I got diagnosed with type 2 diabetes this morning"))
    ex = run("I got diagnosed with type 2 diabetes this morning", "Oh no.", "scared, honestly. I cried all day")
    assert only_write(ex).salience > 0.85 >= calm.salience - 0.05


def test_a_strong_feeling_alone_is_an_event_with_its_context() -> None:
    ex = run("my boss yelled at me in front of everyone today", "That's awful.",
             "I was so embarrassed I went and cried in the bathroom")
    op = only_write(ex)
    assert op.type == "event" and "boss" in op.body and op.salience >= 0.9


def test_summary_is_bounded_and_never_drops_open_plans() -> None:
    plan = card("c-trip01", "The user flies to Tokyo on 2026-11-19.", "plan", expires=dt.date(2026, 11, 19))
    previous = "\n".join(f"- 2026-10-{d:02d}: the user talked about thing number {d} at some length." for d in range(1, 31))
    ex = extract_offline(window("I have my final exam on December 9"), [plan], previous, WED)
    assert len(ex.summary) <= SUMMARY_MAX_CHARS
    assert "Tokyo" in ex.summary and "final exam" in ex.summary and "Open plans:" in ex.summary
    assert "thing number 30" in ex.summary and "thing number 1 " not in ex.summary
    again = extract_offline(window("ok"), [plan], ex.summary, WED)
    assert again.summary.count("Open plans:") == 1 and again.summary.count("Tokyo") == 1


# -- phrasings the blind splits missed (general rules, not sentences) ----------------------------


@pytest.mark.parametrize("lines,type_,words", [
    (("chaotic. my little brother Sami got engaged on Christmas Eve",), "relationship", ["little brother", "Sami"]),
    (("my older sister Dana is visiting",), "relationship", ["older sister", "Dana"]),
    (("my flatmate Jonas is devastated lol",), "relationship", ["flatmate", "Jonas"]),
    (("my sister dropped her boys off today", "Oh fun!", "Arjun is 7 and Dev just turned 4"),
     "relationship", ["Arjun (7)", "Dev (4)", "sister's boys"]),
    (("that Ethiopian place we love, Lalibela",), "preference", ["Lalibela", "Ethiopian place"]),
    (("me and karaoke are not friends",), "preference", ["dislikes karaoke"]),
    (("honestly baking is the only thing that switches my brain off",), "preference", ["loves baking"]),
    (("mushrooms are evil by the way",), "preference", ["dislikes mushrooms"]),
    (("I think I'm done with horror movies",), "preference", ["dislikes horror movies"]),
    (("ha, I'm not a coffee person, tea all the way",), "preference", ["not a coffee person", "tea"]),
    (("I get seasick on anything bigger than a bathtub",), "fact", ["gets seasick"]),
    (("nope, I cycle to work anyway",), "fact", ["cycles to work"]),
    (("new year's resolution is to run a 10k by spring",), "fact", ["goal", "10k"]),
    (("I hate when people call me Liz, it's Elizabeth",), "boundary", ["'Liz'", "Elizabeth"]),
    (("I'd appreciate it if you didn't call me hun. it's a bit much",), "boundary", ["'hun'"]),
    (("please stop suggesting running podcasts btw",), "boundary", ["suggest running podcasts"]),
    (("please don't ask me about getting another dog",), "boundary", ["asked about getting another dog"]),
])
def test_sideways_phrasings_still_become_one_card(lines: tuple[str, ...], type_: str, words: list[str]) -> None:
    op = only_write(run(*lines))
    assert op.type == type_, op.body
    assert all(w in op.body for w in words), op.body


def test_a_boundary_topic_stops_where_the_next_clause_starts() -> None:
    op = only_write(run("please don't ask me about the bakery idea, Noor keeps pushing it and I'm not ready"))
    assert op.body == "The user does not want to be asked about the bakery idea."


def test_being_asked_to_be_best_man_names_who_asked() -> None:
    ex = run("my little brother Sami got engaged", "Congrats to him!", "he asked me to be best man")
    role = next(w for w in writes(ex) if "best man" in w.body)
    assert role.type == "fact" and "Sami" in role.entities


def test_dropping_a_subject_for_another_supersedes_the_card_about_it() -> None:
    old = card("c-spa001", "The user is learning Spanish.")
    ex = run("also I dropped Spanish, switched to Portuguese since the wedding is there", cards=(old,))
    (sup,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert sup.old_id == "c-spa001" and "Portuguese" in sup.body and writes(ex) == []


def test_a_promotion_with_a_new_role_supersedes_the_job() -> None:
    old = card("c-job001", "The user works as a data analyst at Corvel.")
    ex = run("big work news: I got promoted! team lead on the payments squad, starting on the 8th", cards=(old,))
    (sup,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert sup.old_id == "c-job001" and "team lead" in sup.body and sup.valid_from == dt.date(2026, 11, 8)
    assert writes(ex) == []  # no separate "got promoted" event


def test_starting_at_a_place_is_a_job_when_the_talk_is_about_a_job() -> None:
    old = card("c-job001", "The user works as a barista at Kettle & Co.")
    ex = run("the new job mostly, I start at the university library in March", cards=(old,))
    (sup,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert "university library" in sup.body
    assert writes(run("I start at the gym tomorrow, wish me luck")) == []


@pytest.mark.parametrize("line", [
    "Rainy Sunday, he refused to walk, and I just knew something was off",
    "Saturday was a disaster, the oven died halfway through the cake",
    "we walked to the lake on Friday and Sam fell in",
    "I won't. I promise",
    "work is the worst today",
    "my boss is evil",
    "I'm cancelling nothing",
])
def test_past_events_and_asides_make_no_card(line: str) -> None:
    assert writes(run(line)) == [], [w.body for w in writes(run(line))]


@pytest.mark.parametrize("text,day,past", [
    ("Waffles died on Monday", "2026-11-02", True),
    ("he refused to walk on Sunday", "2026-11-01", True),
    ("I booked the dentist for Friday", "2026-11-06", False),
    ("the meeting got moved to Friday", "2026-11-06", False),
    ("I'm seeing Lin on Friday", "2026-11-06", False),
    ("puppy class starts a week from Tuesday", "2026-11-17", False),
])
def test_a_bare_weekday_points_back_when_the_sentence_is_past(text: str, day: str, past: bool) -> None:
    hit = find_date(text, WED.date())
    assert hit is not None and (hit.start.isoformat(), hit.past) == (day, past)


def test_a_pets_death_on_a_past_weekday_is_dated_that_day() -> None:
    pet = card("c-pet001", "The user has a beagle named Waffles.", entities=("user", "Waffles"))
    (sup,) = [o for o in run("not great. Waffles died on Monday. he was 14", cards=(pet,)).ops
              if isinstance(o, SupersedeOp)]
    assert sup.valid_from == dt.date(2026, 11, 2) and "2026-11-02" in sup.body


def test_seeing_someone_on_a_day_is_one_plan_not_a_partner() -> None:
    partner = card("c-par001", "The user's partner is Noor.", "relationship", entities=("user", "Noor"))
    for line in ("I'm seeing Lin on Friday for dinner", "I'm seeing Noor's parents on Friday for dinner, wish me luck"):
        ex = run(line, cards=(partner,))
        op = only_write(ex)
        assert op.type == "plan" and op.expires == dt.date(2026, 11, 6) and "luck" not in op.body
        assert not any(isinstance(o, SupersedeOp) for o in ex.ops)


def test_there_is_resolved_to_the_place_or_dropped() -> None:
    op = next(w for w in writes(run("my cousin Rafa lives in Lisbon, so we're having dinner there on the 16th"))
              if w.type == "plan")
    assert "there (Lisbon)" in op.body and "the user and Rafa" in op.body and "Lisbon" in op.entities
    lone = only_write(run("I'm meeting Sam there on Friday"))
    assert " there" not in lone.body and lone.expires == dt.date(2026, 11, 6)


def test_we_is_not_the_person_we_do_something_for() -> None:
    partner = card("c-par001", "The user's partner is Noor.", "relationship", entities=("user", "Noor"))
    op = next(w for w in writes(run("my brother Idris turns 30 on the 12th, we're throwing him a surprise party",
                                    cards=(partner,))) if w.type == "plan")
    assert "the user and Noor" in op.body


def test_a_plan_carries_the_place_its_message_named_elsewhere() -> None:
    op = only_write(run("Edinburgh!! the movers come on the 3rd"))
    assert op.type == "plan" and "Edinburgh" in op.entities and op.expires == dt.date(2026, 12, 3)


def test_someone_elses_feeling_is_not_the_users_event() -> None:
    ex = run("assistant librarian technically", "Well deserved.", "my flatmate Jonas is devastated lol, he says he'll starve")
    assert [w.type for w in writes(ex)] == ["relationship"]


def test_a_known_pet_falling_ill_is_an_event() -> None:
    pet = card("c-pet001", "The user has a cat named Olive.", entities=("user", "Olive"))
    op = only_write(run("true. Olive has been sick all week, the vet thinks it's her kidneys", cards=(pet,)))
    assert op.type == "event" and "kidneys" in op.body and "Olive" in op.entities
    assert writes(run("Olive has been sick all week")) == []  # unknown name: could be anyone


def test_cards_that_call_the_user_by_name_are_still_recognised() -> None:
    cards = (card("c-job001", "Alex works as a graphic designer at Brightside Studio."),
             card("c-tea001", "Alex drinks Earl Grey tea with no sugar.", "preference"),
             card("c-sis001", "Maya is Alex's sister.", "relationship", entities=("user", "Maya")))
    ex = run("Excited and terrified. I'm leaving Brightside. I start at Northwind on the 11th of January.",
             cards=cards)
    (sup,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert sup.old_id == "c-job001" and "Northwind" in sup.body and sup.valid_from == dt.date(2027, 1, 11)
    assert "Previously" not in sup.body  # reads as a fact on its own; the old card is linked by supersedes


def test_the_nth_of_a_named_month_is_that_month() -> None:
    hit = find_date("I start on the 11th of January", WED.date())
    assert hit is not None and hit.start == dt.date(2027, 1, 11)


# -- the blind5 families: workplaces, residence, "X is my favourite Y", moves, reschedules ---------


@pytest.mark.parametrize("line,words", [
    ("I work at a pharmacy, mostly the morning shift", ["works at a pharmacy"]),
    ("I'm a cook at the pub on Station Road", ["cook", "pub on Station Road"]),
    ("these days I'm a receptionist at the leisure centre", ["receptionist", "leisure centre"]),
    ("I work in a warehouse so my back hates me", ["warehouse"]),
])
def test_a_job_at_a_place_named_by_what_it_is(line: str, words: list[str]) -> None:
    op = only_write(run(line))
    assert op.type == "fact" and all(w in op.body for w in words), op.body


def test_a_new_role_supersedes_the_job_at_a_place() -> None:
    old = card("c-job001", "The user works at a pharmacy.")
    ex = run("news: I'm a paramedic now, first shift went fine", cards=(old,))
    (sup,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert sup.old_id == "c-job001" and "paramedic" in sup.body


@pytest.mark.parametrize("line,words", [
    ("ten years living in Dundee and the wind still gets me", ["lives in Dundee"]),
    ("I've been living in Galway since uni", ["lives in Galway"]),
    ("we live just outside Bath, in a village", ["lives just outside Bath"]),
    ("we moved into a house in Cork in the summer", ["lives in Cork"]),
])
def test_where_the_user_lives_said_sideways(line: str, words: list[str]) -> None:
    op = only_write(run(line))
    assert op.type == "fact" and all(w in op.body for w in words), op.body


def test_we_moved_supersedes_the_home_card() -> None:
    old = card("c-home01", "The user lives just outside Bath.")
    ex = run("we've officially moved to Swansea, the van came yesterday", cards=(old,))
    (sup,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert sup.old_id == "c-home01" and "Swansea" in sup.body and writes(ex) == []


@pytest.mark.parametrize("line,words", [
    ("The Last of Us is my favourite game ever, I've played it four times", ["favorite game", "The Last of Us"]),
    ("honestly, ramen is my all-time favourite food", ["favorite food", "ramen"]),
    ("we went to the coast and Whitby is my favourite town", ["favorite town", "Whitby"]),
])
def test_x_is_my_favourite_y(line: str, words: list[str]) -> None:
    op = only_write(run(line))
    assert op.type == "preference" and all(w in op.body for w in words), op.body


@pytest.mark.parametrize("line,words", [
    ("please don't ever recommend self-help books to me, I find them patronising", ["self-help books"]),
    ("don't ever mention my dad, even in passing", ["their dad brought up"]),
    ("never ever bring up the divorce again, I saw my lawyer today", ["the divorce brought up"]),
])
def test_boundaries_said_with_ever(line: str, words: list[str]) -> None:
    op = only_write(run(line))
    assert op.type == "boundary" and all(w in op.body for w in words), op.body
    assert "saw" not in op.body and "even" not in op.body


@pytest.mark.parametrize("line", [
    "I'm a regular at the pub on Fridays",
    "I'm a bit lost at the library, it's huge",
    "I work at the weekend sometimes",
    "this is my favourite bit of the day",
    "you are my favourite person",
    "my sister lives in Leeds",
    "I lived in Paris for a year once",
])
def test_near_misses_of_the_new_rules_make_no_card(line: str) -> None:
    assert writes(run(line)) == []


def test_a_reschedule_in_the_same_window_replaces_the_plan_it_moves() -> None:
    ex = run("the physio appointment is on Thursday 12 November, ugh",
             "Hang in there.",
             "The physio rang, my appointment got moved to Monday 16 November. Great.")
    (plan,) = [o for o in writes(ex) if o.type == "plan"]
    assert plan.expires == dt.date(2026, 11, 16) and "moved from Thursday 2026-11-12" in plan.body
    assert "context" not in plan.body and plan.entities == ("user",)
    assert plan.turns == (0, 2)


def test_a_moved_plan_says_the_old_day_and_keeps_what_the_sentence_lost() -> None:
    old = card("c-din001", "The user is having dinner with Ana at Bocca on Friday 2026-11-06.", "plan",
               entities=("user", "Ana", "Bocca"), expires=dt.date(2026, 11, 6))
    ex = run("dinner got pushed to the 10th, she's stuck at work", cards=(old,))
    (sup,) = [o for o in ex.ops if isinstance(o, SupersedeOp)]
    assert sup.old_id == "c-din001" and sup.expires == dt.date(2026, 11, 10)
    assert "moved from Friday 2026-11-06" in sup.body and "Originally:" in sup.body and "Bocca" in sup.entities


def test_a_reschedule_is_matched_by_what_the_plan_is_about_not_by_the_word_moved() -> None:
    moved_once = card("c-vet0001", "The vet check-up got moved to Monday 2026-11-09 (moved from Friday 2026-11-06).",
                      "plan", expires=dt.date(2026, 11, 9))
    haircut = card("c-hair001", "The user has a haircut on Saturday 2026-11-07.", "plan", expires=dt.date(2026, 11, 7))
    ex = run("my haircut got moved to Sunday", cards=(moved_once, haircut))
    assert [o.old_id for o in ex.ops if isinstance(o, SupersedeOp)] == ["c-hair001"]


def test_the_summary_stops_repeating_what_a_supersede_replaced() -> None:
    old = card("c-home01", "The user lives in Leeds.")
    previous = "- 2026-10-01: The user lives in Leeds.\n- 2026-10-01: The user has a dog named Biscuit."
    ex = extract_offline(window("we moved to York last week"), [old], previous, WED)
    assert "Leeds" not in ex.summary and "Biscuit" in ex.summary and "York" in ex.summary


def test_over_the_limit_small_talk_notes_go_before_older_facts() -> None:
    facts = "- 2026-09-01: The user is allergic to peanuts."
    chatter = "\n".join(f"- 2026-10-{d:02d}: small talk (\"the weather on day {d} was grey and a bit damp\")"
                        for d in range(1, 25))
    ex = extract_offline(window("ok"), [], facts + "\n" + chatter, WED)
    assert len(ex.summary) <= SUMMARY_MAX_CHARS and "peanuts" in ex.summary


# -- cards that make sense alone: reminders that say what, no speculation, family health ----------


def plans(ex: Extraction) -> list[WriteOp]:
    return [op for op in writes(ex) if op.type == "plan"]


def test_a_reminder_with_its_object_says_what() -> None:
    (plan,) = plans(run("can you remind me to call the vet tomorrow? Biscuit's stitches need checking"))
    assert "call the vet" in plan.body and plan.expires == dt.date(2026, 11, 5)


@pytest.mark.parametrize("lines,what", [
    (("I need to book the table at Rosa's for Gran's party.", "Nice!", "the upstairs room. remind me by Friday"),
     "book the table"),
    (("the washing machine is leaking all over the floor again", "Oh no.", "remind me to sort that out on Saturday"),
     "washing machine"),
    (("I have to renew the car insurance. can you remind me on Friday?",), "car insurance"),
])
def test_a_reminder_whose_object_is_elsewhere_finds_it_in_the_same_or_previous_message(
        lines: tuple[str, ...], what: str) -> None:
    (plan,) = plans(run(*lines))
    assert what in plan.body and "reminded to by" not in plan.body and "to that" not in plan.body


def test_a_reminder_that_never_says_what_is_not_written() -> None:
    assert plans(run("long day. so tired. the bus was late", "Rest up.", "remind me to do it on Friday")) == []


def test_the_assistants_bare_promise_after_a_reminder_is_not_a_second_card() -> None:
    ex = run("I have to pay the gas bill", "Ugh.", "can you remind me on Thursday?", "Sure, I'll remind you on Thursday.")
    (plan,) = plans(ex)
    assert "gas bill" in plan.body and "promised" not in plan.body


@pytest.mark.parametrize("line", [
    "maybe we could go to the coast on Sunday if the weather holds",
    "I might try the climbing wall on Saturday",
    "we're thinking about Rome for our anniversary in April",
    "perhaps Jo and I could see a film on Friday, not sure if she's free",
    "Maybe Priya and I can go together on the Sunday after she arrives.",
])
def test_speculation_is_not_a_plan(line: str) -> None:
    assert plans(run(line)) == []


def test_a_hedge_after_the_dated_clause_leaves_the_plan() -> None:
    (plan,) = plans(run("the exam is tomorrow, maybe I'll fail lol"))
    assert "exam" in plan.body and plan.expires == dt.date(2026, 11, 5)


@pytest.mark.parametrize("lines,words", [
    (("my nan had a fall last night and broke her wrist",), ["nan", "wrist"]),
    (("my brother's in hospital with appendicitis, they're operating tonight",), ["brother is in hospital", "appendicitis"]),
    (("Mum called. Grandad had a fall on Monday and he's in hospital. They think he broke his hip.",),
     ["grandad", "fall", "Monday 2026-11-02", "hip"]),
    (("my uncle Ray was rushed to hospital with a heart attack yesterday",), ["uncle Ray", "heart attack"]),
])
def test_a_relatives_health_news_is_a_salient_event_naming_them(lines: tuple[str, ...], words: list[str]) -> None:
    ex = run(*lines)
    (event,) = [op for op in writes(ex) if op.type == "event"]
    assert all(w in event.body for w in words), event.body
    assert event.body.startswith("The user's ") and event.salience >= 0.8
    assert not [op for op in writes(ex) if op.type == "relationship"]  # the event already says who Ray is


def test_fear_a_few_messages_after_health_news_raises_it_instead_of_a_card_of_its_own() -> None:
    ex = run("my grandma had a stroke this morning", "I'm so sorry.", "she's 91.", "That's hard.",
             "she sounded so tired on the phone", "I'm here.", "I am scared.")
    (event,) = writes(ex)
    assert "stroke" in event.body and event.salience >= 0.9


def test_an_emotional_moment_alone_is_told_with_its_own_message() -> None:
    (event,) = writes(run("I snapped at my son over a spilled drink. He cried. I've been feeling awful all day."))
    assert "snapped" in event.body and "feeling awful" in event.body


def test_a_plan_says_who_a_known_name_is() -> None:
    sister = card("c-sis001", "The user's sister is Maya.", "relationship", entities=("user", "Maya"))
    (plan,) = plans(run("Maya's visiting on Saturday!", cards=(sister,)))
    assert "Maya (the user's sister) is visiting" in plan.body
