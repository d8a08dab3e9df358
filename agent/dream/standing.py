"""Is a card a standing fact, a line of the summary's profile, or something that happened?

The profile is in every turn's context, for what stays true about the user: name, pronouns,
work, home, family, pets, health and diet, boundaries, what they care about. A card may be
worth writing and retrieving ("Played Ticket to Ride with Chris yesterday evening") without
being a standing fact; over 1,600 messages of small talk such cards used to fill the profile
until the summary could not fit its budget (issue 13, point 1). The decision is taken when the
card is written, from what the extractor already knows about the sentence:

- its prototype scores: the classes of ``data/prototypes.json`` that have a profile section
  (``CardClass.profile``) are the standing slots; the sentence's best score among them must
  reach ``PROFILE_ACCEPT``;
- its grammar: a sentence told as a one-off event (its subject's verb in the simple past, or a
  date that is today or before: "made pasta earlier today", "caught up with Aisha") is an event.
  A taste told so is never a standing taste ("finally tried cooking a curry"); any other slot
  told so needs ``EVENT_ACCEPT`` (an event can establish a state: "we moved to Bristol last
  weekend" says where the user lives).

Cards the offline extractor writes carry the answer (``CardDraft.profile``); a card with no
answer (the rules, a model, a hand edit) is a profile line by its type, as before.
"""

from __future__ import annotations

import datetime as dt

from memfs.agent.dream.cardtext import normalise
from memfs.agent.dream.dates import ROUTINE, find_date
from memfs.agent.dream.person import ADVERBS, PAST, _Text, is_past
from memfs.agent.dream.prototypes import CardClass, Scores

PROFILE_ACCEPT = 0.34
"""The best standing-slot prototype score a sentence needs to be a profile line."""
EVENT_ACCEPT = 0.42
"""The same, for a sentence told as a one-off event (not a taste: a taste told so never is)."""
TASTE = "cares about"

_OPENERS = frozenset({"oh", "and", "so", "ha", "haha", "lol", "ugh", "ok", "okay", "right", "well", "anyway",
                      "yeah", "also", "but", "honestly", "btw", "update", "then", "just"})
"""Discourse words a clause may open on before its subject or verb (a closed class)."""
_SUBJECTS = frozenset({"i", "we", "he", "she", "they"})


def standing_slot(scores: Scores, classes: dict[str, CardClass]) -> tuple[str, float]:
    """The best standing class of a sentence (one with a profile section) and its score."""
    pool = [(name, scores[name]) for name, c in classes.items() if c.profile and not c.negative]
    return max(pool, key=lambda x: x[1]) if pool else ("", 0.0)


def told_as_event(sentence: str, day: dt.date) -> bool:
    """Is the sentence told as something that happened: a date that is ``day`` or before (not
    a routine), or a clause whose verb is in the simple past ("caught up with Aisha", "I sang
    along", "Omar scheduled ...")?"""
    text = normalise(sentence)
    hit = find_date(text, day)
    if hit is not None and hit.end <= day and not ROUTINE.search(text):
        return True
    return past_clause(text)


def past_clause(text: str) -> bool:
    """Does a clause open (past discourse words and adverbs) on a simple past verb, alone or
    after its subject (a pronoun or a name)? "have/had been ..." is not simple past."""
    t = _Text.of(text)
    starts = [0] + [i for i in range(1, len(t.words)) if any(p in t.gaps[i] for p in ",;:.!?")]
    for i in starts:
        while t.low(i) in _OPENERS or t.low(i) in ADVERBS:
            i += 1
        word = t.low(i)
        if word in _SUBJECTS or (word and t.words[i][:1].isupper() and not is_past(word)):
            i += 1
            while t.low(i) in ADVERBS:
                i += 1
            word = t.low(i)
        if word and (word in PAST or is_past(word)) and word not in ("was", "were", "had", "used"):
            return True
    return False


def admit(scores: Scores | None, classes: dict[str, CardClass], sentence: str, day: dt.date,
          kind: str) -> bool:
    """Is the card written from ``sentence`` (of type ``kind``) a standing fact?"""
    if scores is None or kind in ("plan", "event"):
        return False
    name, score = standing_slot(scores, classes)
    if told_as_event(sentence, day):
        return classes[name].profile != TASTE and score >= EVENT_ACCEPT
    return score >= PROFILE_ACCEPT
