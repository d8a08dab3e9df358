"""What every sentence rule shares: the candidate it yields, the context it reads, helpers.

A rule is a function ``(sentence, Context) -> Iterator[Candidate]``. A candidate names the
*slot* it fills (``("job", "")``, ``("pet", "biscuit")``, ``("plan", "2026-11-05")``) and the
value it puts there, so the extractor can tell "the same fact again" from "a new value for
the same slot" (an update that supersedes) without understanding the sentence.

Rules that need to know existing cards (whose pet is Pepper? who is the partner?) ask
``Context.slots``, which the window walker sets to ``registry.card_slots``; keeping it a
field rather than an import is what lets the registry import the rules.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memfs.agent.dream.dates import WEEKDAYS
from memfs.agent.dream.ops import MessageLike
from memfs.agent.dream.rules.lexicon import FILLER_TAIL, NOT_NAMES, SPECIES

from memfs.cards import Card

SlotValue = tuple[tuple[str, str], str]
"""What a card asserts: ``(slot, value)``, e.g. ``(("home", ""), "lisbon")``."""


def no_slots(card: Card) -> list[SlotValue]:
    """The ``Context.slots`` of a context that has no cards to look at."""
    return []


@dataclass
class Candidate:
    """One thing a user sentence said, before it is checked against existing cards."""

    slot: tuple[str, str]
    type: str
    body: str
    msg: MessageLike
    entities: tuple[str, ...] = ("user",)
    salience: float = 0.6
    valid_from: dt.date | None = None
    expires: dt.date | None = None
    value: str = ""
    """What the slot holds (a city, a role, like/dislike): same slot + other value = update."""
    ends: bool = False
    target: str | None = None
    """An existing card this candidate replaces, when a rule found it directly."""
    words: frozenset[str] = frozenset()
    moved: bool = False
    """A plan said as a reschedule ("got moved to Friday") that found no card to replace: an
    earlier plan candidate of the same window about the same thing is the one it moves."""
    turns: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.turns.add(self.msg.turn)


@dataclass
class Context:
    """What rules may look at besides the sentence: the message and the cards."""

    msg: MessageLike
    active: Sequence[Card]
    recent_people: list[str]
    prior_text: str = ""
    slots: Callable[[Card], list[SlotValue]] = no_slots
    prior: Sequence[tuple[str, Sequence[Candidate]]] = ()
    """The last user messages (oldest first) and what they yielded: where "remind me by
    Wednesday" or "sort that out" finds what it is about."""
    strict: bool = False
    """The shipped offline extractor's setting (issue 13, second round): the rules in
    ``registry.SUBJECT_GATED`` write only when the user is the sentence's subject, and a plan
    whose dated clause has someone else as its subject is not the user's. ``False`` is the old
    rules, kept to measure against."""


def cand(ctx: Context, slot: tuple[str, str], type_: str, body: str, **kw: object) -> Candidate:
    """A candidate from the context's message."""
    return Candidate(slot=slot, type=type_, body=body, msg=ctx.msg, **kw)  # type: ignore[arg-type]


def is_name(word: str | None) -> bool:
    return bool(word) and word not in NOT_NAMES and word.lower() not in WEEKDAYS  # type: ignore[union-attr]


def a_noun(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


_PRONOUNS = {"it", "that", "this", "you", "him", "her", "them", "when", "how", "the", "those", "these",
             "your", "his", "its", "our", "their", "what", "doing", "being", "watching", "u", "ya"}


def object_phrase(text: str) -> str | None:
    """The object of "I love X" tidied, or None when it is a pronoun or too long to be a thing."""
    obj = FILLER_TAIL.sub("", text.strip(" .,!?"))
    words = obj.split()
    if not words or words[0].lower() in _PRONOUNS or len(words) > 6:
        return None
    return obj


def has_slot(ctx: Context, slot: tuple[str, str]) -> bool:
    return any(s == slot for card in ctx.active for s, _ in ctx.slots(card))


def relation_of(name: str, ctx: Context) -> str | None:
    """How an existing card relates ``name`` to the user: a species, "sister", or None."""
    for card in ctx.active:
        for slot, _ in ctx.slots(card):
            if slot == ("pet", name.lower()):
                m = re.search(rf"\b({SPECIES})\b", card.body, re.IGNORECASE)
                return m.group(1).lower() if m else "pet"
            if slot[0] == "family" and slot[1].endswith(":" + name.lower()):
                return slot[1].split(":")[0]
    return None


def known_names(text: str, ctx: Context) -> list[str]:
    """Names the cards know that ``text`` mentions, even as its first word ("Maya's visiting")."""
    known = {e for card in ctx.active for e in card.entities[1:] if e[:1].isupper()}
    return [e for e in sorted(known) if re.search(rf"\b{re.escape(e)}\b", text)]


def introduce(body: str, names: Sequence[str], ctx: Context) -> str:
    """Say who a name is the first time a card uses it, when the cards know and the body does not:
    "Maya (the user's sister) is visiting" reads alone; "Maya's visiting" needs the other cards."""
    for name in dict.fromkeys([*names, *known_names(body, ctx)]):
        rel = relation_of(name, ctx)
        body = re.sub(rf"\b({re.escape(name)})'s (?=\w+ing\b|been\b|back\b|coming\b|here\b)", r"\1 is ", body)
        at = re.search(rf"\b{re.escape(name)}\b(?!')", body)
        if rel and at and rel.lower() not in body.lower():
            body = f"{body[:at.end()]} (the user's {rel}){body[at.end():]}"
    return body


def partner_name(active: Sequence[Card], slots: Callable[[Card], list[SlotValue]]) -> str | None:
    """The partner's name an active card gives, title-cased."""
    for card in active:
        for slot, value in slots(card):
            if slot == ("partner", "") and value:
                return value.split(":")[-1].title()
    return None
