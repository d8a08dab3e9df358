"""Relative and calendar dates in messages become absolute dates (from the message's own day)."""

from __future__ import annotations

import datetime as dt

import pytest

from agent.dream.dates import find_date

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
