"""Rules for what the user likes, does, fears, changed, and does not want the assistant to do.

Preferences are keyed by their object ("pref", "horror movies"): "I hate X" after "I love X"
is an update of the same slot, not a second card.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agent.dream.rules.base import Candidate, Context, cand, object_phrase
from agent.dream.rules.lexicon import END, FILLER_TAIL
from agent.dream.rules.text import names_in, norm_key, third_person, tidy

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


def rule_favorite(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bmy favou?rite ([a-z]+(?: [a-z]+)?) (?:is|are) (.+?)(?=[,.!?;]|$)", s, _Q)
    obj = object_phrase(m.group(2)) if m else None
    if m and obj:
        yield cand(ctx, ("favorite", m.group(1).lower()), "preference",
                    f"The user's favorite {m.group(1).lower()} is {obj}.", value=norm_key(obj),
                    entities=("user", *names_in(" " + obj)), salience=0.5)


def rule_boundary(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\b(?:stop|don't|do not|never|quit) (?:call|calling) me ['\"]?([a-z]+)|"
                  r"\bnot want to be called ['\"]?([a-z]+)", s, _Q)
    if m:
        word = (m.group(1) or m.group(2)).lower()
        yield cand(ctx, ("boundary", "call:" + word), "boundary",
                    f"The user does not want to be called '{word}'.", value="no", salience=0.9)
    m = re.search(r"\b(?:don't|do not|never|stop|please no) (?:use|using|send|sending) (?:any )?([a-z -]+?)"
                  r"(?: with me| to me)?(?=[,.!?;]|$| they| it| because)", s, _Q) \
        or re.search(r"\bnot want the assistant to use ([a-z -]+?)(?=[,.!?;]|$)", s, _Q)
    if m and m.group(1).split()[0].lower() not in {"it", "that", "this", "the", "my"}:
        thing = m.group(1).strip()
        yield cand(ctx, ("boundary", norm_key(thing)), "boundary",
                    f"The user does not want the assistant to use {thing}.", value="no", salience=0.85)
    m = re.search(r"\b(?:don't|do not|never|stop) (?:bring up|bringing up|mention|mentioning|talk about|"
                  r"ask about|ask me about)\s+(.+?)(?=[.!?]|$)|\bnot want (.+?) brought up", s, _Q)
    if m:
        topic = re.sub(r",?\s*(?:ever|again|please)\s*$", "", (m.group(1) or m.group(2)).strip(" ,"), flags=_Q)
        if topic and topic.split()[0].lower() not in {"it", "that", "this"}:
            yield cand(ctx, ("boundary", norm_key(topic)), "boundary",
                        f"The user does not want {third_person(topic)} brought up.", value="no",
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
    m = re.search(r"\bI (?:just |recently |finally )?(switched to|gave up|quit|stopped|cut out|started) "
                  r"([a-z][a-z' -]*?)(?=\s+(?:last|this|a|two|three|and|but|so|because)\b|[,.!?;]|$)", s, _Q)
    if m and (obj := object_phrase(m.group(2))) and not re.match(r"(?:my job|work|my position|the company)", obj, _Q):
        yield cand(ctx, ("habit", norm_key(obj)), "preference",
                    f"The user {m.group(1).lower()} {obj} (as of {ctx.msg.ts.date().isoformat()}).",
                    value=m.group(1).lower(), salience=0.55)
