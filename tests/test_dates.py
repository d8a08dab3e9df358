"""Relative and calendar dates in messages become absolute dates (from the message's own day)."""

from __future__ import annotations

import datetime as dt

import pytest
from memfs.agent.dream.dates import ROUTINE, day_label, find_date

TODAY = dt.date(2026, 10, 1)  # a Thursday


@pytest.mark.parametrize(("text", "expected"), [
    ("my dentist is on Thursday 15 October", dt.date(2026, 10, 15)),
    ("it moved to Friday 16 October", dt.date(2026, 10, 16)),
    ("Friday, October 16 works", dt.date(2026, 10, 16)),
    ("see you next Friday", dt.date(2026, 10, 9)),
    ("on March 12", dt.date(2027, 3, 12)),
    ("Waffles died on Monday", dt.date(2026, 9, 28)),
])
def test_weekday_followed_by_a_calendar_date_takes_the_calendar_date(text: str, expected: dt.date) -> None:
    hit = find_date(text, TODAY)
    assert hit is not None and hit.start == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I've read the same page of Tomorrow, and Tomorrow, and Tomorrow all evening", None),
    ("we watched Today Tonight reruns", None),
    ("Tomorrow I'm seeing the dentist", dt.date(2026, 10, 2)),
    ("dentist. Tomorrow at 9", dt.date(2026, 10, 2)),
    ("see you tomorrow", dt.date(2026, 10, 2)),
    ("SEE YOU TOMORROW", dt.date(2026, 10, 2)),
])
def test_a_capitalised_relative_word_mid_sentence_is_a_title_not_a_date(text: str, expected: dt.date | None) -> None:
    hit = find_date(text, TODAY)
    assert (hit.start if hit else None) == expected


def test_day_label_names_the_weekday() -> None:
    assert day_label(dt.date(2026, 10, 15)) == "Thursday 2026-10-15"


@pytest.mark.parametrize(("text", "expected", "past"), [
    ("I have to pay the council tax bill, it came on Saturday", dt.date(2026, 9, 26), True),
    ("the parcel arrived and it came on Monday", dt.date(2026, 9, 28), True),
    ("it came yesterday, I have to send it back by Monday", dt.date(2026, 9, 30), True),
    ("I need to send it back, the courier comes on Monday", dt.date(2026, 10, 5), False),
])
def test_a_date_in_a_past_clause_is_past_even_if_another_clause_looks_ahead(
        text: str, expected: dt.date, past: bool) -> None:
    hit = find_date(text, TODAY)
    assert hit is not None and hit.start == expected and hit.past is past


@pytest.mark.parametrize(("text", "today", "expected", "past"), [
    # "friday week": the coming Friday plus a week, not this Friday
    ("my last shift is friday week, thank god", dt.date(2031, 3, 4), dt.date(2031, 3, 14), False),
    ("see you a week on tuesday", dt.date(2031, 3, 4), dt.date(2031, 3, 18), False),
    # a shortened weekday with a day number: the next such day, and "sat" is not the verb "sat"
    ("the party is sat the 22nd, bring crisps", dt.date(2031, 3, 4), dt.date(2031, 3, 22), False),
    ("quiz night is thurs the 3rd", dt.date(2031, 3, 4), dt.date(2031, 4, 3), False),
    # a month told in the past is the one behind, not the next one
    ("me and jo split up in february", dt.date(2031, 3, 4), dt.date(2031, 2, 1), True),
    ("we broke up in november", dt.date(2031, 3, 4), dt.date(2030, 11, 1), True),
])
def test_chat_dates_resolve_the_way_people_mean_them(text: str, today: dt.date, expected: dt.date, past: bool) -> None:
    hit = find_date(text, today)
    assert hit is not None and hit.start == expected and hit.past is past, hit


@pytest.mark.parametrize("text", [
    "been teaching at the academy 4 yrs in september",
    "ten years this september since I moved over from cork",
    "married 12 years in may, can you believe it",
])
def test_a_month_that_closes_a_past_duration_is_an_anniversary_not_a_day_ahead(text: str) -> None:
    hit = find_date(text, dt.date(2031, 3, 4))
    assert hit is not None and hit.past, hit


def test_a_clause_opening_on_a_past_verb_with_no_subject_is_past() -> None:
    hit = find_date("joined the choir in january, loving it", dt.date(2031, 3, 4))
    assert hit is not None and hit.past and hit.start == dt.date(2031, 1, 1), hit
    ahead = find_date("excited to start in january", dt.date(2030, 11, 4))
    assert ahead is not None and not ahead.past


@pytest.mark.parametrize(("text", "expected"), [
    ("the optician moved me from the 9th to the 16th", dt.date(2031, 3, 16)),
    ("I'm off work from monday to thursday", dt.date(2031, 3, 6)),
])
def test_from_one_day_to_another_ends_on_the_second(text: str, expected: dt.date) -> None:
    hit = find_date(text, dt.date(2031, 3, 4))
    assert hit is not None and hit.end == expected, hit


@pytest.mark.parametrize(("text", "routine"), [
    ("saturday mornings I referee the under 10s", True),
    ("on wednesdays we do the pub quiz", True),
    ("choir meets weekly in the church hall", True),
    ("I'm seeing the optician on wednesday", False),
])
def test_a_habit_told_with_a_plural_day_is_a_routine(text: str, routine: bool) -> None:
    assert bool(ROUTINE.search(text)) is routine
