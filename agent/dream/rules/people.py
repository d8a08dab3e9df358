"""Rules for the people in the user's life: family, partner, children and ages, roles, engagements, breakups."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memfs.agent.dream.dates import find_date, with_dates
from memfs.agent.dream.rules.base import Candidate, Context, cand, is_name, partner_name
from memfs.agent.dream.rules.lexicon import (
    FAMILY_RELS,
    HEALTH_EVENTS,
    HYPOTHETICAL,
    KIN_ADJECTIVES,
    NAME,
    PARTNER_RELS,
)
from memfs.agent.dream.rules.text import names_in, norm_key, sentences, third_person, tidy

_Q = re.IGNORECASE


def rule_family(s: str, ctx: Context) -> Iterator[Candidate]:
    """"my (little) brother Sami", "my wife Priya"; "I'm dating Chris" (not "seeing X on Friday")."""
    for f in re.finditer(rf"\bmy (?:({KIN_ADJECTIVES}) )?({FAMILY_RELS}|{PARTNER_RELS})(?:'s name is| is called| is named| named| called|,| is)? ({NAME})\b", s, _Q):
        adjective, rel, name = (f.group(1) or "").lower(), f.group(2).lower(), f.group(3)
        if not is_name(name) or name.endswith("'s"):
            continue
        partner = re.fullmatch(PARTNER_RELS, rel) is not None
        slot = ("partner", "") if partner else ("family", f"{rel}:{name.lower()}")
        said = f"{adjective} {rel}".strip()
        yield cand(ctx, slot, "relationship", f"The user's {said} is {name}.", value=name.lower(),
                   entities=("user", name), salience=0.75)
    m = re.search(rf"\b({NAME}) is my (?:(?:{KIN_ADJECTIVES}) )?({FAMILY_RELS})\b", s, _Q)
    if m and is_name(m.group(1)) and not m.group(1).endswith("'s"):
        rel, name = m.group(2).lower(), m.group(1)
        yield cand(ctx, ("family", f"{rel}:{name.lower()}"), "relationship", f"The user's {rel} is {name}.",
                   value=name.lower(), entities=("user", name), salience=0.75)
    m = re.search(rf"\bI(?:'m| am) (?:dating|seeing|married to|engaged to|in a relationship with) ({NAME})", s, _Q)
    if m and is_name(m.group(1)) and not _just_meeting(m, s, ctx):
        state = "engaged:" if "engaged" in m.group(0).lower() else ""
        verb = m.group(0).split(" ", 1)[1].replace("'m ", "").replace("am ", "")
        yield cand(ctx, ("partner", ""), "relationship", f"The user is {verb}.", value=state + m.group(1).lower(),
                   entities=("user", m.group(1)), salience=0.75)
    yield from _children(s, ctx)


def _just_meeting(m: re.Match[str], s: str, ctx: Context) -> bool:
    """"I'm seeing Lin on Friday for dinner" is a plan, not a partner; nor is "seeing Noor's parents"."""
    if "seeing" not in m.group(0).lower():
        return False
    rest = s[m.end(1):]
    return (m.group(1).endswith("'s") or rest.startswith("'s") or find_date(s, ctx.msg.ts.date()) is not None
            or re.match(r"\s+(?:for|at|about|later|again|soon|tonight|tomorrow)\b", rest, _Q) is not None)


_AGE = re.compile(rf"\b({NAME}) (?:is|'s|just turned|turned|turns|is turning|will be) (\d{{1,2}})\b"
                  r"(?!\s*(?:am|pm|:|%|k\b|mins?\b|minutes|hours|o'clock|st\b|nd\b|rd\b|th\b|\$|euros?|dollars|pounds))")
_KIN = re.compile(rf"\bmy (?:(?:{KIN_ADJECTIVES}) )?({FAMILY_RELS}|kids|children|boys|girls|sons|daughters|twins|"
                  rf"nephews|nieces|grandkids)\b(?:[^.!?]*?\b(?:her|his|their) (boys|girls|kids|sons|daughters|twins|"
                  r"little ones))?", re.IGNORECASE)


def rule_ages(s: str, ctx: Context) -> Iterator[Candidate]:
    """"Arjun is 7 and Dev just turned 4", after "my sister dropped her boys off": who they are and
    how old. Needs a kin word nearby (this sentence or the last messages) to know who they are."""
    ages = [(m.group(1), m.group(2)) for m in _AGE.finditer(s) if is_name(m.group(1)) and not m.group(1).endswith("'s")]
    if not ages or re.search(r"\b(?:kids|children)\b", s, _Q) or re.search(rf"\bmy (?:\w+ )?(?:{FAMILY_RELS}) {NAME} ", s, _Q):
        return
    kin = list(_KIN.finditer(ctx.prior_text + " " + ctx.msg.content))
    if not kin:
        return
    rel, theirs = kin[-1].group(1).lower(), kin[-1].group(2)
    who = f"the user's {rel}'s {theirs.lower()}" if theirs else f"the user's {rel}"
    listed = " and ".join(f"{name} ({age})" for name, age in ages)
    verb = "are" if len(ages) > 1 else "is"
    body = f"{listed} {verb} {who} (ages as of {ctx.msg.ts.date().isoformat()})."
    names = tuple(name for name, _ in ages)
    yield cand(ctx, ("family", f"ages:{','.join(sorted(n.lower() for n in names))}"), "relationship", body,
               value=",".join(ages_ for _, ages_ in ages), entities=("user", *names), salience=0.7)


_ROLES = (r"best man|maid of honou?r|matron of honou?r|bridesmaid|groomsman|godmother|godfather|godparent|"
          r"officiant|witness|ring bearer|flower girl|usher|pallbearer|guardian")


def rule_role(s: str, ctx: Context) -> Iterator[Candidate]:
    """A role the user was given at someone's event: "he asked me to be best man"."""
    m = re.search(rf"\b(?:({NAME}|he|she|they) )?(?:asked|invited|chose|picked|wants?) me to be (?:the |a |an |"
                  rf"his |her |their )?({_ROLES})\b", s, _Q) \
        or re.search(rf"\bI(?:'m| am|'ll be| will be| get to be) (?:the |a |an |his |her |their )?(?:({NAME})'s )?"
                     rf"({_ROLES})\b", s, _Q)
    if m is None:
        yield from _asked_to_help(s, ctx)
        return
    asker = m.group(1) or ""
    who = asker if is_name(asker) and asker.lower() not in ("he", "she", "they") else \
        (ctx.recent_people[-1] if ctx.recent_people else "")
    role = m.group(2).lower()
    body = f"The user is going to be {role}" + (f" for {who}" if who else "") + \
        f" (said on {ctx.msg.ts.date().isoformat()})."
    yield cand(ctx, ("role", f"{role}:{who.lower()}"), "fact", body, value="yes",
               entities=("user", who) if who else ("user",), salience=0.75)


def _children(s: str, ctx: Context) -> Iterator[Candidate]:
    if not re.search(r"\b(?:my|our) (?:\w+ )?(?:kids|children)\b|\b(?:I|we) have (?:\w+ )?(?:kids|children)\b", s, _Q) \
            or HYPOTHETICAL.search(s):
        return  # "my colleague Sara has two kids" is Sara's family, not the user's
    names = [n for n in names_in(s) if is_name(n)]
    if names:
        listed = " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]
        yield cand(ctx, ("children", ""), "relationship", f"The user has {len(names)} children: {listed}.",
                    value=",".join(sorted(n.lower() for n in names)), entities=("user", *names), salience=0.8)


def rule_partner_change(s: str, ctx: Context) -> Iterator[Candidate]:
    partner = partner_name(ctx.active, ctx.slots)
    engaged = re.search(rf"\b(?:({NAME}) proposed|we got engaged|I got engaged|we're engaged)\b", s, _Q)
    broke = re.search(rf"\b(?:we|({NAME}) and I|I and ({NAME})) (?:broke up|split up|separated|got divorced)|"
                      rf"\bI (?:broke up with|dumped) ({NAME})|({NAME}) (?:broke up with|dumped) me", s, _Q)
    date = ctx.msg.ts.date().isoformat()
    if engaged:
        name = engaged.group(1) if is_name(engaged.group(1)) else partner
        body = f"The user is engaged to {name} (since {date})." if name else f"The user got engaged (said on {date})."
        yield cand(ctx, ("partner", ""), "relationship", body, value=f"engaged:{(name or '').lower()}",
                    entities=("user", name) if name else ("user",), salience=0.95)
    elif broke:
        name = next((g for g in broke.groups() if is_name(g)), None) or partner
        body = f"The user and {name} broke up (said on {date})." if name else f"The user went through a breakup (said on {date})."
        yield cand(ctx, ("partner", ""), "relationship", body, value=f"broke up:{(name or '').lower()}",
                    entities=("user", name) if name else ("user",), salience=0.9)


def _asked_to_help(s: str, ctx: Context) -> Iterator[Candidate]:
    """A standing commitment someone gave the user: "my neighbour's kid asked me to tutor her"."""
    m = re.search(r"\b(?:asked|begged|hired|roped) me (?:in )?to (tutor|coach|mentor|babysit|teach|train|host|"
                  r"officiate|speak at|give a speech at|dog-sit|dogsit|house-sit|housesit|run)\b", s, _Q)
    if m is None or re.search(r"\b(?:no|not|never)\b[^.!?]*$", s[: m.start()], _Q):
        return
    body = tidy(third_person(re.sub(r"^(?:also|and|so|oh),?\s+", "", s.strip(), flags=_Q)))
    body = body[:-1] + f" (said on {ctx.msg.ts.date().isoformat()})."
    yield cand(ctx, ("role", norm_key(m.group(1) + " " + s[m.end():][:30])), "fact", body, value="yes",
               entities=("user", *names_in(" " + s)), salience=0.65)


_KIN_HEALTH = re.compile(
    rf"(?:\bmy (?:(?:{KIN_ADJECTIVES}) )?|^(?:(?:so|oh|and|but|also|sadly|ugh|well|update|bad news),?:?\s+)*)"
    rf"(?P<rel>{FAMILY_RELS}|{PARTNER_RELS})(?P<s>'s)?(?: (?P<name>{NAME}))?\b"
    rf"[^.!?]*?(?:\b|(?<=')|(?<=\s))(?P<what>{HEALTH_EVENTS})\b", re.IGNORECASE)
_GOES_ON = re.compile(r"^(?:and |but |so |now |apparently |they think |the doctors? (?:think|says?) )?"
                      r"(?:he|she|they|he's|she's|they're|his|her|their|it)\b", re.IGNORECASE)


_IS = re.compile(rf"\b({FAMILY_RELS}|{PARTNER_RELS})'s (been|in|got|having|back|still|now|just|really|very|so|quite|"
                 r"sick|ill|poorly|unwell|being)\b", re.IGNORECASE)
""""my brother's in hospital" is "my brother is in hospital" (the card must not read as a possessive)."""


def _not_possessive(g: re.Match[str]) -> str:
    return f"{g.group(1)} has been" if g.group(2).lower() == "been" else f"{g.group(1)} is {g.group(2)}"


def rule_family_health(s: str, ctx: Context) -> Iterator[Candidate]:
    """A relative's health news: "my nan had a fall and broke her wrist", "Grandad had a fall on
    Friday and he's in hospital", "my brother's in hospital with appendicitis".

    The card names the relative and what happened (with the sentences right after that go on
    about them: "They think he broke his hip."), and is salient: it is family and health."""
    m = _KIN_HEALTH.search(s)
    if m is None or (m.group("name") and not is_name(m.group("name"))):
        return
    head = s[m.start():]
    told = [head[head.lower().find("my "):] if head.lower().startswith("my ") else "my " + s[m.start("rel"):][:1].lower() + s[m.start("rel") + 1:]]
    rest = sentences(ctx.msg.content)
    for more in (rest[rest.index(s) + 1:] if s in rest else [])[:2]:
        if not _GOES_ON.search(more.strip()):
            break
        told.append(more[:1].upper() + more[1:])
    text = _IS.sub(_not_possessive, " ".join(told))
    hit = find_date(text, ctx.msg.ts.date())
    when = hit.start if hit is not None and hit.past else ctx.msg.ts.date()
    body = tidy(third_person(with_dates(text, hit if hit is not None and hit.past else None)))
    rel, name = m.group("rel").lower(), m.group("name") or ""
    yield cand(ctx, ("event", f"health:{rel}:{name.lower()}"), "event",
               f"{body[:-1]} (said on {ctx.msg.ts.date().isoformat()}).", value="yes", salience=0.85,
               valid_from=when, entities=("user", name) if name else ("user",))
