"""What a reminder or plan is about when its own words do not say.

"Remind me to book something by Wednesday", "remind me by Wednesday", "remind me to sort that
out": a card saying only that would mean nothing weeks later (DESIGN.md: a card must make
sense alone). The thing is nearly always in the same message or the user's message before it
("I need to book the restaurant for Dad's birthday." ... "remind me by Wednesday"), so it is
looked for there: first a plan those messages already yielded, then a sentence that commits
to doing something, then (only from the message right before) the last sentence that says
anything. A plan whose object stays unresolved is dropped rather than written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memfs.agent.dream.rules.base import Candidate, Context
from memfs.agent.dream.rules.lexicon import HEDGE, PLAN_WORDS
from memfs.agent.dream.rules.text import content_words, names_in, sentences, third_person, tidy

_Q = re.IGNORECASE
_VAGUE = frozenset({"something", "anything", "stuff", "thing", "things", "special", "nice", "fun", "good",
                    "lovely", "proper", "sorted", "done", "bit", "everything", "whatever", "one"})
_GENERIC = frozenset({"remind", "reminded", "asked", "book", "sort", "get", "call", "pick", "make", "arrange",
                      "organise", "organize", "fix", "buy", "send", "pay", "check", "deal", "handle", "finish",
                      "start", "ask", "remember", "plan", "look", "think", "want", "need", "needs", "try", "can",
                      "please", "promised", "forget", "don't", "always", "again", "later", "soon", "first",
                      "thing", "able"})
_POINTER = re.compile(r"\b(?:it|that|this|something|anything|them|those|stuff)\b", _Q)
_ABOUT = re.compile(r"\b(?:need to|needs to|have to|has to|got to|gotta|must|should|want to|going to|gonna|meant to|"
                    r"supposed to|promised|book|pay|renew|buy|sort out|fix|finish|send|pick up|sign up)\b", _Q)


_COMMON_START = {"The", "A", "An", "Their", "This", "That", "These", "Those", "It", "Its", "It's"}


@dataclass(frozen=True)
class Antecedent:
    """The thing a vague reminder or plan is about, said so it stands alone."""

    text: str
    words: frozenset[str]
    names: tuple[str, ...]


def is_vague(text: str) -> bool:
    """Does ``text`` (a reminder's object, a plan sentence minus its date) fail to say what?"""
    return not (content_words(text) - _GENERIC - _VAGUE)


_DOES_POINTER = re.compile(r"\b(?:do|sort|sort out|book|clear|finish|handle|fix|get|organise|organize|arrange|buy|"
                           r"send|pay|raise|mention|discuss|check|confirm|deal with|look into)\s+"
                           r"(?:it|that|this|something|them)\b(?!\s+(?:is|was|'s)\b)", _Q)


def points_elsewhere(text: str) -> bool:
    """A plan sentence whose object is "it/that/something": "I'll clear it with Helen tomorrow"
    (what?), "need to sort something by Friday"; or one that says nothing but a pointer."""
    if _DOES_POINTER.search(text) and not content_words(text) & PLAN_WORDS:
        return True
    return bool(_POINTER.search(text)) and is_vague(text) and not (content_words(text) & PLAN_WORDS) \
        and not names_in(" " + text)


def _clause(s: str, m: re.Match[str]) -> str:
    """The comma clause of ``s`` that holds ``m`` ("I have to pay the council tax bill")."""
    start = s.rfind(",", 0, m.start()) + 1
    end = s.find(",", m.end())
    return s[start: end if end != -1 else len(s)].strip(" .!?")


def _committed(text: str) -> Antecedent | None:
    """The last sentence of ``text`` that commits to doing something specific."""
    for s in reversed(sentences(text)):
        m = _ABOUT.search(s)
        if m is None or s.rstrip().endswith("?") or HEDGE.search(s):
            continue
        clause = _clause(s, m)
        if not is_vague(clause):
            return _said(clause)
    return None


def _said(text: str) -> Antecedent:
    return Antecedent(tidy(third_person(text)), content_words(text), tuple(names_in(" " + text)))


def _plan_in(cands: Sequence[Candidate]) -> Antecedent | None:
    plans = [c for c in cands if c.type == "plan" and not is_vague(c.body)]
    if not plans:
        return None
    return Antecedent(plans[-1].body, plans[-1].words, plans[-1].entities[1:])


def antecedent(s: str, ctx: Context) -> Antecedent | None:
    """What ``s`` (a reminder or plan that does not say what) is about, or None."""
    content = ctx.msg.content
    earlier = content[: content.find(s)] if s in content else ""
    found = _committed(earlier) if ctx.msg.role == "user" else None
    for text, cands in reversed(ctx.prior):
        found = found or _plan_in(cands) or _committed(text)
    if found is None and ctx.prior and len(said := sentences(ctx.prior[-1][0])) == 1:
        # "the boiler's making that noise again" ... "remind me to sort that out": a previous message
        # that says one thing is what "that" points at; of several, which one is a guess.
        one = said[0]
        if not one.rstrip().endswith("?") and len(content_words(one) - _GENERIC - _VAGUE) >= 2 and not HEDGE.search(one):
            found = _said(one)
    return found


def about(body: str, ante: Antecedent) -> str:
    """``body`` (a sentence ending in ".") followed by what it is about."""
    first = ante.text.split(" ", 1)[0]
    text = ante.text[:1].lower() + ante.text[1:] if first in _COMMON_START else ante.text
    return f"{body[:-1]}, about this: {text}"
