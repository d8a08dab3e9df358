"""Time expressions in a query, turned into a span of message timestamps or an order.

"What did I say about the restaurant last month?" is about last month's messages, not
about the similar one from a year ago; "the first time I went climbing" wants the earliest
of several similar records. Every message carries its timestamp, so search can use such
phrases as a boost (``memfs.ranker``): a span (``start``..``end``) and/or an order
(``earliest`` / ``latest``). Only phrases that point into the past count ("last week",
"3 days ago", "in May" in a question about what happened): "dinner tonight" is not a
filter on memory. Dates are read in UTC, relative to the search's ``now``.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name}
WEEKDAYS = {name.lower(): n for n, name in enumerate(calendar.day_name)}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3,
           "couple of": 2, "few": 3, "several": 4}
UNIT_DAYS = {"day": 1.0, "week": 7.0, "month": 30.4, "year": 365.25}
SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11)}

_NUM = r"(?P<n>\d+|" + "|".join(sorted(map(re.escape, NUMBERS), key=len, reverse=True)) + r")"
_AGO = re.compile(_NUM + r"\s+(?P<unit>day|week|month|year)s?\s+ago\b", re.I)
_LAST = re.compile(r"\b(?:last|past|previous|the past)\s+(?P<unit>night|week(?:end)?|month|year|"
                   r"spring|summer|autumn|fall|winter|"
                   + "|".join(WEEKDAYS) + r")\b", re.I)
_THIS = re.compile(r"\b(?:earlier\s+)?this\s+(?P<unit>morning|week|month|year)\b", re.I)
_YESTERDAY = re.compile(r"\byesterday\b", re.I)
_MONTH = re.compile(r"\b(?:in|during|on|since|early|late|mid)(?:-|\s+)(?:early\s+|late\s+|mid-?)?"
                    r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b"
                    r"(?:\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?)?(?:,?\s+(?P<year>\d{4}))?", re.I)
_FIRST = re.compile(r"\b(?:the\s+)?first\s+(?:time|ever)\b|\bfirst\s+\w+\s+(?:i|we)\b|"
                    r"\b(?:earliest|originally|initially|to begin with)\b", re.I)
_LATEST = re.compile(r"\b(?:the\s+)?(?:last|latest|most recent)\s+time\b|\bmost recently\b|"
                     r"\b(?:did|do|have)\s+(?:i|we)\s+last\b", re.I)
_PAST_CUE = re.compile(r"\b(?:did|was|were|had|went|said|told|got|came|saw|ago|last|"
                       r"\w{3,}ed)\b", re.I)
"""A question about what happened: "in May" there is a span of memory, not a plan."""


@dataclass(frozen=True)
class TimeHint:
    """What a query's time expression asks of message timestamps (epoch seconds)."""

    start: float | None = None
    end: float | None = None
    order: str | None = None
    """``earliest`` ("the first time I…") or ``latest`` ("the last time I…")."""
    label: str = ""

    @property
    def span(self) -> bool:
        return self.start is not None and self.end is not None


def parse_time(text: str, now: dt.datetime) -> TimeHint | None:
    """The time expression of ``text`` relative to ``now``, or None when there is none."""
    now = now.astimezone(dt.timezone.utc)
    order, order_label = _order(text)
    span = _span(text, now)
    if span is None and order is None:
        return None
    start, end, label = span if span is not None else (None, None, "")
    return TimeHint(start, end, order, " + ".join(x for x in (label, order_label) if x))


def _order(text: str) -> tuple[str | None, str]:
    if m := _LATEST.search(text):
        return "latest", m.group(0).lower()
    if m := _FIRST.search(text):
        return "earliest", m.group(0).lower()
    return None, ""


def _span(text: str, now: dt.datetime) -> tuple[float, float, str] | None:
    today = dt.datetime.combine(now.date(), dt.time(), dt.timezone.utc)
    if m := _AGO.search(text):
        n = m.group("n").lower()
        count = int(n) if n.isdigit() else NUMBERS[n]
        unit = UNIT_DAYS[m.group("unit").lower()]
        centre = now - dt.timedelta(days=count * unit)
        half = dt.timedelta(days=max(1.0, 0.5 * unit * max(1.0, count ** 0.5)))
        return _secs(centre - half, centre + half, m.group(0))
    if m := _YESTERDAY.search(text):
        return _secs(today - dt.timedelta(days=1), today, m.group(0))
    if m := _LAST.search(text):
        return _last(m.group("unit").lower(), now, today, m.group(0))
    if not _PAST_CUE.search(text):
        return None
    if m := _THIS.search(text):
        return _this(m.group("unit").lower(), now, today, m.group(0))
    if m := _MONTH.search(text):
        return _month(m, now)
    return None


def _last(unit: str, now: dt.datetime, today: dt.datetime,
          label: str) -> tuple[float, float, str]:
    week_start = today - dt.timedelta(days=today.weekday())
    if unit == "night":
        return _secs(today - dt.timedelta(hours=6), today + dt.timedelta(hours=6), label)
    if unit == "week":
        return _secs(week_start - dt.timedelta(days=7), week_start, label)
    if unit == "weekend":
        saturday = week_start - dt.timedelta(days=2)
        return _secs(saturday, saturday + dt.timedelta(days=2), label)
    if unit == "month":
        first = today.replace(day=1)
        return _secs((first - dt.timedelta(days=1)).replace(day=1), first, label)
    if unit == "year":
        return _secs(today.replace(year=today.year - 1, month=1, day=1),
                     today.replace(month=1, day=1), label)
    if unit in WEEKDAYS:
        back = (today.weekday() - WEEKDAYS[unit]) % 7 or 7
        day = today - dt.timedelta(days=back)
        return _secs(day, day + dt.timedelta(days=1), label)
    return _season(unit, now, label)


def _season(name: str, now: dt.datetime, label: str) -> tuple[float, float, str]:
    """The latest such season that has ended (winter: December to February)."""
    year = now.year
    if name == "winter":
        end_year = year if now.month >= 3 else year - 1
        start = dt.datetime(end_year - 1, 12, 1, tzinfo=dt.timezone.utc)
        return _secs(start, dt.datetime(end_year, 3, 1, tzinfo=dt.timezone.utc), label)
    first, last = SEASONS[name]
    if now.month <= last:
        year -= 1
    start = dt.datetime(year, first, 1, tzinfo=dt.timezone.utc)
    return _secs(start, _month_after(year, last), label)


def _this(unit: str, now: dt.datetime, today: dt.datetime,
          label: str) -> tuple[float, float, str]:
    if unit == "morning":
        return _secs(today, today + dt.timedelta(hours=12), label)
    if unit == "week":
        return _secs(today - dt.timedelta(days=today.weekday()), now, label)
    if unit == "month":
        return _secs(today.replace(day=1), now, label)
    return _secs(today.replace(month=1, day=1), now, label)


def _month(m: re.Match[str], now: dt.datetime) -> tuple[float, float, str]:
    month = MONTHS[m.group("month").lower()]
    year = int(m.group("year")) if m.group("year") else (
        now.year if month <= now.month else now.year - 1)
    if m.group("day") and 1 <= int(m.group("day")) <= calendar.monthrange(year, month)[1]:
        day = dt.datetime(year, month, int(m.group("day")), tzinfo=dt.timezone.utc)
        return _secs(day, day + dt.timedelta(days=1), m.group(0))
    return _secs(dt.datetime(year, month, 1, tzinfo=dt.timezone.utc),
                 _month_after(year, month), m.group(0))


def _month_after(year: int, month: int) -> dt.datetime:
    return dt.datetime(year + month // 12, month % 12 + 1, 1, tzinfo=dt.timezone.utc)


def _secs(start: dt.datetime, end: dt.datetime, label: str) -> tuple[float, float, str]:
    return start.timestamp(), end.timestamp(), " ".join(label.lower().split())
