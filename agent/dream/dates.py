"""Dates in chat, resolved to calendar days against the message's own timestamp.

A plan card must carry an absolute date: "tomorrow" means nothing weeks later, and a summary
rewrite silently drops relative dates. Every pattern here resolves against the date the
message was *sent* (not when the dream runs), and says whether the day is already past, so
the rules can tell a plan from a story about last Sunday.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10}


@dataclass(frozen=True)
class DateHit:
    start: dt.date
    end: dt.date
    phrase: str
    past: bool


_WD = "|".join(WEEKDAYS)
_WD_SHORT = rf"{_WD}|mon|tues?|wed(?:s|nes)?|thu(?:rs?)?|fri|sat|sun"
"""A weekday, also shortened as chat shortens it ("sat the 14th"); only ever read next to a day
number or "week", where "sat" or "sun" cannot be the verb or the star."""
MONTH_RE = r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
           r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
DATE_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("dayafter", re.compile(r"\bthe day after tomorrow\b", re.IGNORECASE)),
    ("rel", re.compile(r"\b(tomorrow|tonight|today|this (?:morning|afternoon|evening)|yesterday|"
                       r"last night)\b", re.IGNORECASE)),
    ("wd_nth", re.compile(rf"\b(?:on )?({_WD_SHORT}),? the (\d{{1,2}})(?:st|nd|rd|th)\b", re.IGNORECASE)),
    ("wd_week", re.compile(rf"\b(?:(?:a )?week on (?:{_WD_SHORT})|(?:on )?(?:{_WD_SHORT}) week)\b", re.IGNORECASE)),
    ("month_day", re.compile(rf"\b({MONTH_RE})\.? (\d{{1,2}})(?:st|nd|rd|th)?\b(?!:)", re.IGNORECASE)),
    ("day_month", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({MONTH_RE})\b", re.IGNORECASE)),
    ("nth", re.compile(rf"\b(?:on |by |for |until )?the (\d{{1,2}})(?:st|nd|rd|th)\b(?! (?:of )?(?:{MONTH_RE})\b)",
                       re.IGNORECASE)),
    ("weekday", re.compile(rf"\b(?:(this|next|last|on) )?({_WD})\b", re.IGNORECASE)),
    ("span", re.compile(r"\b(this|next|last) (week|weekend|month|year)\b", re.IGNORECASE)),
    ("from_n", re.compile(rf"\b(a|an|one|two|three|\d) weeks? from ({_WD}|today|tomorrow)\b", re.IGNORECASE)),
    ("in_n", re.compile(r"\bin (a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+) "
                        r"(day|week|month)s?\b", re.IGNORECASE)),
    ("month", re.compile(rf"\b(?:in|by|until|this|next) ({MONTH_RE})\b(?! \d)",
                         re.IGNORECASE)),
]


def find_date(text: str, today: dt.date) -> DateHit | None:
    """The first date expression in ``text``, resolved against ``today`` (the message date).

    A bare weekday or day-of-month ("on Monday", "the 3rd") points forward unless the sentence
    is told in the past tense ("Waffles died on Monday"): then it is the most recent such day.
    """
    found: list[tuple[int, str, DateHit]] = []
    for kind, pattern in DATE_PATTERNS:
        for match in pattern.finditer(text):
            hit = None if kind == "rel" and _title_word(match, text) else _resolve(kind, match, today)
            if hit is not None:
                found.append((match.start(), kind, hit))
                break
    if not found:
        return None
    start, kind, hit = min(found, key=lambda f: f[0])
    if kind in ("month", "nth", "wd_nth"):
        start, kind, hit = _month_and_day(found, today) or (start, kind, hit)
    if kind in ("weekday", "wd_nth"):
        # "Thursday 15 October", "Saturday the 19th of June": the calendar date that starts
        # within or right after the weekday phrase is the date (not the 19th of this month).
        end = start + len(hit.phrase) + 3
        exact = [f for f in found if f[1] in _EXACT and start <= f[0] <= end]
        if exact:
            start, kind, hit = exact[0]
    moved = _moved_to(text, start, hit, today)
    if moved is not None:
        return moved
    if kind == "month" and _anniversary(text, start):
        return DateHit(hit.start, hit.end, hit.phrase, True)
    masked = text[:start] + " " * len(hit.phrase) + text[start + len(hit.phrase):]
    if kind in _AMBIGUOUS and not hit.past and looks_past(masked, start) and not _named_next(hit):
        return _backward(kind, hit, today)
    return hit


def _month_and_day(found: list[tuple[int, str, DateHit]], today: dt.date) -> tuple[int, str, DateHit] | None:
    """ "in May ... on the 21st" (either order): the day number is a day of that month, not of
    the month the message was sent in."""
    month = next((f for f in found if f[1] == "month"), None)
    nth = next((f for f in found if f[1] in ("nth", "wd_nth")), None)
    if month is None or nth is None:
        return None
    day = _future_day(today, month[2].start.month, nth[2].start.day)
    if day is None:
        return None
    first = min(month[0], nth[0])
    return first, "month_day", DateHit(day, day, month[2].phrase if month[0] < nth[0] else nth[2].phrase, False)


ROUTINE = re.compile(r"\b(?:every|each)\s+(?:other\s+)?(?:day|week|month|morning|evening|night|weekend|"
                     r"mon|tue|wed|thu|fri|sat|sun)\w*"
                     rf"|\b(?:{_WD})s\b|\b(?:{_WD})\s+(?:mornings|afternoons|evenings|nights)\b"
                     r"|\b(?:weekly|fortnightly|most weeks|once a (?:week|month)|twice a (?:week|month))\b",
                     re.IGNORECASE)
"""A routine: "every Tuesday", "each morning", and the habitual plural ("on thursdays", "sunday
mornings", "weekly"): a standing habit, not a dated plan."""

_DURATION = re.compile(r"(?<!for )\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                       r"twenty|thirty|forty|fifty)\s*(?:yrs?|years?)\b(?:\s+\w+){0,2}\s*$", re.IGNORECASE)
"""An amount of time told before a month ("3 yrs in june", "six years this june"), or "since"
in the month's clause: the month is the anniversary of something that began in the past, not a
day ahead that something will happen on."""

_EXACT = ("iso", "month_day", "day_month")
_AMBIGUOUS = ("weekday", "nth", "wd_nth", "month_day", "day_month", "month")
_PRONOUN_S = r"\b(?:he|she|it|that|there|who|what|where|everyone|everybody|someone|somebody|nobody)'s"
"""The "'s" of the present progressive ("she's leaving friday"). After a name or a noun it is a
possessive ("at emre's wedding saturday they carried out trays ...", "aigerim's washing"), and
read as "is" it made a past story a plan for the coming Saturday (stop 32)."""
_FUTURE = re.compile(r"\b(?:will|won't|'ll|going to|gonna|is on|are on|'s on|coming up|planning|plan to|"
                     r"want to|need to|have to|hope to|can't wait|(?:am|'m|is|are|'re|" + _PRONOUN_S + r") \w+ing)\b"
                     r"|\b(?:for|to|until|till|by|before|from)\s+(?:on\s+)?$", re.IGNORECASE)
_PAST_WORDS = re.compile(r"\b(?:was|were|went|did|had|came|left|saw|took|made|ran|fell|broke|ate|met|spent|"
                         r"lost|told|said|felt|gave|found|bought|drove|flew|wrote|sat|slept|woke|died|"
                         r"split up|began|won|got back|"
                         r"yesterday|ago)\b", re.IGNORECASE)
_ED_VERB = re.compile(r"\b(?:I|he|she|we|they|it|[A-Z][a-z]+)\s+(?:just\s+|finally\s+|already\s+|also\s+)?"
                      r"([a-z]{2,}ed)\b")
_FORWARD_VERBS = {"booked", "scheduled", "planned", "arranged", "moved", "pushed", "rescheduled", "postponed",
                  "promised", "agreed", "decided", "registered", "invited", "confirmed", "changed", "bumped",
                  "delayed", "shifted", "switched", "signed", "reserved", "asked", "needed", "wanted"}


def looks_past(text: str, date_at: int | None = None) -> bool:
    """Is ``text`` told in the past tense (around the date found at ``date_at``)?

    Past verbs count ("was", "went", "he refused"), except those that point at a future day
    ("booked", "moved ... to"); any future marker ("will", "I'm seeing", "for Friday") wins.
    """
    before = text[:date_at] if date_at is not None else text
    if date_at is not None and _PAST_WORDS.search(own := _own_clause(text, date_at)) and not _FUTURE.search(own):
        return True
    if _FUTURE.search(text) or _FUTURE.search(before):
        return False
    if _PAST_WORDS.search(text):
        return True
    if date_at is not None and (lead := _LEAD_ED.match(_own_clause(text, date_at))) \
            and lead.group(1).lower() not in _FORWARD_VERBS | _ED_ADJECTIVES:
        return True  # chat drops the subject: "started in may"
    return any(m.group(1).lower() not in _FORWARD_VERBS for m in _ED_VERB.finditer(text))


_LEAD_ED = re.compile(r"\W*(?:just\s+|finally\s+|already\s+|only\s+)?([a-z]{2,}[^e\W]ed)\b", re.IGNORECASE)
"""A clause that opens on a past verb with no subject ("started in may", "retired last june")."""
_ED_ADJECTIVES = {"excited", "scared", "worried", "stressed", "thrilled", "gutted", "supposed", "expected",
                  "used", "engaged", "tired", "bored", "obsessed", "interested", "pleased", "delighted",
                  "terrified", "determined", "prepared", "relieved", "shattered", "buzzed", "chuffed"}


_FROM = re.compile(r"\bfrom\s+$", re.IGNORECASE)
_TO = re.compile(r"\s*(?:to|until|till|til)\s+", re.IGNORECASE)


def _moved_to(text: str, start: int, hit: DateHit, today: dt.date) -> DateHit | None:
    """ "moved from the 12th to the 19th", "from monday to friday": the day it is now, or
    the day the span ends, is the second date (the first would expire the card too early)."""
    if not _FROM.search(text[:start]):
        return None
    at = text.lower().find(hit.phrase.lower(), start)
    after = _TO.match(text, at + len(hit.phrase)) if at >= 0 else None
    return find_date(text[after.end():], today) if after else None


def _anniversary(text: str, at: int) -> bool:
    """Is the month found at ``at`` the anniversary of a past start ("3 yrs in june", "six years
    this june since my last drop")? Then nothing is planned for it."""
    clause = _own_clause(text, at)
    before = text[max(0, at - 40): at]
    return bool(_DURATION.search(before) or re.search(r"\bsince\b", clause, re.IGNORECASE))


_CLAUSE_BREAK = re.compile(r"[,;]|[.!?]\s|\s(?:and|but|so)\s", re.IGNORECASE)


def _own_clause(text: str, at: int) -> str:
    """The clause a date sits in: "it came on Saturday" in "I have to pay the bill, it came on
    Saturday" is past even though "have to" elsewhere in the sentence points forward."""
    starts = [m.end() for m in _CLAUSE_BREAK.finditer(text, 0, at)]
    after = _CLAUSE_BREAK.search(text, at)
    return text[(starts[-1] if starts else 0): (after.start() if after else len(text))]


def _title_word(match: re.Match[str], text: str) -> bool:
    """"the same page of Tomorrow, and Tomorrow": a capitalised "Tomorrow" mid-sentence is a
    title or a name, not a date (unless the whole text is shouted)."""
    before = text[: match.start()].rstrip()
    return (match.group(0)[:1].isupper() and bool(before) and before[-1] not in ".!?:;,-(\"'"
            and text.upper() != text)


def _named_next(hit: DateHit) -> bool:
    return hit.phrase.lower().startswith(("next", "this"))


def _backward(kind: str, hit: DateHit, today: dt.date) -> DateHit:
    """The same day-name or day-number, looked for in the past instead of the future."""
    day = hit.start
    if kind == "weekday":
        day = day - dt.timedelta(days=7)
    elif day > today and kind in ("nth", "wd_nth"):
        month, year = (12, day.year - 1) if day.month == 1 else (day.month - 1, day.year)
        day = _safe_date(year, month, day.day) or day
    elif kind == "month":
        # "we split up in january", said in April: the January before, the whole month
        if hit.start > today:
            start = dt.date(hit.start.year - 1, hit.start.month, 1)
            return DateHit(start, dt.date(start.year, start.month, calendar.monthrange(start.year, start.month)[1]),
                           hit.phrase, True)
        return DateHit(hit.start, hit.end, hit.phrase, hit.start <= today)
    elif day > today:
        day = _safe_date(day.year - 1, day.month, day.day) or day
    return DateHit(day, day, hit.phrase, day < today or (day == today and kind == "weekday"))


def _safe_date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def day_label(day: dt.date) -> str:
    """"Thursday 2026-10-15": the weekday a reader remembers plus the date nothing can misread."""
    return f"{calendar.day_name[day.weekday()]} {day.isoformat()}"


def iso_label(hit: DateHit) -> str:
    if hit.start == hit.end:
        return day_label(hit.start)
    return f"{hit.start.isoformat()} to {hit.end.isoformat()}"


_ABSOLUTE = re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?(?: of)? (?:{MONTH_RE})\b|\b(?:{MONTH_RE})\.? \d{{1,2}}"
                       r"(?:st|nd|rd|th)?\b", re.IGNORECASE)
_LEAD_WEEKDAY = re.compile(rf"(?:{_WD}),? (?:the )?$", re.IGNORECASE)


def with_dates(text: str, hit: DateHit | None) -> str:
    """Pin the date, written once. A relative phrase keeps the user's words and gains the day:
    "tomorrow (Thursday 2026-11-05)", and a weekday its date: "on Friday 2026-11-27", never
    "on Friday (Friday 2026-11-27)". A day and month (with the weekday before it and the year
    after it, when the user gave them) becomes one absolute date: "on Saturday 19 June 2027",
    never "19 June (Saturday 2027-06-19) 2027"."""
    if hit is None or hit.phrase not in text:
        return text
    if hit.start == hit.end and _ABSOLUTE.search(hit.phrase):
        at = text.find(hit.phrase)
        end = at + len(hit.phrase)
        year = re.match(r",? (\d{4})\b", text[end:])
        end += year.end() if year else 0
        lead = _LEAD_WEEKDAY.search(text[:at])
        start = lead.start() if lead else at
        day = hit.start
        label = f"{calendar.day_name[day.weekday()]} {day.day} {calendar.month_name[day.month]} {day.year}"
        return text[:start] + label + text[end:]
    if hit.start == hit.end and hit.phrase.split()[-1].lower() == calendar.day_name[hit.start.weekday()].lower():
        return text.replace(hit.phrase, f"{hit.phrase} {hit.start.isoformat()}", 1)  # "on Friday 2026-11-27"
    return text.replace(hit.phrase, f"{hit.phrase} ({iso_label(hit)})", 1)


def _month_index(word: str) -> int:
    word = word.lower()[:3]
    return [m[:3] for m in MONTHS].index(word) + 1


def _future_day(today: dt.date, month: int, day: int) -> dt.date | None:
    for year in (today.year, today.year + 1):
        try:
            candidate = dt.date(year, month, day)
        except ValueError:
            return None
        if candidate >= today:
            return candidate
    return None


def _resolve(kind: str, m: re.Match[str], today: dt.date) -> DateHit | None:
    phrase = m.group(0)
    if kind == "iso":
        try:
            day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
        return DateHit(day, day, phrase, day < today)
    if kind == "dayafter":
        day = today + dt.timedelta(days=2)
        return DateHit(day, day, phrase, False)
    if kind == "rel":
        return _relative_word(m.group(1).lower(), phrase, today)
    if kind == "nth":
        return _nth_of_month(int(m.group(1)), phrase, today)
    if kind == "wd_nth":
        return _weekday_nth(m.group(1), int(m.group(2)), phrase, today)
    if kind == "wd_week":
        name = re.search(rf"\b({_WD_SHORT})\b", phrase, re.IGNORECASE)
        day = _weekday(None, _full_weekday(name.group(1) if name else "monday"), phrase, today).start
        day += dt.timedelta(weeks=1)
        return DateHit(day, day, phrase, False)
    if kind in ("month_day", "day_month"):
        month_word, day_text = (m.group(1), m.group(2)) if kind == "month_day" else (m.group(2), m.group(1))
        found = _future_day(today, _month_index(month_word), int(day_text))
        return DateHit(found, found, phrase, False) if found else None
    if kind == "weekday":
        return _weekday(m.group(1), m.group(2), phrase, today)
    if kind == "span":
        return _span(m.group(1).lower(), m.group(2).lower(), phrase, today)
    if kind == "in_n":
        return _in_n(m.group(1).lower(), m.group(2).lower(), phrase, today)
    if kind == "from_n":
        return _weeks_from(m.group(1).lower(), m.group(2).lower(), phrase, today)
    return _month_only(m.group(1), phrase, today)


def _relative_word(word: str, phrase: str, today: dt.date) -> DateHit:
    if word in ("yesterday", "last night"):
        day = today - dt.timedelta(days=1)
        return DateHit(day, day, phrase, True)
    day = today + dt.timedelta(days=1) if word == "tomorrow" else today
    return DateHit(day, day, phrase, False)


def _nth_of_month(n: int, phrase: str, today: dt.date) -> DateHit | None:
    month, year = today.month, today.year
    if n < today.day:
        month, year = (1, year + 1) if month == 12 else (month + 1, year)
    try:
        day = dt.date(year, month, n)
    except ValueError:
        return None
    return DateHit(day, day, phrase, False)


def _full_weekday(word: str) -> str:
    return next(d for d in WEEKDAYS if d.startswith(word.lower()[:3]))


def _weekday_nth(name: str, n: int, phrase: str, today: dt.date) -> DateHit | None:
    """ "sat the 14th": the next 14th that is a Saturday (within a year), else the next 14th."""
    target = WEEKDAYS.index(_full_weekday(name))
    month, year = today.month, today.year
    for _ in range(12):
        day = _safe_date(year, month, n)
        if day is not None and day >= today and day.weekday() == target:
            return DateHit(day, day, phrase, False)
        month, year = (1, year + 1) if month == 12 else (month + 1, year)
    return _nth_of_month(n, phrase, today)


def _weekday(which: str | None, name: str, phrase: str, today: dt.date) -> DateHit:
    target = WEEKDAYS.index(name.lower())
    which = (which or "").lower()
    if which == "last":
        back = (today.weekday() - target) % 7 or 7
        day = today - dt.timedelta(days=back)
        return DateHit(day, day, phrase, True)
    if which == "next":
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7)
        day = monday + dt.timedelta(days=target)
        return DateHit(day, day, phrase, False)
    ahead = (target - today.weekday()) % 7 or 7
    day = today + dt.timedelta(days=ahead)
    return DateHit(day, day, phrase, False)


def _span(which: str, unit: str, phrase: str, today: dt.date) -> DateHit:
    shift = {"this": 0, "next": 1, "last": -1}[which]
    if unit in ("week", "weekend"):
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=shift)
        start = monday + dt.timedelta(days=5) if unit == "weekend" else monday
        return DateHit(max(start, today) if shift == 0 else start, monday + dt.timedelta(days=6),
                       phrase, shift < 0)
    if unit == "month":
        month = today.month + shift
        year = today.year + (month - 1) // 12
        month = (month - 1) % 12 + 1
        last = calendar.monthrange(year, month)[1]
        return DateHit(dt.date(year, month, 1), dt.date(year, month, last), phrase, shift < 0)
    year = today.year + shift
    return DateHit(dt.date(year, 1, 1), dt.date(year, 12, 31), phrase, shift < 0)


def _in_n(count: str, unit: str, phrase: str, today: dt.date) -> DateHit:
    n = NUMBERS.get(count) or int(count)
    days = {"day": n, "week": 7 * n, "month": 30 * n}[unit]
    day = today + dt.timedelta(days=days)
    return DateHit(day, day, phrase, False)


def _weeks_from(count: str, anchor: str, phrase: str, today: dt.date) -> DateHit:
    """"a week from Tuesday": the anchor day (the coming Tuesday, tomorrow) plus whole weeks."""
    n = NUMBERS.get(count) or int(count)
    if anchor in ("today", "tomorrow"):
        base = today + dt.timedelta(days=1 if anchor == "tomorrow" else 0)
    else:
        base = _weekday(None, anchor, phrase, today).start
    day = base + dt.timedelta(weeks=n)
    return DateHit(day, day, phrase, False)


def _month_only(word: str, phrase: str, today: dt.date) -> DateHit | None:
    if word.lower() == "may" and not phrase.lower().startswith(("in", "by", "until", "next", "this")):
        return None
    month = _month_index(word)
    year = today.year if month >= today.month else today.year + 1
    last = calendar.monthrange(year, month)[1]
    return DateHit(dt.date(year, month, 1), dt.date(year, month, last), phrase, False)
