"""The retrieval decision without a model: deterministic rules (``plan_offline``).

Look for memory cues in the message; if there are some, skip retrieval anyway when the
window, summary or pins already hold what the answer needs. Weaker than a model but honest:
used by the offline mode, the demo and the tests; measured by ``memfs eval decision``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable, Sequence

from memfs.agent.plan_words import (
    ABOUT_STATE,
    ADVICE,
    ASKS_FOR,
    CHOICE,
    DOMAINS,
    FILLER,
    FINITE,
    FIRST_PERSON,
    FIRST_PERSON_ANY,
    HOW_TO,
    KIN,
    LIMIT,
    LOCATIVE,
    MEMORY_CUE,
    META,
    NAMED,
    NOT_NAMES,
    NUMBER_WORDS,
    OPTION_CLAUSE,
    PAST_REF,
    PREF_DOMAIN,
    QUESTION_START,
    QUOTED,
    REASON_WORDS,
    RECUR_CUE,
    REGEX_DOMAINS,
    SCOPE_PAST,
    SCOPE_PAST_STRONG,
    SCOPE_RECENT,
    SMALL_TALK,
    STOP,
    SUGGEST,
    THIRD_PERSON,
    TIME_WORDS,
    TOPIC_ONLY,
    TYPE_WORDS,
    WHEN_QUESTION,
    WORD,
)

from memfs.cards import CARD_TYPES
from memfs.retrieval_plan import ABOUT_ASSISTANT, RetrievalPlan

_POSSESSIVE = re.compile(r"['’]s?$")
_GENITIVE = re.compile(r"['’]s$")
"""Compiled once: the planner runs them on every word of the recent window each turn."""


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;:])\s+|\n+", text) if s.strip()]


def extract_entities(text: str, known: Sequence[str] = ()) -> list[str]:
    """Capitalised names in ``text``: people, pets, places. A capitalised word opening a
    sentence counts unless it is a function word or interjection ("So", "What", "Ugh")."""
    names: list[str] = []
    for sentence in _sentences(text):
        for word in WORD.findall(sentence):
            word = _POSSESSIVE.sub("", word)
            if not word[:1].isupper() or word.isupper() and len(word) > 1:
                continue
            if word.lower() in NOT_NAMES and word not in known:
                continue
            if word not in names:
                names.append(word)
    return names


@functools.lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    """Pure, and asked for the same words turn after turn (the recent window's): cached."""
    w = _GENITIVE.sub("", word.lower())
    for suffix in ("ment", "ing", "ies", "ied", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in WORD.findall(text)}


def _content(text: str, entities: Sequence[str]) -> set[str]:
    ents = {_stem(e) for e in entities}
    words = (w for w in WORD.findall(text) if _POSSESSIVE.sub("", w.lower()) not in STOP)
    return {s for s in map(_stem, words) if s not in ents and len(s) > 1}


def _is_question(text: str) -> bool:
    first = WORD.search(text)
    return "?" in text or bool(first and QUESTION_START.fullmatch(first.group(0)))


Needs = Callable[[str], float]
"""The probability that a message is about the user's own life (``memfs.agent.needs``)."""
Classify = Callable[[str, str], Sequence[str]]
"""Which suggestion domains a request touches, by meaning (``memfs.constraints``), given
how it is worded (``memfs.constraints.WORDINGS``): "explicit" (a suggestion word: at least
its nearest domains count), "choice" (asks the assistant to choose or approve: ``CHOICE``
or an option offered for approval, "…, a pot of tea?"; the nearest domains count when the
request is about something of a domain at all), "advice" ("which … should I …"), or
"implicit" (a question or a request with neither: a domain counts only when the request is
very close to it)."""
IMPERATIVE = re.compile(r"^\s*(?:please\s+)?(?:give|tell|find|show|get|pick|help)\s+(?:me|us)\b",
                        re.IGNORECASE)
"""A request in the imperative ("give me a recipe for …")."""
PAST = re.compile(r"\b(?:did|didn't|was|wasn't|were|weren't|had|said|told|mentioned|remember"
                  r"|ago)\b", re.IGNORECASE)
"""A question about what happened or was said ("when did Priya last mention the band?")
asks for no suggestion: it is not classified, which would cost a model run of its own on
every such turn that does not retrieve (~10 ms; issue 11)."""


def _offers_option(text: str) -> bool:
    """Whether ``text`` ends by offering an option for approval: a short last clause with a
    question mark and no subject, auxiliary or question word ("…, scones maybe?")."""
    m = OPTION_CLAUSE.search(text.strip())
    return bool(m and len(m.group(1).split()) <= 8 and not FINITE.search(m.group(1)))


def _wording(text: str) -> str:
    """How ``text`` asks (``Classify``), or "" when it asks for no suggestion at all. A
    question about the past ("which did I pick?") asks for no choice."""
    if SUGGEST.search(text):
        return "explicit"
    if (CHOICE.search(text) or _offers_option(text)) and not PAST.search(text):
        return "choice"
    if ADVICE.search(text):
        return "advice"
    if IMPERATIVE.search(text) or (_is_question(text) and not PAST.search(text)):
        return "implicit"
    return ""


def suggestion(text: str, classify: Classify | None,
               answers: bool = False) -> tuple[bool, tuple[str, ...]]:
    """Whether ``text`` asks for a suggestion where preferences matter, and its domains.

    With ``classify`` (the embedding model) a request phrased as general advice counts too
    ("which cocktail should I order?"); without it, only the suggestion words and the
    domain word lists do, as before. A question about what the assistant suggested
    ("which cocktail did you recommend?") asks for no new suggestion, whatever its words, nor
    does a question for the time of something planned ("when is my meeting with Lin?":
    ``WHEN_QUESTION``), though its window may be all about dinner.
    ``answers``: ``text`` replies to the assistant's question ("shall I pick a few dinners?"
    — "go on, nothing fancy"): a reply that asks nothing itself may carry the request on
    (wording "reply": classified only when it reads more like a request than like news)."""
    if ABOUT_ASSISTANT.search(text) or WHEN_QUESTION.search(text) and not SUGGEST.search(text):
        return False, ()
    old_rule = bool(SUGGEST.search(text) and PREF_DOMAIN.search(text))
    if classify is not None:
        wording = _wording(text) or ("" if PAST.search(text) else
                                     "reply" if answers else "statement")
        domains = tuple(classify(text, wording)) if wording else ()
        if domains or (wording and old_rule):
            return True, domains
    if not old_rule:
        return False, ()
    found = [d for name, rx in DOMAINS.items() if rx.search(text)
             for d in REGEX_DOMAINS.get(name, ())]
    return True, tuple(dict.fromkeys(found))


def _find_cues(text: str, entities: Sequence[str],
               suggests: bool = False) -> list[tuple[str, float]]:
    """Signals that the answer lives in long-term memory, each with a weight in (0, 1)."""
    cues: list[tuple[str, float]] = []
    about_user = bool(FIRST_PERSON_ANY.search(text) or KIN.search(text))
    question = _is_question(text)
    if m := MEMORY_CUE.search(text):
        cues.append((f"memory cue {m.group(0).lower()!r}", 0.9))
    if (m := RECUR_CUE.search(text)) and (about_user or entities):
        cues.append((f"recurrence {m.group(0).lower()!r}", 0.6))
    if PAST_REF.search(text) and about_user:
        cues.append(("refers to the user's past", 0.6))
    if suggests:
        cues.append((_SUGGESTION, 0.7))
    if question and FIRST_PERSON.search(text) and not HOW_TO.match(text):
        cues.append(("question about the user's own life", 0.6))
    if entities and (about_user or question and (SCOPE_RECENT.search(text)
                                                 or ABOUT_STATE.search(text))):
        cues.append((f"{_MENTIONS} {', '.join(entities)}", 0.6))
    return cues


_SUGGESTION = "suggestion where preferences matter"
_MENTIONS = "mentions"


def _units(window: Sequence[str], summary: str, pins: str) -> list[tuple[str, str]]:
    """What is already in context, cut into units a single answer could come from:
    each window message (newest first), each summary sentence, each pin line."""
    units = [("window", m) for m in reversed(window)]
    units += [("summary", s) for s in re.split(r"(?<=[.!?])\s+|\n+", summary) if s.strip()]
    units += [("pins", line) for line in pins.splitlines() if line.strip()]
    return units


def _asks_for(text: str) -> str | None:
    """The kind of answer a question asks for (``ASKS_FOR``), or None for a question that a
    yes or no answers, or a statement. Found anywhere in the message: "do you remember where
    I work?" asks for a place as much as "where do I work?" does."""
    if not _is_question(text):
        return None
    return next((kind for kind, rx in ASKS_FOR if rx.search(text)), None)


def _new(words: Iterable[str], asked: set[str]) -> bool:
    return any(w not in asked for w in words)


def _holds_answer(unit: str, kind: str, asked: set[str]) -> bool:
    """Whether ``unit`` holds something of the ``kind`` asked for that the question
    (its stems: ``asked``) does not already say. A unit that only shares the question's
    topic ("They talked about work." for "where do I work?") holds no answer, and skipping
    the search on it would leave the real answer in memory, out of the model's sight."""
    if kind == "time":
        return _new((_stem(m) for m in TIME_WORDS.findall(unit)), asked)
    if kind == "number":
        return _new((_stem(m) for m in NUMBER_WORDS.findall(unit)), asked)
    if kind == "reason":
        return bool(REASON_WORDS.search(unit))
    names = {_stem(e) for e in extract_entities(unit)} | {_stem(m) for m in NAMED.findall(unit)}
    if kind == "name":
        return _new(names, asked)
    if kind == "place":
        return _new(names | {_stem(m) for m in LOCATIVE.findall(unit)} - _STOP_STEMS, asked)
    return _new(_content(unit, ()) - _TOPIC_STEMS, asked)


_STOP_STEMS = frozenset(_stem(w) for w in STOP)
_TOPIC_STEMS = frozenset(_stem(w) for w in TOPIC_ONLY)


def _covers(unit: str, entities: Sequence[str], content: set[str], cues: Sequence[str],
            asks: str | None = None, asked: set[str] | None = None) -> bool:
    stems = _stems(unit)
    if not all(_stem(e) in stems for e in entities):
        return False
    if _SUGGESTION in cues:
        return bool(LIMIT.search(unit))
    if asks is not None and not _holds_answer(unit, asks, asked or set()):
        return False
    if entities and all(c.startswith(_MENTIONS) for c in cues):
        return True
    hit = len(content & stems)
    if not content:
        return bool(entities)
    if entities:
        return hit / len(content) >= 0.5
    return hit >= min(2, len(content)) and hit / len(content) >= 0.6


def _suggestion_covered(text: str, units: list[tuple[str, str]]) -> str | None:
    """Where constraints for *every* domain the request touches already sit, or None."""
    needed = [rx for rx in DOMAINS.values() if rx.search(text)]
    found = None
    for domain in needed:
        where = next((w for w, u in units if LIMIT.search(u) and domain.search(u)), None)
        if where is None:
            return None
        found = found or where
    return found


def _answered_in(
    text: str, entities: Sequence[str], cues: Sequence[str],
    window: Sequence[str], summary: str, pins: str,
) -> str | None:
    """Where the likely answer already sits in context, or None when it does not."""
    content = _content(text, entities)
    units = _units(window, summary, pins)
    named = [e for e in entities if e.lower() != "user"]
    if _SUGGESTION in cues and not named and any(rx.search(text) for rx in DOMAINS.values()):
        return _suggestion_covered(text, units)
    asks, asked = _asks_for(text), _stems(text)
    for where, unit in units:
        if _covers(unit, entities, content, cues, asks, asked):
            return where
    return None


def _time_scope(text: str) -> str:
    if SCOPE_PAST_STRONG.search(text):
        return "past"
    if SCOPE_RECENT.search(text):
        return "most_recent"
    return "past" if SCOPE_PAST.search(text) else "any"


def _memory_types(text: str, entities: Sequence[str], cues: Sequence[str]) -> tuple[str, ...]:
    found = {t for t, rx in TYPE_WORDS.items() if rx.search(text)}
    if entities:
        found.add("relationship")
    if _SUGGESTION in cues:
        found |= {"preference", "fact"}
    return tuple(t for t in CARD_TYPES if t in found) or ("fact", "event")


def search_query(text: str) -> str:
    """The message as a search query: greetings, "do you remember", "can you" and
    punctuation dropped; first person turned into "the user", as cards are written."""
    query = FILLER.sub("", text.strip())
    query = META.sub(" ", query)
    for rx, repl in THIRD_PERSON:
        query = rx.sub(repl, query)
    query = re.sub(r"[^\w\s'’-]", " ", query)
    query = re.sub(r"\s+", " ", query).strip(" -'")
    return query or text.strip()


def plan_offline(
    message: str, window: Sequence[str], summary: str = "", pins: str = "",
    *, memory_names: Collection[str] = (), classify: Classify | None = None,
    needs: Needs | None = None, need_threshold: float = 1.01,
) -> RetrievalPlan:
    """Deterministic rules: look for memory cues in ``message``; if there are some, skip
    anyway when the window, summary or pins already hold what the answer needs.
    ``window`` is the recent message texts, oldest first. A question naming something
    long-term memory knows (``memory_names``: "Harbor" is a card's entity) is a cue too:
    that is how "When is the Harbor deadline?" differs from "Who was Napoleon?".
    ``classify``: see ``suggestion``; the plan names the domains it found. ``needs``: when
    the rules find no cue, a message it reads as about the user's own life with a probability
    of at least ``need_threshold`` is a cue of its own (people name their dog, their landlord
    and their results without "my" or "remember")."""
    text = QUOTED.sub(" ", message).strip()
    known = extract_entities("\n".join([*window, summary, pins]))
    entities = extract_entities(text, known)
    suggests, domains = suggestion(text, classify,
                                   answers=bool(window) and _is_question(window[-1]))
    cues = _find_cues(text, entities, suggests)
    remembered = [e for e in entities if e.lower() in memory_names]
    if remembered and _is_question(text):
        cues.append((f"{_MENTIONS} {', '.join(remembered)}, known to memory", 0.7))
    small = bool(SMALL_TALK.match(FILLER.sub("", text) or text))
    if not cues and needs is not None and not small and (p := needs(text)) >= need_threshold:
        cues.append((f"reads as about the user's life ({p:.2f})", round(p, 2)))
    if not cues:
        return RetrievalPlan(False, confidence=0.9 if small else 0.7,
                             reason="small talk" if small else "no memory cue")
    names = [c for c, _ in cues]
    where = _answered_in(text, entities, names, window, summary, pins)
    if where is not None:
        return RetrievalPlan(False, entities=("user", *entities), time_scope=_time_scope(text),
                             confidence=0.7, reason=f"answered in {where}")
    miss = 1.0
    for _, weight in cues:
        miss *= 1 - weight
    return RetrievalPlan(
        True, _memory_types(text, entities, names), ("user", *entities), _time_scope(text),
        search_query(message), round(min(0.95, 1 - miss), 2), "; ".join(names),
        constraint_domains=tuple(domains))
