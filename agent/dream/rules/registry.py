"""The list of sentence rules, and running them over a sentence or over an existing card.

``card_slots`` reads a card's body back in the first person through the same fact rules
that read the user's messages, so cards written by a model or by hand are recognised too
(that is how an update finds the card it supersedes).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from agent.dream.rules.base import Candidate, Context, SlotValue
from agent.dream.rules.facts import (
    rule_birthday,
    rule_death,
    rule_health,
    rule_home,
    rule_injury,
    rule_job,
    rule_milestone,
    rule_name,
    rule_pet,
    rule_quit,
)
from agent.dream.rules.lexicon import HYPOTHETICAL
from agent.dream.rules.people import rule_family, rule_partner_change
from agent.dream.rules.plans import rule_plan
from agent.dream.rules.tastes import (
    rule_boundary,
    rule_favorite,
    rule_fear,
    rule_habit_change,
    rule_hobby,
    rule_preference,
)
from agent.dream.rules.text import first_person, sentences
from memfs.cards import Card

_Q = re.IGNORECASE

FACT_RULES = (rule_name, rule_pet, rule_death, rule_job, rule_quit, rule_home, rule_birthday,
              rule_health, rule_injury, rule_family, rule_partner_change, rule_preference,
              rule_favorite, rule_boundary, rule_hobby, rule_fear, rule_milestone, rule_habit_change)
QUESTION_SAFE = (rule_boundary,)


def sentence_candidates(s: str, ctx: Context) -> list[Candidate]:
    """Every candidate one user sentence yields (facts first; a plan only if no fact used its date)."""
    if HYPOTHETICAL.search(s) and not re.search(r"\bremind me\b", s, _Q):
        return []
    question = s.rstrip().endswith("?")
    out = [c for rule in (QUESTION_SAFE if question else FACT_RULES) for c in rule(s, ctx)]
    if not any(c.slot[0] in ("birthday", "job", "death", "injury") for c in out):
        out.extend(rule_plan(s, ctx))
    return out


@dataclass(frozen=True)
class _CardMessage:
    session: str
    turn: int
    role: str
    content: str
    ts: dt.datetime


_SLOT_CACHE: dict[tuple[str, str], list[SlotValue]] = {}


def card_slots(card: Card) -> list[SlotValue]:
    """``(slot, value)`` pairs a card's body asserts, found by reading it back in the first
    person through the same rules that read the user's messages."""
    key = (card.id, card.body)
    if key not in _SLOT_CACHE:
        ctx = Context(msg=_CardMessage("card", 0, "user", card.body, card.created), active=(),
                      recent_people=[])
        found = [c for s in sentences(first_person(card.body)) for rule in FACT_RULES for c in rule(s, ctx)]
        _SLOT_CACHE[key] = [(c.slot, c.value) for c in found]
    return _SLOT_CACHE[key]
