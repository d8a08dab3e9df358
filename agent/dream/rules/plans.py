"""Plans (future, dated, non-trivial), the assistant's own promises, and closing a plan.

A plan is only written when a date resolves to a day after the message; reschedules are
matched to the existing plan they move (by shared words, before any significance filter),
and "cancelled"/"done" sentences close the plan they talk about.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence

from memfs.agent.dream.dates import DateHit, day_label, find_date, with_dates
from memfs.agent.dream.ops import CloseOp
from memfs.agent.dream.rules.base import Candidate, Context, cand, introduce, is_name, known_names
from memfs.agent.dream.rules.lexicon import (
    HEDGE,
    INTERJECTIONS,
    NAMES,
    PAST,
    PLAN_NOUNS,
    PLAN_WORDS,
)
from memfs.agent.dream.rules.objects import about, antecedent, is_vague, points_elsewhere
from memfs.agent.dream.rules.text import (
    content_words,
    names_in,
    norm_key,
    sentences,
    third_person,
    tidy,
)

from memfs.cards import Card

_Q = re.IGNORECASE


_RESCHEDULE = re.compile(r"\b(?:moved|pushed|postponed|rescheduled|delayed|bumped|shifted|switched|"
                         r"changed)\b(?: back| up| forward)?(?: to| until| till| for)?\b|\bis now on\b", re.IGNORECASE)
_CLOSE = re.compile(r"\b(cancel+ed|cancel+ing|(?:going to|gonna|will|'ll|have to|need to) cancel|skip(?:ping)?|called off|bail(?:ed)? on|had to cancel|is off|is out(?! of)|not going|won't be going|can't go|can't make it|"
                    r"out of|pulled out of|skipped|done with|finished|passed|did|went to|handed in|"
                    r"submitted|got back from|aced|nailed)\b", re.IGNORECASE)
_TURNS = re.compile(r"\bturns \d{1,3}\b", re.IGNORECASE)
"""A relative's birthday with a date ("my dad turns 70 on 19 December") is a plan-worthy day."""
_COMMIT = re.compile(r"\b(need to|have to|has to|promised|deadline|due|booked|scheduled)\b", re.IGNORECASE)


def _we_with(s: str, ctx: Context) -> list[str]:
    """Who "we" is besides the user: the last person named, unless this sentence names them as
    the one "we" act on ("my brother Idris turns 30, we're throwing him a party")."""
    pool = ctx.recent_people
    if re.search(r"\bwe(?:'re|'ll| are| will)?\b[^.!?]*\b(?:him|her|them)\b", s, _Q):
        named = set(names_in(s))
        pool = [p for p in pool if p not in named]
    return pool[-1:]


def _we(s: str, ctx: Context) -> str:
    with_ = _we_with(s, ctx)
    who = f"the user and {with_[0]}" if with_ else "the user and others"
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
    moving = _RESCHEDULE.search(s) is not None
    if moving and (old := moved_plan(s, ctx)):
        body = moved_from(tidy(with_dates(third_person(_we(s, ctx)), hit)), old.body, old.expires, old.entities[1:])
        yield _plan(ctx, body, hit, words | content_words(old.body), [*old.entities[1:], *people], old.id)
        return
    if not (words & PLAN_WORDS or people or _COMMIT.search(s) or remind or _TURNS.search(s)):
        return
    if _hedged(s, hit) and not (_COMMIT.search(s) or remind):
        return
    if remind:
        what = re.sub(r"^(?:that|it|this|them)\s+(?=(?:by|on|at|in|before|until|tomorrow|tonight|next|this)\b)", "",
                      _through_date(remind.group(1), hit), flags=_Q)
        to = "" if re.match(r"(?:by|on|at|in|before|until|tomorrow|tonight|next|this)\b", what, _Q) else "to "
        body = tidy(third_person("the user asked to be reminded " + to + with_dates(what, hit)))
        vague = is_vague(what.replace(hit.phrase, " "))
    else:
        body = tidy(with_dates(third_person(_we(_there(_drop_chatter(s), s, ctx), ctx)), hit))
        vague = points_elsewhere(s.replace(hit.phrase, " "))
    if vague:
        ante = antecedent(s, ctx)
        if ante is None:
            return
        body, words, people = about(body, ante), words | ante.words, [*people, *ante.names]
    we = _we_with(s, ctx) if re.search(r"\bwe\b", s, _Q) else []
    body, people = introduce(body, people, ctx), [*people, *known_names(s, ctx)]
    implicit = [n for n in _context_names(s, ctx) if n.lower() not in body.lower()]
    if implicit:
        body = f"{body[:-1]} (context: {', '.join(implicit)})."
    plan = _plan(ctx, body, hit, words, [*people, *we, *implicit])
    plan.moved = moving
    yield plan


def _hedged(s: str, hit: DateHit) -> bool:
    """Speculation about the dated part of ``s`` ("maybe we could go to the coast on Sunday",
    "perhaps X and I could do that class on Saturday, not sure if she's free"); a hedge after
    the date's clause ("the exam is tomorrow, maybe I'll fail") does not make the exam a maybe."""
    at = s.find(hit.phrase)
    at = len(s) if at < 0 else at
    end = s.find(",", at + len(hit.phrase))
    start = max(s.rfind(" but ", 0, at), s.rfind(";", 0, at), 0)
    return HEDGE.search(s[start: end if end != -1 else len(s)]) is not None


def _through_date(text: str, hit: DateHit) -> str:
    """A reminder's words up to the clause holding its date: "renew my passport by Friday", not
    ", the form is on the kitchen table" after it."""
    kept: list[str] = []
    for clause in text.split(", "):
        kept.append(clause)
        if hit.phrase in clause:
            break
    return ", ".join(kept)


_MOVE_WORDS = frozenset({"moved", "pushed", "postponed", "rescheduled", "delayed", "bumped", "shifted", "switched",
                         "changed", "got", "back", "forward", "now", "rang", "called", "said", "told"})


def plan_match(words: frozenset[str], names: Sequence[str], body: str, entities: Sequence[str]) -> int:
    """How surely a reschedule is about a plan: shared words, twice for what a plan is about
    ("appointment", "dinner", "vet") and for the people and places both name; 0 is no match.
    The reschedule verbs themselves never count (a card that was moved once says "moved")."""
    shared = (words - _MOVE_WORDS) & (content_words(body + " " + " ".join(entities)) - _MOVE_WORDS)
    named = {n.lower() for n in names} & {e.lower() for e in entities}
    return len(shared) + len(shared & PLAN_NOUNS) + 2 * len(named)


def moved_plan(s: str, ctx: Context) -> Card | None:
    """The active plan a reschedule sentence moves: by its own words, else with the last messages'."""
    plans = [c for c in ctx.active if c.type == "plan" or c.expires is not None]
    for words in (content_words(s), content_words(s) | content_words(ctx.prior_text)):
        scored = [(plan_match(words, names_in(" " + s), c.body, c.entities[1:]), c) for c in plans]
        score, best = max(scored, key=lambda x: x[0], default=(0, None))
        if score > 0:
            return best
    return None


def moved_from(body: str, old_body: str, old_day: dt.date | None, old_entities: Sequence[str]) -> str:
    """A moved plan's body: the new sentence, the day it moved from, and the old plan's own
    text only when the new sentence lost what the plan was (who, where, what kind)."""
    if old_day is not None:
        body = f"{body[:-1]} (moved from {day_label(old_day)})."
    lost = [e for e in old_entities if e.lower() not in body.lower()]
    if lost or (content_words(old_body) & PLAN_NOUNS) - content_words(body):
        body += f" Originally: {old_body}"
    return body


_CHATTER = re.compile(r"^(?:you\b|you'd\b|wish me luck|no pressure|lol|haha|lmao|omg|fingers crossed|yay)"
                      r"|\b(?:you'?d love|you would love|wish me luck|no pressure)\b", re.IGNORECASE)


def _drop_chatter(s: str) -> str:
    """Remove comma clauses that talk to the assistant ("you'd love it", "wish me luck")."""
    clauses = re.split(r",\s+", s)
    kept = [clauses[0], *(c for c in clauses[1:] if not _CHATTER.search(c.strip()))]
    return ", ".join(kept)


_THERE = re.compile(r"\bthere\b(?!'s|\s+(?:is|are|was|were|will|'ll)\b)", re.IGNORECASE)
_PLACE = re.compile(rf"\b(?:in|at|to|from|near|visit|visiting) (?:the )?({NAMES})")


def _there(text: str, s: str, ctx: Context) -> str:
    """Resolve "there" to the last place named before it (this sentence, then the last messages),
    or drop it: "having dinner there" is better than a card pointing at nothing."""
    m = _THERE.search(text)
    if m is None:
        return text
    places = [p for p in _PLACE.findall(ctx.prior_text + " " + ctx.msg.content[: ctx.msg.content.find(s)]
                                        + " " + text[: m.start()]) if is_name(p.split()[0])]
    if places and places[-1] in text[: m.start()].rsplit(",", 1)[-1]:
        return text
    if places:
        return text[: m.end()] + f" ({places[-1]})" + text[m.end():]
    return re.sub(r"\s+", " ", text[: m.start()] + text[m.end():]).replace(" ,", ",")


def _context_names(s: str, ctx: Context) -> list[str]:
    """Names from the rest of the message ("Edinburgh!! the movers come on the 3rd"): a plan card
    should carry the where/who its sentence leaves implicit."""
    rest = sentences(ctx.msg.content.replace(s, "\n"))
    alone = [w.strip(" !?.") for w in rest if re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)?[!?.]*", w)]
    named = [n for part in rest for n in names_in(part)]
    found = [n for n in [*alone, *named] if is_name(n.split()[0]) and n not in INTERJECTIONS]
    if found or names_in(" " + s) or not re.search(r"\b(?:we|we're|we'll|us|there|they|they're)\b", s, _Q):
        return found
    known = {e for card in ctx.active for e in card.entities[1:] if e[:1].isupper()}
    return [e for e in sorted(known) if re.search(rf"\b{re.escape(e)}\b", ctx.prior_text)][:2]


def rule_promise(s: str, ctx: Context) -> Iterator[Candidate]:
    """The assistant's own promise to the user, with a date, is a plan the user will expect kept."""
    m = re.search(r"\bI'll (remind you|ask you|check in with you|check in|follow up with you|follow up)\b(.*)", s, _Q)
    hit = find_date(s, ctx.msg.ts.date()) if m else None
    if m is None or hit is None or hit.past or hit.end <= ctx.msg.ts.date():
        return
    rest = with_dates(m.group(1) + m.group(2), hit)
    rest = re.sub(r"\byour\b", "the user's", re.sub(r"\byou\b", "the user", rest, flags=_Q), flags=_Q)
    body, words, people = tidy("The assistant promised to " + rest), content_words(m.group(2)), names_in(s)
    if m.group(1).lower() in ("remind you", "ask you") and is_vague(m.group(2).replace(hit.phrase, " ")):
        if any(c.type == "plan" and c.expires == hit.end for _, cands in ctx.prior[-1:] for c in cands):
            return  # "Sure, I'll remind you on Thursday": the user's own reminder card says what
        ante = antecedent(s, ctx)
        if ante is None:
            return
        body, words, people = about(body, ante), words | ante.words, [*people, *ante.names]
    yield _plan(ctx, body, hit, words, people)


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
        cancelled = re.search(r"cancel|skip|is out|called off|bail|is off|not going|won't|can't|out of|pulled", m.group(1), _Q)
        yield CloseOp(id=card.id, reason=("cancelled" if cancelled else "done") + f": {s.strip()[:120]}")


def rule_goal(s: str, ctx: Context) -> Iterator[Candidate]:
    """A stated goal or resolution: "new year's resolution is to run a 10k by spring"."""
    m = re.search(r"\b(?:my |the |a )?(?:new year'?s |big |main )?(?:resolution|goal)(?: for (?:this|the) year)? "
                  r"(?:is|this year is) to ([^.!?]+?)(?=[.!?]|$)", s, _Q)
    if m is None:
        return
    aim = _drop_chatter(m.group(1)).strip(" ,")
    hit = find_date(aim, ctx.msg.ts.date())
    body = tidy(f"The user's goal is to {with_dates(third_person(aim), hit)} (set on {ctx.msg.ts.date().isoformat()})")
    if hit is not None and not hit.past and hit.end > ctx.msg.ts.date():
        yield _plan(ctx, body, hit, content_words(aim), names_in(" " + aim))
        return
    yield cand(ctx, ("goal", norm_key(aim)), "fact", body, value="yes", salience=0.6)
