"""Rules for facts about the user themself: name, pets, deaths, home, health, learning, milestones.

Most are single-valued slots: a new job or city is an update that supersedes the old card.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memfs.agent.dream.dates import MONTH_RE, MONTHS, find_date
from memfs.agent.dream.rules.base import (
    Candidate,
    Context,
    a_noun,
    cand,
    has_slot,
    is_name,
    object_phrase,
    relation_of,
)
from memfs.agent.dream.rules.lexicon import (
    CONDITIONS,
    DIETS,
    END,
    FAMILY_RELS,
    FILLER_TAIL,
    NAME,
    NAMES,
    PARTNER_RELS,
    SPECIES,
)
from memfs.agent.dream.rules.text import names_in, norm_key, third_person, tidy

_Q = re.IGNORECASE


def rule_name(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(rf"\b(?:my name is|my name's|call me|i go by)\s+({NAME})", s, _Q)
    negated = re.search(r"\b(?:don't|do not|never|stop|hate|dislike)\b[^.!?]*\bcall", s, _Q)
    if m and is_name(m.group(1)) and not (negated and "call" in m.group(0).lower()):
        yield cand(ctx, ("name", ""), "fact", f"The user's name is {m.group(1)}.",
                    value=m.group(1).lower(), salience=0.7)


def rule_pet(s: str, ctx: Context) -> Iterator[Candidate]:
    patterns = [
        rf"\bmy (?:old |little |new |sweet )?({SPECIES})(?:'s name is| is named| is called| named| called|,)? ({NAME})",
        (rf"\b(?:I|we) (?:have|had|adopted|got|just got|just adopted) (?:a|an|another) (?:\w+ )?({SPECIES})\b"
         rf"[^.!?]*?(?:named|called|(?:her|his|its) name is) ({NAME})"),
    ]
    for pattern in patterns:
        m = re.search(pattern, s, _Q)
        if m and is_name(m.group(2)):
            species, name = m.group(1).lower(), m.group(2)
            yield cand(ctx, ("pet", name.lower()), "fact", f"The user has {a_noun(species)} named {name}.",
                       entities=("user", name), value="alive", salience=0.7)
            return
    yield from _pet_named_later(s, ctx)


def _pet_named_later(s: str, ctx: Context) -> Iterator[Candidate]:
    """"we got a puppy!! a border collie, she's called Mochi": the name comes a sentence later."""
    named = re.search(rf"\b(?:she's|he's|she is|he is|it's|its name is|her name is|his name is|we named (?:her|him|it)|"
                      rf"we called (?:her|him|it)) (?:called |named )?({NAME})\b", s, _Q)
    got = re.search(r"\b(?:I|we) (?:just )?(?:got|adopted|rescued|brought home|picked up) (?:a|an|another|our) ", ctx.msg.content, _Q)
    kinds = re.findall(rf"\b({SPECIES})\b", ctx.msg.content[got.end():], _Q) if got else []
    if named and kinds and is_name(named.group(1)) and not named.group(1).endswith("'s"):
        name, species = named.group(1), kinds[-1].lower()
        yield cand(ctx, ("pet", name.lower()), "fact", f"The user has {a_noun(species)} named {name}.",
                   entities=("user", name), value="alive", salience=0.7)


def rule_death(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(rf"(?:\bmy (?:old |little )?(?P<rel>{SPECIES}|{FAMILY_RELS}|{PARTNER_RELS}|friend),? )?"
                  rf"(?P<name>{NAME} )?(?:has )?(?:died|passed away|passed on)\b", s, _Q)
    if not m or not (m.group("rel") or is_name((m.group("name") or "").strip())):
        return
    name = (m.group("name") or "").strip()
    hit = find_date(s, ctx.msg.ts.date())
    when = hit.start if hit and hit.past else ctx.msg.ts.date()
    rel = m.group("rel") or relation_of(name, ctx)
    who = " ".join(x for x in (f"The user's {rel}" if rel else "", name) if x) or "Someone close to the user"
    slot = ("pet", name.lower()) if name and has_slot(ctx, ("pet", name.lower())) else ("death", (name or rel or "someone").lower())
    yield cand(ctx, slot, "event", f"{who} died on {when.isoformat()}.", value="died",
                entities=("user", name) if name else ("user",), salience=0.95, valid_from=when)


_HOME_KINDS = r"flat|house|place|apartment|home|bungalow|cottage|condo|studio"
_NEAR = r"(?P<near>just outside|outside|near|on the outskirts of|just north of|just south of)"
_MOVED = (rf"\b(?:I|we)(?:'ve| have)? (?:just |finally |recently |officially |actually )?(?:moved|relocated)(?: house)? "
          rf"(?:to|into (?:a|an|our|the|my) (?:new |little |tiny )?(?:{_HOME_KINDS}) in)"
          rf" (?:{_NEAR} )?(?P<place>{NAMES})")
_LIVE = (rf"(?:\b(?:I|we)(?:'ve| have)? (?:been |now |still |currently |both |actually )?"
         rf"(?:live|living|'re living|are living|'m living|am living)|"
         rf"\b(?:years|months|decades) (?:of )?living)"
         rf" (?:in |{_NEAR} )(?P<place>{NAMES})")


def rule_home(s: str, ctx: Context) -> Iterator[Candidate]:
    """Where the user lives: "I live in X", "we live just outside X", "six years living in X",
    "we moved to X" / "we moved into a flat in X" (a move is an update of the one home slot)."""
    moved = re.search(_MOVED, s, _Q)
    m = moved or re.search(_LIVE, s, _Q)
    if m is None or not is_name(m.group("place").split()[0]) or m.group("place").lower() in MONTHS:
        return
    place = m.group("place")
    near = m.group("near")
    body = f"The user lives {near.lower()} {place}" if near else f"The user lives in {place}"
    if moved:
        body += f" (moved there by {ctx.msg.ts.date().isoformat()})"
    yield cand(ctx, ("home", ""), "fact", body + ".", value=place.lower(), entities=("user", place),
               salience=0.7)


def rule_birthday(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(rf"\bmy birthday(?: is|'s)(?: on)? ((?:{MONTH_RE}) \d{{1,2}}|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{MONTH_RE}))",
                  s, _Q)
    if m:
        day = re.sub(r"(\d)(st|nd|rd|th)", r"\1", m.group(1)).title()
        yield cand(ctx, ("birthday", ""), "fact", f"The user's birthday is {day}.", value=day.lower(),
                    salience=0.8)


def rule_health(s: str, ctx: Context) -> Iterator[Candidate]:
    for a in re.finditer(r"\ballergic to ([a-z][a-z -]*?)" + END + r"|\b(?:a|an|my) ([a-z]+) allergy\b", s, _Q):
        item = FILLER_TAIL.sub("", (a.group(1) or a.group(2) or "").strip())
        if item and item.lower() not in {"serious", "severe", "bad", "mild", "terrible", "real", "huge", "food"}:
            yield cand(ctx, ("allergy", norm_key(item)), "fact", f"The user is allergic to {item}.",
                        value="yes", salience=0.9)
    m = re.search(rf"\b(?:diagnosed with|I have|I've got|I suffer from|I live with|I struggle with) ({CONDITIONS})\b", s, _Q)
    if m:
        when = f" (diagnosed by {ctx.msg.ts.date().isoformat()})" if "diagnos" in s.lower() else ""
        yield cand(ctx, ("health", norm_key(m.group(1))), "fact", f"The user has {m.group(1).lower()}{when}.",
                    value="yes", salience=0.9)
    m = re.search(r"\bI(?:'m| am) (celiac|coeliac|diabetic|asthmatic|epileptic|autistic|dyslexic|deaf|"
                  r"hard of hearing|colorblind|colourblind|bipolar|pregnant|anemic|anaemic)\b", s, _Q)
    if m:
        yield cand(ctx, ("health", norm_key(m.group(1))), "fact", f"The user is {m.group(1).lower()}.",
                    value="yes", salience=0.9)
    m = re.search(rf"\bI(?:'m| am) (?:a )?({DIETS})\b", s, _Q)
    if m:
        yield cand(ctx, ("diet", ""), "fact", f"The user is {m.group(1).lower()}.", value=m.group(1).lower(),
                    salience=0.7)
    m = re.search(r"\b(?:I've been|I have been|I am|I'm) sober(?: for ([\w ]+?))?(?=[,.!?]|$| now)", s, _Q)
    if m:
        span = f"has been sober for {m.group(1)} as of {ctx.msg.ts.date().isoformat()}" if m.group(1) else "is sober"
        yield cand(ctx, ("sober", ""), "fact", f"The user {span}.", value="sober", salience=0.85)


def rule_injury(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bI (?:hurt|injured|broke|sprained|tore|twisted|pulled|fractured) my ([a-z]+)", s, _Q)
    if m:
        body = tidy(third_person(s))[:-1] + f" (said on {ctx.msg.ts.date().isoformat()})."
        yield cand(ctx, ("injury", m.group(1).lower()), "event", body, value="hurt", salience=0.7,
                    valid_from=ctx.msg.ts.date())


def rule_milestone(s: str, ctx: Context) -> Iterator[Candidate]:
    """Accomplishments: events the user will expect remembered (a relative's health news is
    ``people.rule_family_health``)."""
    m = re.search(r"(?:^|\bI (?:just |finally )?)(passed|aced|graduated|got into|got promoted|got the job|won|"
                  r"(?:finished|completed) (?:my |the |a )?(?:\w+ ){0,2}?(?:course|class|degree|diploma|"
                  r"certificate|thesis|dissertation|apprenticeship|training|program|programme|first draft))\b"
                  r"(?! away)(?!'t)", s, _Q)
    if m is None:
        return
    text = tidy(third_person(s))[:-1] + f" (said on {ctx.msg.ts.date().isoformat()})."
    yield cand(ctx, ("event", norm_key(m.group(1))), "event", text, value="yes", salience=0.75,
               valid_from=ctx.msg.ts.date(), entities=("user", *names_in(" " + s)))


def rule_learning(s: str, ctx: Context) -> Iterator[Candidate]:
    """"I'm learning Spanish": a slot per subject, so dropping it later can supersede the card."""
    m = re.search(r"\bI(?:'m| am| have been|'ve been) (?:learning|studying|taking (?:\w+ )?(?:lessons|classes) in) "
                  r"([a-z][\w' -]*?)" + END, s, _Q)
    if m and (obj := object_phrase(m.group(1))) and len(obj.split()) <= 3:
        yield cand(ctx, ("habit", norm_key(obj)), "fact", f"The user is learning {obj}.", value="learning",
                   salience=0.6)


_VERB3 = {"cycle": "cycles", "bike": "bikes", "walk": "walks", "run": "runs", "drive": "drives", "commute": "commutes"}


def rule_commute(s: str, ctx: Context) -> Iterator[Candidate]:
    """How the user gets to work or school: "I cycle to work", "I take the train into the office"."""
    m = re.search(r"\bI (?:usually |always |normally |just |now |mostly )?(cycle|bike|walk|run|drive|commute|"
                  r"take the (?:bus|train|tube|subway|metro|ferry))(?: to| into| in to) (work|school|uni|college|"
                  r"the office|class)\b", s, _Q)
    if m:
        verb = m.group(1).lower()
        said = _VERB3.get(verb) or verb.replace("take", "takes", 1)
        yield cand(ctx, ("commute", ""), "fact", f"The user {said} to {m.group(2).lower()}.", value=verb,
                   salience=0.55)


_SICKNESS = (r"seasick|carsick|airsick|travel sick|motion sick(?:ness)?|migraines|hay ?fever|cold sores|"
             r"nosebleeds|panic attacks|nightmares")


def rule_sickness(s: str, ctx: Context) -> Iterator[Candidate]:
    """Recurring bodily facts said as "I get X": "I get seasick on anything bigger than a bathtub"."""
    m = re.search(rf"\bI (?:always |usually |easily |often |still )?get (?:really |so |very )?({_SICKNESS})\b[^,.!?;]*", s, _Q)
    if m:
        yield cand(ctx, ("health", norm_key(m.group(1))), "fact", tidy(third_person(m.group(0))), value="yes",
                   salience=0.75)


_UNWELL = r"sick|ill|unwell|poorly|at the vet|in hospital|in the hospital|not eating|limping|diagnosed"


def rule_known_unwell(s: str, ctx: Context) -> Iterator[Candidate]:
    """A pet or person the cards already know, now unwell: "Olive has been sick all week"."""
    for m in re.finditer(rf"\b({NAME}) (?:has been|is|'s|was|got|seems|is still) (?:really |so |very |a bit )?"
                         rf"({_UNWELL})\b", s):
        name = m.group(1)
        if relation_of(name, ctx) is None:
            continue
        body = tidy(third_person(s))[:-1] + f" (said on {ctx.msg.ts.date().isoformat()})."
        yield cand(ctx, ("event", f"unwell:{name.lower()}"), "event", body, value="yes", salience=0.8,
                   valid_from=ctx.msg.ts.date(), entities=("user", name))
        return
