"""Naming the person a card's he or she is: a small coreference step for extractive cards.

A card is the user's own words, and people talk about someone they named a message ago:
"Grandad had a fall on Friday." … "He's 88. He's the one who taught me to draw." Written as
said, the card "He's 88. He's the one who taught the user to draw" is retrieved months later
with no one in it. Dropping such cards lost more true cards than false ones (BENCHMARKS.md,
stop 30), so instead the person the pronoun points back to is written into the body.

A wrong name is worse than none (it asserts a fact about the wrong person), so the step is
conservative. It reads back from the pronoun through the user's own words only (the assistant
says the user's name: "Oh, Alex."), nearest first, and stops at the first word that could be
someone: a kin word ("my sister", "Grandad"), a pet ("our cat bobo"), a name a kin word or an
active relationship card ties to a person, or a word that may be a name it cannot place (a
capitalised word, or one the embedding model's vocabulary does not hold: "kwabena", "otjiwarongo").
Only a person whose gender fits (kin words carry one; a name or a pet fits either) is written in;
a gendered kin word of the other gender is read past ("Mum called. Grandad had a fall. He's 88");
anything else it cannot place stops the step and the card is written as said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from memfs.agent.dream.dates import MONTHS, WEEKDAYS
from memfs.agent.dream.rules.lexicon import FAMILY_RELS, KIN_ADJECTIVES, PARTNER_RELS, STOPWORDS


def _words(alternatives: str) -> frozenset[str]:
    """The one-word entries of a ``rules.lexicon`` alternation ("best friend|friend|…")."""
    return frozenset(w for w in alternatives.split("|") if " " not in w)


MALE = frozenset({"dad", "father", "grandad", "granddad", "grandpa", "grandfather", "gramps", "brother", "son",
                  "uncle", "husband", "boyfriend", "nephew", "stepdad", "stepfather", "stepson", "godson", "grandson",
                  "half-brother", "father-in-law", "brother-in-law", "fiance", "fiancé"})
FEMALE = frozenset({"mum", "mom", "mother", "grandma", "gran", "granny", "nan", "nana", "nanna", "nonna",
                    "grandmother", "sister", "daughter", "aunt", "auntie", "wife", "girlfriend", "niece", "stepmum",
                    "stepmom", "stepmother", "stepdaughter", "goddaughter", "granddaughter", "half-sister",
                    "mother-in-law", "sister-in-law", "fiancee", "fiancée"})
_MODIFIERS = _words(KIN_ADJECTIVES) | {"best", "old", "step", "half"}
KIN = (_words(FAMILY_RELS) | _words(PARTNER_RELS) | MALE | FEMALE
       | {"mate", "neighbour", "neighbor", "teacher", "doctor", "therapist", "coach"}) - _MODIFIERS
"""The user's people (``rules.lexicon``'s family and partner words, and a few roles); a kin word
of ``MALE`` or ``FEMALE`` carries its gender, any other fits either pronoun."""
PETS = frozenset({"dog", "cat", "puppy", "kitten", "horse", "pony", "tortoise", "rabbit", "bunny", "parrot",
                  "budgie", "hamster", "gerbil", "ferret", "goat", "donkey"})
_NOT_NAMES = STOPWORDS | {"who's", "he's", "she's", "they're", "we're", "you're", "says", "said", "told", "again",
                          "never", "always", "since", "because", "though", "tho", "one", "gets", "went", "came",
                          "made", "might"}
"""Words that are never a person's name: function words (``rules.lexicon.STOPWORDS``) and verbs that
follow a kin word ("my sister said …")."""
_WORD = re.compile(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ'-]*")
_PRONOUN = re.compile(r"\b(he|she|him|her|his|hers)\b(?:'(s|ll|d))?", re.IGNORECASE)
_MALE_PRONOUNS = frozenset({"he", "him", "his"})
_HAS_BEEN = re.compile(r"^\s*(?:got|been|gotten)\b")
_PARTICIPLE = re.compile(r"^\s*(?:\w+ed|been|gone|got|had|done|seen|left|made|taken|given|known|told)\b")
_CALENDAR = frozenset([*WEEKDAYS, *MONTHS])
_ACTS = re.compile(r"\b([A-Z][a-z]+)(?:'s|\s+is|\s+was)?\s+(?:visiting|coming|says|said|told|texted|called|rang|"
                   r"reckons|thinks|asked|wants)\b")
"""A capitalised name doing what people do ("Maya's visiting", "Sam said"), not a place."""
_OTHERS = frozenset({"his", "her", "their", "a", "an", "the", "your", "whose"})


@dataclass(frozen=True)
class Person:
    """Someone a text points at: how a card writes them, their gender when a kin word gives it
    (``"m"``, ``"f"``, or ``""``: either), and their name when they have one."""

    phrase: str
    gender: str
    name: str = ""


BLOCK = Person("", "?")
"""A word that may be someone the step cannot place: reading back stops there."""


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str] | None:
    """The whole words of all-MiniLM-L6-v2's vocabulary (the model the learned extractor runs on),
    or ``None`` when its files are not there (then no card is renamed)."""
    try:
        from memfs.embed import DEFAULT_MODEL, resolve_model

        path = Path(resolve_model(DEFAULT_MODEL)) / "vocab.txt"
        return frozenset(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                         if line.strip() and not line.startswith(("##", "[")))
    except (ImportError, OSError):
        return None


def _gender(word: str) -> str:
    word = word.lower()
    return "m" if word in MALE else "f" if word in FEMALE else ""


def _named(word: str | None, vocab: frozenset[str]) -> str:
    """``word`` as a name when it reads as one after a kin word: capitalised ("my sister Maya"),
    or lowercase and unknown to the model's vocabulary ("my cousin aroha"; "my girlfriend
    teaches" is a verb)."""
    if not word or word.lower() in _NOT_NAMES or word.lower() in KIN | PETS:
        return ""
    return word.capitalize() if word[0].isupper() or word.lower() not in vocab else ""


def mentions(text: str, known: dict[str, str], vocab: frozenset[str], body: bool = False) -> list[Person]:
    """Who ``text`` may point at, in order: people and pets it names, and ``BLOCK`` for each
    word that may be a name it cannot place. ``known``: lowercased names of people -> gender.
    ``body``: ``text`` is a card body, where "their" is the user's (``person.third_person``)."""
    out: list[Person] = []
    found = list(_WORD.finditer(text))
    words = [m.group(0) for m in found]
    initial = [not text[: m.start()].rstrip() or text[: m.start()].rstrip().endswith((".", "!", "?", ":", "\"", "“"))
               for m in found]
    i = 0
    while i < len(words):
        word, low = words[i], words[i].lower().removesuffix("'s").removesuffix("’s")
        after = words[i + 1] if i + 1 < len(words) else None
        if low in KIN or low in PETS:
            j = i - 1 if i and words[i - 1].lower() in _MODIFIERS else i
            whose = words[j - 1].lower() if j else ""
            name = _named(after, vocab)
            if name:
                out.append(Person(name, _gender(low), name))
                i += 2
                continue
            owned = whose in ("my", "our", "user's") or body and whose == "their"
            if low in PETS and not owned:
                i += 1
                continue  # "a dog barked": nobody the user could mean by he or she
            if not owned and whose in _OTHERS:
                out.append(BLOCK)  # someone else's sister, "a friend": not one the step can name
            else:
                out.append(Person(f"the user's {' '.join(w.lower() for w in words[j:i + 1])}", _gender(low)))
        elif low in known:
            name = word.removesuffix("'s").removesuffix("’s").capitalize()
            out.append(Person(name, known[low], name))
        elif low in _NOT_NAMES or low.removesuffix("s") in _CALENDAR or low in _CALENDAR:
            pass
        elif word[0].isupper() and (not initial[i] or low not in vocab):
            out.append(BLOCK)  # a name or a place we cannot tell apart
        elif low not in vocab and "'" not in low:
            out.append(BLOCK)  # a word the model does not know: often a lowercase name
        i += 1
    return out


def people_known(texts: Iterable[str], names: Iterable[str] = ()) -> dict[str, str]:
    """Names ``texts`` tie to a person — next to a kin word ("my sister Maya", "Maya, my
    sister", "Maya is Alex's sister"), or doing what people do ("Maya's visiting", "Sam said") —
    with the gender a kin word gives, and ``names`` (an active relationship card's people);
    lowercased name -> gender."""
    vocab = vocabulary() or frozenset()
    known: dict[str, str] = {name.lower(): "" for name in names if name.lower() not in _NOT_NAMES}
    for text in texts:
        words = _WORD.findall(text)
        for i, word in enumerate(words):
            low = word.lower()
            if low in KIN and i + 1 < len(words) and _named(words[i + 1], vocab):
                known[words[i + 1].lower()] = _gender(low)
            if low in ("my", "our") and i + 1 < len(words) and words[i + 1].lower() in KIN and i >= 1 \
                    and _named(words[i - 1], vocab) and words[i - 1][0].isupper():
                known[words[i - 1].lower()] = _gender(words[i + 1])
            if low in KIN and i >= 3 and words[i - 2].lower() == "is" and words[i - 1].endswith("'s") \
                    and _named(words[i - 3], vocab) and words[i - 3][0].isupper():
                known[words[i - 3].lower()] = _gender(low)
        for m in _ACTS.finditer(text):
            known.setdefault(m.group(1).lower(), "")
    return {name: gender for name, gender in known.items()
            if name not in _NOT_NAMES and name not in KIN and name not in _CALENDAR}


def referent(pronoun: str, before: Sequence[str], known: dict[str, str], vocab: frozenset[str]) -> Person | None:
    """The person ``pronoun`` points back to in ``before`` (oldest first), or ``None``."""
    want = "m" if pronoun.lower() in _MALE_PRONOUNS else "f"
    for text in reversed(before):
        for person in reversed(mentions(text, known, vocab)):
            if person is BLOCK:
                return None
            if person.gender in ("", want):
                return person
    return None


def name_in_body(body: str, before: Sequence[str], known: dict[str, str]) -> tuple[str, str]:
    """``body`` with its first he/she/him/her/his written as the person it is, and that person's
    name (``""`` for a kin word); ``(body, "")`` when the body already names someone, or no one
    can be placed. ``before``: the user's words before the sentence, oldest first."""
    vocab = vocabulary()
    match = _PRONOUN.search(body)
    if vocab is None or match is None:
        return body, ""
    if mentions(body[: match.start()], known, vocab, body=True) or any(
            p is not BLOCK for p in mentions(body, known, vocab, body=True)):
        return body, ""
    person = referent(match.group(1), before, known, vocab)
    if person is None:
        return body, ""
    word, clitic = match.group(1).lower(), (match.group(2) or "").lower()
    phrase = person.phrase
    if word in ("he", "she"):
        rest = body[match.end():]
        verb = {"s": "'s" if _HAS_BEEN.match(rest) else " is", "ll": " will",
                "d": " had" if _PARTICIPLE.match(rest) else " would", "": ""}[clitic]
        new = phrase + verb
    elif word in ("his", "hers"):
        new = phrase + "'s"
    else:  # him, her: the pronoun kept, the person beside it
        new = f"{match.group(0)} ({phrase})"
    if match.start() == 0 or body[: match.start()].rstrip().endswith((".", "!", "?")):
        new = new[0].upper() + new[1:]
    return body[: match.start()] + new + body[match.end():], person.name
