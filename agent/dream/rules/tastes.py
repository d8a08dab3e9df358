"""Rules for what the user likes, does, fears, changed, and does not want the assistant to do.

Preferences are keyed by their object ("pref", "horror movies"): "I hate X" after "I love X"
is an update of the same slot, not a second card.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memfs.agent.dream.rules.base import Candidate, Context, cand, is_name, object_phrase
from memfs.agent.dream.rules.lexicon import END, FILLER_TAIL, NAME, NAMES
from memfs.agent.dream.rules.text import content_words, names_in, norm_key, third_person, tidy

from memfs.cards import Card

_Q = re.IGNORECASE


_VERB3 = {"love": "loves", "adore": "adores", "enjoy": "enjoys", "like": "likes", "hate": "hates",
          "dislike": "dislikes", "detest": "detests", "can't stand": "can't stand",
          "cannot stand": "can't stand", "don't like": "doesn't like", "do not like": "doesn't like",
          "don't really like": "doesn't really like", "prefer": "prefers"}


def rule_preference(s: str, ctx: Context) -> Iterator[Candidate]:
    stop = r"(?=,|\.|!|\?|;| but | because | so | and I | though| especially|$)"
    found: list[tuple[str, str, str]] = []
    pattern = (r"\bI (?:really |absolutely |just |also |totally |kind of )?"
               r"(love|adore|enjoy|like|hate|dislike|detest|can't stand|cannot stand|don't like|"
               r"do not like|don't really like|prefer)s?\b (?!to\b)(.+?)" + stop)
    for m in re.finditer(pattern, s, _Q):
        polarity = "like" if m.group(1).lower() in ("love", "adore", "enjoy", "like", "prefer") else "dislike"
        found.append((_VERB3[m.group(1).lower()], m.group(2), polarity))
    for m in re.finditer(r"\bI(?:'m| am) (not )?(?:a )?(?:huge |big |massive |real )?fan of (.+?)" + stop, s, _Q):
        found.append(("is not a fan of" if m.group(1) else "is a big fan of", m.group(2),
                      "dislike" if m.group(1) else "like"))
    items = [(verb, obj, pol) for verb, raw, pol in found if (obj := object_phrase(raw))]
    if not items:
        return
    body = "; ".join(f"{'The user' if i == 0 else 'the user'} {v} {o}" for i, (v, o, _) in enumerate(items))
    extra = re.search(r"\bespecially ([^,.!?]+)", s, _Q)
    body += f", especially {FILLER_TAIL.sub('', extra.group(1))}." if extra else "."
    key = norm_key(re.sub(r"\s+(?:over|to|more than)\s+.*$", "", items[0][1]))
    yield cand(ctx, ("pref", key), "preference", body, value=items[0][2], salience=0.5,
                entities=("user", *names_in(" " + body)))


_FAV_KIND = r"(?P<kind>[a-z]+(?: (?!ever\b|of\b|so\b|and\b|but\b|too\b|though\b|now\b)[a-z]+)?)"
_FAV_SUBJECT = (r"(?:^|[,;:]\s+|\b(?:and|but|honestly|tbh|btw|also|oh|plus)\s+)"
                r"(?P<obj>(?:(?!and\b|but\b|so\b|which\b|that\b|because\b)[\w'&-]+ ){0,3}[\w'&-]+)")
_FAV_AFTER = (rf"{_FAV_SUBJECT} (?:is|are|'s|has always been|will always be|remains) (?:still |easily |definitely |"
              rf"honestly |probably )?my (?:all[- ]time |absolute |very |new |current |top )?favou?rites? "
              rf"{_FAV_KIND}(?= ever\b| of all time\b|{END[3:]}")
_NOT_FAVOURITES = {"it", "this", "that", "he", "she", "they", "which", "what", "there", "here", "who", "you", "we", "i"}


def rule_favorite(s: str, ctx: Context) -> Iterator[Candidate]:
    """"my favourite film is X" and "X is my (all-time) favourite film (ever)": one slot per kind."""
    m = re.search(r"\bmy (?:all[- ]time |absolute |very |new |current )?favou?rite ([a-z]+(?: [a-z]+)?) (?:is|are) "
                  r"(.+?)(?=[,.!?;]|$)", s, _Q)
    obj = object_phrase(m.group(2)) if m else None
    kind = m.group(1) if m else ""
    if m is None or obj is None:
        m = re.search(_FAV_AFTER, s, _Q)
        raw = m.group("obj") if m else ""
        title = re.match(r"The (?-i:[A-Z])", raw) is not None  # "The Last of Us" is a title, not "the"
        obj = raw if title else object_phrase(raw) if m and raw.split()[0].lower() not in _NOT_FAVOURITES else None
        kind = m.group("kind") if m else ""
    if m and obj:
        kind = kind.lower()
        verb = "are" if kind.endswith("s") and not kind.endswith("ss") else "is"
        yield cand(ctx, ("favorite", kind), "preference", f"The user's favorite {kind} {verb} {obj}.", value=norm_key(obj),
                   entities=("user", *names_in(" " + obj)), salience=0.5)


def rule_boundary(s: str, ctx: Context) -> Iterator[Candidate]:
    """What the user does not want: a name, a style ("emojis"), or a topic."""
    yield from _boundary_name(s, ctx)
    m = re.search(r"\b(?:don't|do not|never|stop|please no)(?: ever)?(?: again)? (use|using|send|sending|suggest|suggesting|"
                  r"recommend|recommending) (?:any |me any |me )?([a-z -]+?)(?: with me| to me| for me)?"
                  r"(?: ever| again| anymore| please| by the way| btw)?(?=[,.!?;]|$| they| it| because| btw| as )", s, _Q) \
        or re.search(r"\bnot want the assistant to (use|suggest|recommend) ([a-z -]+?)(?=[,.!?;]|$)", s, _Q)
    if m and m.group(2).split()[0].lower() not in {"it", "that", "this", "the", "my"}:
        thing, verb = m.group(2).strip(), re.sub(r"(?:ing|e?s)$", "", m.group(1).lower())
        verb = {"us": "use", "suggest": "suggest", "recommend": "recommend", "send": "send"}.get(verb, verb)
        yield cand(ctx, ("boundary", norm_key(thing)), "boundary",
                   f"The user does not want the assistant to {verb} {thing}.", value="no", salience=0.85)
    yield from _boundary_topic(s, ctx)


def _boundary_name(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\b(?:stop|don't|do not|never|quit|didn't|did not|wouldn't|would not) (?:call|calling) me ['\"]?([a-z]+)|"
                  r"\bnot want to be called ['\"]?([a-z]+)|"
                  r"\b(?:hate|can't stand|dislike|don't like|do not like|hate it) when (?:people|you|someone|anyone|"
                  r"others|everyone|folks) (?:call|calls) me ['\"]?([a-z]+)", s, _Q)
    if m is None:
        return
    word = next(g for g in m.groups() if g)
    body = f"The user does not want to be called '{word.lower() if m.group(1) or m.group(2) else word}'"
    goes_by = re.search(rf"\b(?:it's|I'm|I go by|call me|I prefer|just) ({NAME})\b", s[m.end():], _Q)
    if goes_by and is_name(goes_by.group(1)):
        body += f"; they go by {goes_by.group(1)}"
    yield cand(ctx, ("boundary", "call:" + word.lower()), "boundary", body + ".", value="no", salience=0.9)


_TOPIC_END = re.compile(rf",\s*(?:{NAME}|he|she|they|I|I'm|we|it|everyone|people)\s+(?:\w+s|is|was|'s|are|keep|"
                        r"won't|can't|never|always|and)\b|\s+(?:because|since|as)\s|[;]|"
                        r",\s*(?:even|especially|not even|ok|okay|please|thanks|thank you|seriously|honestly|"
                        r"it's|that's|they're|I|I've|I'd|we|he|she|they|my \w+ (?:does|did|is|keeps))\b")


def _boundary_topic(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\b(?:don't|do not|never|stop)(?: ever)?(?: again)? (?:bring up|bringing up|mention|mentioning|talk about|"
                  r"(ask|asking) (?:me )?about)\s+(.+?)(?=[.!?]|$)|\bnot want (.+?) brought up|"
                  r"\bnot want to be (asked) about (.+?)(?=[.!?]|$)", s, _Q)
    if m is None:
        return
    raw = (m.group(2) or m.group(3) or m.group(5)).strip(" ,")
    raw = raw[: cut.start()] if (cut := _TOPIC_END.search(raw)) else raw
    topic = re.sub(r",?\s*(?:ever|again|please|anymore)\s*$", "", raw.strip(" ,"), flags=_Q)
    if not topic or topic.split()[0].lower() in {"it", "that", "this"}:
        return
    said = re.sub(r"^the user's\b", "their", third_person(topic))
    body = f"The user does not want to be asked about {said}." if (m.group(1) or m.group(4)) else \
        f"The user does not want {said} brought up."
    yield cand(ctx, ("boundary", norm_key(topic)), "boundary", body, value="no",
               entities=("user", *names_in(" " + topic)), salience=0.9)


def rule_hobby(s: str, ctx: Context) -> Iterator[Candidate]:
    """Passions and habits: "I'm obsessed with X", "I go bouldering three times a week"."""
    m = re.search(r"\bI(?:'m| am) (?:(?:really|totally|kind of|so) )?(obsessed with|into|passionate about|"
                  r"addicted to|hooked on) ([a-z][a-z' -]*?)" + END, s, _Q)
    if m and (obj := object_phrase(m.group(2))):
        yield cand(ctx, ("pref", norm_key(obj)), "preference", f"The user is {m.group(1).lower()} {obj}.",
                    value="like", salience=0.55)
        return
    m = re.search(r"\bI (?:go|do|play|practice|practise) ([a-z]+(?:ing)?(?: [a-z]+)?) (?:every (?:day|week|morning|"
                  r"weekend|night)|most (?:days|mornings|weekends)|(?:once|twice|three times|four times|\w+ times) a "
                  r"(?:week|month|day))", s, _Q)
    if m and (obj := object_phrase(m.group(1))):
        yield cand(ctx, ("pref", norm_key(obj)), "preference", tidy(third_person(m.group(0))),
                    value="like", salience=0.55)


def rule_fear(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bI(?:'m| am) (?:(?:really|actually|so|super|deeply) )?(terrified|scared|afraid|frightened|"
                  r"phobic) of ([a-z][a-z' -]*?)" + END, s, _Q)
    if m and (obj := object_phrase(m.group(2))):
        yield cand(ctx, ("fear", norm_key(obj)), "fact", f"The user is {m.group(1).lower()} of {obj}.",
                    value="yes", salience=0.75)


def rule_habit_change(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bI(?:'ve| have)? (?:just |recently |finally )?(switched to|gave up|quit|stopped|cut out|started) "
                  r"([a-z][a-z' -]*?)(?=\s+(?:last|this|a|two|three|and|but|so|because)\b|[,.!?;]|$)", s, _Q)
    if m and (obj := object_phrase(m.group(2))) and not re.match(r"(?:my job|work|my position|the company)", obj, _Q):
        yield cand(ctx, ("habit", norm_key(obj)), "preference",
                    f"The user {m.group(1).lower()} {obj} (as of {ctx.msg.ts.date().isoformat()}).",
                    value=m.group(1).lower(), salience=0.55)


_SWITCH = (
    r"\bI (?:just |recently |finally )?(?:dropped|quit|gave up|stopped|ditched) ([a-z][\w' -]*?),?(?: and)? "
    r"(?:I )?(?:switched|moved|changed|went) (?:over )?to ([\w' -]+?)" + END,
    r"\bI (?:just |recently |finally )?(?:switched|moved|changed|went) (?:over )?from ([\w' -]+?) to ([\w' -]+?)" + END,
    r"\bI (?:just |recently |finally )?(?:swapped|traded|dropped|ditched|replaced) ([\w' -]+?) (?:for|with) "
    r"([\w' -]+?)" + END,
)


def rule_switch(s: str, ctx: Context) -> Iterator[Candidate]:
    """"I dropped Spanish, switched to Portuguese": the new thing replaces the card about the old."""
    m = next((m for p in _SWITCH if (m := re.search(p, s, _Q))), None)
    if m is None or not (old := object_phrase(m.group(1))) or not (new := object_phrase(m.group(2))):
        return
    held = _card_about(old, ctx)
    body = f"The user dropped {old} and switched to {new} (as of {ctx.msg.ts.date().isoformat()})."
    yield cand(ctx, ("habit", norm_key(old)), "fact" if held and held.type == "fact" else "preference", body,
               value="switched:" + norm_key(new), target=held.id if held else None,
               entities=("user", *names_in(" " + old), *names_in(" " + new)), salience=0.6)


def _card_about(thing: str, ctx: Context) -> Card | None:
    """The active fact or preference that is about ``thing`` (by slot, else by its words)."""
    key, words = norm_key(thing), content_words(thing)
    for card in ctx.active:
        if any(slot[1] == key for slot, _ in ctx.slots(card)):
            return card
    return next((c for c in ctx.active if c.type in ("fact", "preference") and words
                 and words <= content_words(c.body)), None)


_PLACE_KINDS = "place|restaurant|café|cafe|bar|pub|spot|bakery|diner|bistro|shop|park|beach|trail|cinema|market"


def rule_loved_place(s: str, ctx: Context) -> Iterator[Candidate]:
    """"that Ethiopian place we love, Lalibela": a favourite place, named or not."""
    m = re.search(rf"\b(?:(?P<pre>{NAMES}),? )?(?:that|the|this|our) (?P<kind>(?:[\w'-]+ ){{0,3}}?(?:{_PLACE_KINDS})) "
                  rf"(?P<who>we|I) (?:both |all )?(?:love|like|adore|always go to|keep going back to)\b"
                  rf"(?:,? (?P<post>{NAMES}))?", s, _Q)
    if m is None:
        return
    name = next((n for n in (m.group("post"), m.group("pre")) if n and is_name(n.split()[0])), None)
    thing = f"{name}, the {m.group('kind')}" if name else f"the {m.group('kind')}"
    we = m.group("who").lower() == "we" and ctx.recent_people
    who = f"The user and {ctx.recent_people[-1]} love" if we else "The user loves"
    yield cand(ctx, ("pref", norm_key(name or m.group("kind"))), "preference", f"{who} {thing}.", value="like",
               entities=("user", *([name] if name else []), *(ctx.recent_people[-1:] if we else [])), salience=0.55)


_LIKE_INDIRECT = (
    r"^(?:honestly |tbh |and |also |but )?(?P<obj>[a-z][\w' -]{2,30}?) (?:is|are) (?:the only thing (?:that|which) "
    r"(?:\w+ ){0,3}?(?:switches|turns|shuts|calms|relaxes|keeps|helps|clears|quiets)|my (?:happy place|therapy|"
    r"escape|comfort|sanity))\b",
    r"\b(?:nothing beats|can't get enough of|I live for) (?P<obj>[a-z][\w' -]{2,30}?)" + END,
)
_PERSON_TYPE = re.compile(r"\bI(?:'m| am) (not )?(?:really )?(?:a |an )?(?:big |huge |real )?([a-z]+) (?:person|lover|fiend)\b",
                          re.IGNORECASE)
_DISLIKE_INDIRECT = (
    r"\bI(?:'m| am) (?:so |totally |officially |kind of |pretty much )?(?:done with|sick of|tired of|fed up with) "
    r"(?P<d>[a-z][\w' -]{2,30}?)" + END,
    r"\b(?:me and (?P<a>[\w' -]{2,30}?)|(?P<b>[a-z][\w' -]{2,30}?) and (?:me|I)) (?:are not|aren't|are no|"
    r"don't|do not) (?:friends|get along|mix|go together)\b",
    r"^(?:honestly |tbh |and |also |but |ugh,? )?(?P<c>[a-z][\w' -]{2,30}?) (?:is|are) (?:pure |literally |just |so )?"
    r"(?:evil|the worst|disgusting|gross|vile|my nemesis|my enemy|overrated)\b",
)
_NOT_TASTES = re.compile(r"^(?:my|his|her|their|our|the|this|that|it|work|today|life|everything|everyone|he|she|"
                         r"they|you|people|someone|things)\b", re.IGNORECASE)


def rule_indirect_taste(s: str, ctx: Context) -> Iterator[Candidate]:
    """Likes and dislikes said sideways: "baking is the only thing that switches my brain off",
    "me and karaoke are not friends", "mushrooms are evil", "I'm not a coffee person"."""
    kind = _PERSON_TYPE.search(s)
    if kind and kind.group(2).lower() not in ("people", "morning", "night", "good", "bad", "different", "new"):
        yield cand(ctx, ("pref", norm_key(kind.group(2))), "preference", tidy(third_person(s[kind.start():])),
                   value="dislike" if kind.group(1) else "like", salience=0.5)
        return
    for patterns, polarity, verb in ((_LIKE_INDIRECT, "like", "loves"), (_DISLIKE_INDIRECT, "dislike", "dislikes")):
        for pattern in patterns:
            m = re.search(pattern, s, _Q)
            raw = next((g for g in (m.groups() if m else ()) if g), None)
            obj = object_phrase(raw) if raw else None
            if m and obj and not _NOT_TASTES.match(obj):
                clause = re.split(r"[,;.!?]", s[m.start():], maxsplit=1)[0]
                said = re.sub(r"^(?:honestly|tbh|and|also|but|ugh),?\s+", "", clause.strip(), flags=_Q)
                body = tidy(f"The user {verb} {obj} ({third_person(said)})")
                yield cand(ctx, ("pref", norm_key(obj)), "preference", body, value=polarity, salience=0.5)
                return
