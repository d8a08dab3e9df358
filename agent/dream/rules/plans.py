"""Plans (future, dated, non-trivial), the assistant's own promises, and closing a plan.

A plan is only written when a date resolves to a day after the message; reschedules are
matched to the existing plan they move (by shared words, before any significance filter),
and "cancelled"/"done" sentences close the plan they talk about.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from agent.dream.dates import DateHit, find_date, with_dates
from agent.dream.ops import CloseOp
from agent.dream.rules.base import Candidate, Context, cand
from agent.dream.rules.lexicon import PAST, PLAN_WORDS
from agent.dream.rules.text import content_words, names_in, third_person, tidy
from memfs.cards import Card

_Q = re.IGNORECASE


_RESCHEDULE = re.compile(r"\b(?:moved|pushed|postponed|rescheduled|delayed|bumped|shifted|switched|"
                         r"changed)\b(?: back| up| forward)?(?: to| until| till| for)?\b|\bis now on\b", re.IGNORECASE)
_CLOSE = re.compile(r"\b(cancel+ed|called off|bail(?:ed)? on|had to cancel|is off|not going|won't be going|can't go|can't make it|"
                    r"out of|pulled out of|skipped|done with|finished|passed|did|went to|handed in|"
                    r"submitted|got back from|aced|nailed)\b", re.IGNORECASE)
_COMMIT = re.compile(r"\b(need to|have to|has to|promised|deadline|due|booked|scheduled)\b", re.IGNORECASE)


def _we(s: str, ctx: Context) -> str:
    who = f"the user and {ctx.recent_people[-1]}" if ctx.recent_people else "the user and others"
    s = re.sub(r"\bwe're\b|\bwe are\b", f"{who} are", s, flags=re.IGNORECASE)
    s = re.sub(r"\bwe've\b", f"{who} have", s, flags=re.IGNORECASE)
    s = re.sub(r"\bwe'll\b", f"{who} will", s, flags=re.IGNORECASE)
    s = re.sub(r"\bwe\b", who, s, flags=re.IGNORECASE)
    return re.sub(r"\bour\b", "their", s, flags=re.IGNORECASE)


def _plan(ctx: Context, body: str, hit: DateHit, words: frozenset[str], people: Sequence[str],
          target: str | None = None) -> Candidate:
    return cand(ctx, ("plan", hit.end.isoformat()), "plan", body, value=hit.end.isoformat(),
                 valid_from=ctx.msg.ts.date(), expires=hit.end, words=words, target=target,
                 entities=("user", *dict.fromkeys(people)), salience=0.65)


def rule_plan(s: str, ctx: Context) -> Iterator[Candidate]:
    """A future, dated, non-trivial plan: a plan word, a named person/place, or a commitment."""
    today = ctx.msg.ts.date()
    remind = re.search(r"\bremind me (?:to |about |that )?(.+?)(?=[.!?]|$)", s, _Q)
    hit = find_date(s, today)
    if hit is None or hit.past or hit.end <= today or (PAST.search(s) and not remind):
        return
    if s.rstrip().endswith("?") and not remind:
        return
    words, people = content_words(s), names_in(s)
    if _RESCHEDULE.search(s) and (old := best_plan(words | content_words(ctx.prior_text), ctx.active)):
        body = f"{tidy(with_dates(third_person(s), hit))} Previously: {old.body}"
        yield _plan(ctx, body, hit, words | content_words(old.body), [*old.entities[1:], *people], old.id)
        return
    if not (words & PLAN_WORDS or people or _COMMIT.search(s) or remind):
        return
    if remind:
        body = tidy("The user asked to be reminded to " + with_dates(third_person(remind.group(1)), hit))
    else:
        body = tidy(with_dates(third_person(_we(s, ctx)), hit))
    yield _plan(ctx, body, hit, words, [*people, *(ctx.recent_people[-1:] if re.search(r"\bwe\b", s, _Q) else [])])


def rule_promise(s: str, ctx: Context) -> Iterator[Candidate]:
    """The assistant's own promise to the user, with a date, is a plan the user will expect kept."""
    m = re.search(r"\bI'll (remind you|ask you|check in with you|check in|follow up with you|follow up)\b(.*)", s, _Q)
    hit = find_date(s, ctx.msg.ts.date()) if m else None
    if m is None or hit is None or hit.past or hit.end <= ctx.msg.ts.date():
        return
    rest = with_dates(m.group(1) + m.group(2), hit)
    rest = re.sub(r"\byour\b", "the user's", re.sub(r"\byou\b", "the user", rest, flags=_Q), flags=_Q)
    yield _plan(ctx, tidy("The assistant promised to " + rest), hit, content_words(m.group(2)), names_in(s))


def best_plan(words: frozenset[str], active: Sequence[Card]) -> Card | None:
    best, score = None, 0
    for card in active:
        if card.type != "plan" and card.expires is None:
            continue
        overlap = len(words & content_words(card.body + " " + " ".join(card.entities[1:])))
        if overlap > score:
            best, score = card, overlap
    return best


def find_closes(s: str, ctx: Context) -> Iterator[CloseOp]:
    m = _CLOSE.search(s)
    if m is None or re.search(r"\bnot (?:cancel|done|finished|passed)", s, _Q) or s.rstrip().endswith("?"):
        return
    card = best_plan(content_words(s), ctx.active)
    if card is not None:
        cancelled = re.search(r"cancel|called off|bail|is off|not going|won't|can't|out of|pulled", m.group(1), _Q)
        yield CloseOp(id=card.id, reason=("cancelled" if cancelled else "done") + f": {s.strip()[:120]}")
