"""The retrieval decision: does this turn need long-term memory, and what to look for.

Searching on every turn is not free and not harmless: when the answer is already in the
recent window, the summary or the pins, a search can only add a chance of pulling in an
outdated record ("the meeting is on Thursday") next to the current one. So before any
search the companion writes a ``RetrievalPlan``; ``need_retrieval`` false means "answer
from what is already in context".

Two deciders produce the same plan shape: ``plan_with_llm`` (a forced tool call) and
``plan_offline`` (deterministic rules, weaker but honest, used by the offline mode, the
demo and the tests). ``decide`` picks one. ``agent/evals/decision.py`` measures both on
hand-written probes, the "no" cases as much as the "yes" cases.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import replace

from memfs.agent.llm.base import LLM, Tool

from memfs.cards import CARD_TYPES
from memfs.errors import LLMError
from memfs.retrieval_plan import TIME_SCOPES, RetrievalPlan

__all__ = ["TIME_SCOPES", "RetrievalPlan", "decide", "plan_offline", "plan_with_llm"]

PLAN_MAX_TOKENS = 400


# --------------------------------------------------------------------------- deciders


def decide(
    llm: LLM | None, message: str, window: Sequence[str], summary: str = "", pins: str = "",
    memory_names: Collection[str] = (),
) -> RetrievalPlan:
    """The plan for this turn: rules when there is no model or the model is the offline
    one (whose "decision" would only be these same rules), otherwise the model.
    ``memory_names``: lower-cased names long-term memory knows (card entities)."""
    if llm is None or getattr(llm, "name", "") == "offline":
        return plan_offline(message, window, summary, pins, memory_names=memory_names)
    return plan_with_llm(llm, message, window, summary, pins)


PLAN_TOOL = Tool(
    name="retrieval_plan",
    description="Decide whether this turn needs a search of long-term memory, and plan it.",
    input_schema={
        "type": "object",
        "properties": {
            "need_retrieval": {"type": "boolean"},
            "memory_types": {"type": "array",
                             "items": {"type": "string", "enum": list(CARD_TYPES)}},
            "entities": {"type": "array", "items": {"type": "string"}},
            "time_scope": {"type": "string", "enum": list(TIME_SCOPES)},
            "search_query": {"type": "string"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string"},
        },
        "required": ["need_retrieval", "memory_types", "entities", "time_scope",
                     "search_query", "confidence", "reason"],
        "additionalProperties": False,
    },
)


def plan_with_llm(
    llm: LLM, message: str, window: Sequence[str], summary: str = "", pins: str = "",
    *, max_tokens: int = PLAN_MAX_TOKENS,
) -> RetrievalPlan:
    """Ask the model for a plan through a forced tool call. A provider failure or an
    unusable answer falls back to ``plan_offline``: a turn must never fail because the
    planner did, and the reason says that it fell back."""
    from memfs.agent.llm.structured import complete_json

    messages = [{"role": "user", "content": render_request(message, window, summary, pins)}]
    try:
        data = complete_json(llm, [plan_prompt()], messages, PLAN_TOOL, max_tokens=max_tokens)
        return RetrievalPlan.from_dict(data, error=LLMError)
    except LLMError as exc:
        fallback = plan_offline(message, window, summary, pins)
        return replace(fallback, reason=f"llm failed ({exc}); offline rules: {fallback.reason}")


def plan_prompt() -> str:
    """The planner's system prompt, ``templates/plan_prompt.md``."""
    from memfs.assets import read_template

    return read_template("plan_prompt.md")


def render_request(message: str, window: Sequence[str], summary: str, pins: str) -> str:
    """The user turn the planner sees: everything already in context, then the message."""
    lines = "\n".join(f"- {m}" for m in window) or "(empty)"
    return (f"<pins>\n{pins.strip() or '(none)'}\n</pins>\n"
            f"<summary>\n{summary.strip() or '(none)'}\n</summary>\n"
            f"<recent_window>\n{lines}\n</recent_window>\n"
            f"<message>\n{message}\n</message>")



# --------------------------------------------------------------------------- offline rules
# Word lists are general English patterns, not phrases copied from the eval probes.

def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


_MEMORY_CUE = _rx(
    r"remember", r"recall", r"remind me", r"forgot what", r"last time",
    r"(?:did|have) i (?:ever )?(?:tell|told|mention(?:ed)?|say|said)",
    r"i (?:told|mentioned to) you", r"i said", r"what did i say",
    r"you (?:recommended|suggested|said|mentioned)", r"you (?:told|promised) me",
    r"(?:did|have) we", r"we (?:decided|planned|agreed|talked|said|made)",
)
_RECUR_CUE = _rx(r"(?<!say that )(?<!try )(?<!come )again", r"still", r"anymore",
                 r"like (?:it|he|she|they|i|we) did", r"as usual")
_PAST_REF = _rx(r"used to", r"back when", r"back then", r"as a kid", r"when i was",
                r"last (?:week|month|year|summer|spring|fall|autumn|winter|night)", r"ago")
_SUGGEST = _rx(r"suggest\w*", r"recommend\w*", r"ideas?",
               r"what should (?:i|we) (?:make|cook|eat|get|buy|bake|order|wear)")
_PREF_DOMAIN = _rx(
    r"snacks?", r"food", r"dinner", r"lunch", r"breakfast", r"brunch", r"meals?", r"cook\w*",
    r"eat", r"recipes?", r"restaurants?", r"bake", r"dessert", r"drinks?", r"gifts?", r"presents?",
    r"birthday", r"anniversary", r"trip", r"date night", r"weekend", r"make", r"get",
)
_CONSTRAINT = _rx(r"allerg\w*", r"vegetarian", r"vegan", r"gluten", r"lactose", r"intoleran\w*",
                  r"(?:does|do|can)n[o']?t eat", r"hates?", r"loves?", r"favou?rite", r"prefers?")
_KIN_WORDS = (r"sister", r"brother", r"mom", r"mum", r"dad", r"mother", r"father",
              r"grand(?:ma|pa|mother|father|mum|dad)", r"aunt", r"uncle", r"cousin")
_KIN = _rx(*_KIN_WORDS)
"""A relative named without "my" ("Grandpa is in hospital") is still the user's relative."""
_HOW_TO = re.compile(r"\s*(?:how (?:do|can|should|would) (?:i|you|we)|what(?:'s| is) the best way)"
                     r"\b(?!.*\b(?:my|our)\b)", re.IGNORECASE)
"""How-to questions ("how do I boil an egg?") are general even though they say "I"."""
_FIRST_PERSON = _rx(r"i", r"i'm", r"i've", r"i'd", r"i'll", r"my", r"mine", r"we", r"our", r"we're")
_FIRST_PERSON_ANY = _rx(r"i", r"i'm", r"i've", r"i'd", r"i'll", r"my", r"mine", r"me", r"we",
                        r"our")
_QUESTION_START = _rx(r"what", r"what's", r"when", r"where", r"who", r"which", r"why", r"how",
                      r"how's", r"is", r"are", r"was", r"were", r"did", r"do", r"does", r"have",
                      r"has", r"should", r"can", r"could", r"would", r"will", r"any")
_SMALL_TALK = re.compile(
    r"^(?:h+i+|hey+|hello+|yo|hiya|good (?:morning|afternoon|evening|night)|gm|morning|"
    r"(?:ok(?:ay)?[ ,]*)?(?:good ?night|bye|see you|talk (?:to you )?(?:later|tomorrow|soon))|"
    r"thanks?(?: you)?|thx|ty|lol|haha\w*|lmao|how are you(?: doing)?(?: today)?|what'?s up|sup)\b",
    re.IGNORECASE)
_SCOPE_PAST_STRONG = _rx(r"used to", r"back when", r"back then", r"as a kid", r"when i was")
_SCOPE_RECENT = _rx(r"now", r"currently", r"current", r"still", r"latest", r"these days", r"lately",
                    r"anymore", r"moved", r"new", r"at the moment", r"recently", r"this week")
_SCOPE_PAST = _rx(r"before", r"last (?:week|month|year|summer|spring|fall|autumn|winter|time)",
                  r"ago", r"in the past", r"like (?:it|he|she|they|i|we) did")
_TYPE_WORDS: dict[str, re.Pattern[str]] = {
    "fact": _rx(r"name", r"job", r"work\w*", r"live[sd]?", r"allerg\w*", r"birthday", r"how long",
                r"where", r"age", r"pets?", r"diet"),
    "preference": _rx(r"favou?rite", r"likes", r"liked", r"loves?", r"hates?", r"prefers?",
                      r"recommend\w*",
                      r"suggest\w*", r"ideas?", r"snacks?", r"food", r"restaurants?", r"gifts?",
                      r"cook\w*", r"dinner", r"band", r"music", r"books?", r"diet"),
    "plan": _rx(r"plans?", r"planned", r"planning", r"trip", r"meeting", r"appointment",
                r"still on", r"tomorrow", r"next week", r"weekend", r"decided?", r"schedule\w*",
                r"moving", r"move"),
    "event": _rx(r"remember", r"story", r"happened", r"went", r"go", r"interview", r"party",
                 r"last time", r"surgery", r"vet", r"told you", r"did", r"argument", r"fight"),
    "relationship": _rx(*_KIN_WORDS, r"friend", r"boyfriend", r"girlfriend", r"partner",
                        r"wife", r"husband", r"boss", r"manager", r"cowork\w*", r"colleague",
                        r"argu\w*", r"fight", r"dat(?:e|ing)", r"texted", r"family", r"niece",
                        r"nephew", r"landlord", r"roommate", r"ex"),
    "boundary": _rx(r"don't call me", r"never call me", r"boundar\w*", r"uncomfortable",
                    r"don't (?:bring up|mention|talk about)"),
}
_FILLER = re.compile(
    r"^(?:(?:hey|hi|hello|ok(?:ay)?|so|wait|ugh|um+|hmm+|oh|well|btw|honestly|anyway|also|"
    r"quick question)\b[\s,.!]*)+", re.IGNORECASE)
_META = _rx(r"do you (?:still )?(?:remember|recall|know)", r"remember", r"recall", r"remind me",
            r"can you", r"could you", r"would you", r"please", r"lol", r"again", r"tbh",
            r"(?:did|have) i (?:ever )?(?:tell|told|mention(?:ed)?) you(?: about)?")
_NOT_NAMES = _wordset("""
a an the and but or so if then than that this these those there here it its it's is are was were
be been am do does did have has had can could would should will shall may might must i i'm i've
i'd i'll me my mine we our you your you're he she they them his her their what what's when where
who which why how how's whats any anyway also just only maybe yes yeah yep no nope not ok okay
oh ah ugh um hmm hey hi hello hiya yo well wait so btw lol haha omg wow please thanks thank sorry
good great nice cool sure right honestly actually really finally remember remind tell write
explain help give make let can't don't didn't isn't wasn't won't should've today tonight tomorrow
yesterday morning evening night monday tuesday wednesday thursday friday saturday sunday january
february march april may june july august september october november december spring summer fall
autumn winter after before since until while because also every some all both each back
only even still now then maybe anyway apparently guess plus speaking quick random side funny
weird love miss feeling just let's lets in on at for with about from to of by as like
""")
_STOP = _NOT_NAMES | _wordset("""
to of in on at for with about from into over by as up out off again still now new then ever
think know say said says tell told go going went get got getting want wanted like feel seem
seems enough thing things stuff something anything really very much many lot more most one
time way day days just even back kind sort bit little quite pretty u ur im ive dont
remember recall recommend recommended suggest suggested idea ideas name names believe wonder
imagine hope doing going usually too
""")
_QUOTED = re.compile(r"(?<!\w)'[^'\n]+'(?!\w)|\"[^\"\n]+\"|“[^”\n]+”")
"""Quoted text is material to work on ("make 'we gotta fix this' formal"), not about the user."""
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+")


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;:])\s+|\n+", text) if s.strip()]


def extract_entities(text: str, known: Sequence[str] = ()) -> list[str]:
    """Capitalised names in ``text``: people, pets, places. A capitalised word opening a
    sentence counts unless it is a function word or interjection ("So", "What", "Ugh")."""
    names: list[str] = []
    for sentence in _sentences(text):
        for word in _WORD.findall(sentence):
            word = re.sub(r"['’]s?$", "", word)
            if not word[:1].isupper() or word.isupper() and len(word) > 1:
                continue
            if word.lower() in _NOT_NAMES and word not in known:
                continue
            if word not in names:
                names.append(word)
    return names


def _stem(word: str) -> str:
    w = re.sub(r"['’]s$", "", word.lower())
    for suffix in ("ment", "ing", "ies", "ied", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text)}


def _content(text: str, entities: Sequence[str]) -> set[str]:
    ents = {_stem(e) for e in entities}
    words = (w for w in _WORD.findall(text) if re.sub(r"['’]s?$", "", w.lower()) not in _STOP)
    return {s for s in map(_stem, words) if s not in ents and len(s) > 1}


def _is_question(text: str) -> bool:
    first = _WORD.search(text)
    return "?" in text or bool(first and _QUESTION_START.fullmatch(first.group(0)))


_ABOUT_STATE = _rx(r"doing", r"feeling", r"going", r"up to", r"holding up")


def _find_cues(text: str, entities: Sequence[str]) -> list[tuple[str, float]]:
    """Signals that the answer lives in long-term memory, each with a weight in (0, 1)."""
    cues: list[tuple[str, float]] = []
    about_user = bool(_FIRST_PERSON_ANY.search(text) or _KIN.search(text))
    question = _is_question(text)
    if m := _MEMORY_CUE.search(text):
        cues.append((f"memory cue {m.group(0).lower()!r}", 0.9))
    if (m := _RECUR_CUE.search(text)) and (about_user or entities):
        cues.append((f"recurrence {m.group(0).lower()!r}", 0.6))
    if _PAST_REF.search(text) and about_user:
        cues.append(("refers to the user's past", 0.6))
    if _SUGGEST.search(text) and _PREF_DOMAIN.search(text):
        cues.append((_SUGGESTION, 0.7))
    if question and _FIRST_PERSON.search(text) and not _HOW_TO.match(text):
        cues.append(("question about the user's own life", 0.6))
    if entities and (about_user or question and (_SCOPE_RECENT.search(text)
                                                 or _ABOUT_STATE.search(text))):
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


def _covers(unit: str, entities: Sequence[str], content: set[str], cues: Sequence[str]) -> bool:
    stems = _stems(unit)
    if not all(_stem(e) in stems for e in entities):
        return False
    if _SUGGESTION in cues:
        return bool(_CONSTRAINT.search(unit))
    if entities and all(c.startswith(_MENTIONS) for c in cues):
        return True
    hit = len(content & stems)
    if not content:
        return bool(entities)
    if entities:
        return hit / len(content) >= 0.5
    return hit >= min(2, len(content)) and hit / len(content) >= 0.6


_DOMAINS = {
    "food": _rx(r"snacks?", r"food", r"dinner", r"lunch", r"breakfast", r"brunch", r"meals?",
                r"cook\w*", r"eat\w*", r"recipes?", r"restaurants?", r"bak\w+", r"desserts?",
                r"drinks?", r"allerg\w*", r"vegan", r"vegetarian", r"gluten", r"lactose",
                r"intoleran\w*", r"peanuts?", r"nuts?", r"dairy", r"spicy", r"sweets?"),
    "gifts": _rx(r"gifts?", r"presents?", r"birthday", r"anniversary"),
    "outings": _rx(r"trips?", r"weekend", r"date night", r"walks?", r"holidays?", r"travel\w*",
                   r"hikes?", r"outings?"),
    "media": _rx(r"films?", r"movies?", r"music", r"songs?", r"bands?", r"books?", r"shows?",
                 r"series", r"playlists?", r"podcasts?", r"games?"),
}
"""A constraint answers a suggestion only in its own domain: "hates horror films" says
nothing about which snack is safe for movie night."""


def _suggestion_covered(text: str, units: list[tuple[str, str]]) -> str | None:
    """Where constraints for *every* domain the request touches already sit, or None."""
    needed = [rx for rx in _DOMAINS.values() if rx.search(text)]
    found = None
    for domain in needed:
        where = next((w for w, u in units if _CONSTRAINT.search(u) and domain.search(u)), None)
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
    if _SUGGESTION in cues and not named and any(rx.search(text) for rx in _DOMAINS.values()):
        return _suggestion_covered(text, units)
    for where, unit in units:
        if _covers(unit, entities, content, cues):
            return where
    return None


def _time_scope(text: str) -> str:
    if _SCOPE_PAST_STRONG.search(text):
        return "past"
    if _SCOPE_RECENT.search(text):
        return "most_recent"
    return "past" if _SCOPE_PAST.search(text) else "any"


def _memory_types(text: str, entities: Sequence[str], cues: Sequence[str]) -> tuple[str, ...]:
    found = {t for t, rx in _TYPE_WORDS.items() if rx.search(text)}
    if entities:
        found.add("relationship")
    if _SUGGESTION in cues:
        found |= {"preference", "fact"}
    return tuple(t for t in CARD_TYPES if t in found) or ("fact", "event")


_THIRD_PERSON = [(_rx(r"i'm", r"i am"), "the user is"), (_rx(r"i've"), "the user has"),
                 (_rx(r"my"), "the user's"), (_rx(r"i", r"me"), "the user")]


def search_query(text: str) -> str:
    """The message as a search query: greetings, "do you remember", "can you" and
    punctuation dropped; first person turned into "the user", as cards are written."""
    query = _FILLER.sub("", text.strip())
    query = _META.sub(" ", query)
    for rx, repl in _THIRD_PERSON:
        query = rx.sub(repl, query)
    query = re.sub(r"[^\w\s'’-]", " ", query)
    query = re.sub(r"\s+", " ", query).strip(" -'")
    return query or text.strip()


def plan_offline(
    message: str, window: Sequence[str], summary: str = "", pins: str = "",
    *, memory_names: Collection[str] = (),
) -> RetrievalPlan:
    """Deterministic rules: look for memory cues in ``message``; if there are some, skip
    anyway when the window, summary or pins already hold what the answer needs.
    ``window`` is the recent message texts, oldest first. A question naming something
    long-term memory knows (``memory_names``: "Harbor" is a card's entity) is a cue too:
    that is how "When is the Harbor deadline?" differs from "Who was Napoleon?"."""
    text = _QUOTED.sub(" ", message).strip()
    known = extract_entities("\n".join([*window, summary, pins]))
    entities = extract_entities(text, known)
    cues = _find_cues(text, entities)
    remembered = [e for e in entities if e.lower() in memory_names]
    if remembered and _is_question(text):
        cues.append((f"{_MENTIONS} {', '.join(remembered)}, known to memory", 0.7))
    if not cues:
        small = bool(_SMALL_TALK.match(_FILLER.sub("", text) or text))
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
        search_query(message), round(min(0.95, 1 - miss), 2), "; ".join(names))
