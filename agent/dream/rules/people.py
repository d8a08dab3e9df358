"""Rules for the people in the user's life: family, partner, children, engagements, breakups."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agent.dream.rules.base import Candidate, Context, cand, is_name, partner_name
from agent.dream.rules.lexicon import FAMILY_RELS, HYPOTHETICAL, NAME, PARTNER_RELS
from agent.dream.rules.text import names_in

_Q = re.IGNORECASE


def rule_family(s: str, ctx: Context) -> Iterator[Candidate]:
    for f in re.finditer(rf"\bmy ({FAMILY_RELS}|{PARTNER_RELS})(?:'s name is| is called| is named| named| called|,| is)? ({NAME})\b", s, _Q):
        rel, name = f.group(1).lower(), f.group(2)
        if not is_name(name):
            continue
        partner = re.fullmatch(PARTNER_RELS, rel) is not None
        slot = ("partner", "") if partner else ("family", f"{rel}:{name.lower()}")
        yield cand(ctx, slot, "relationship", f"The user's {rel} is {name}.", value=name.lower(),
                    entities=("user", name), salience=0.75)
    m = re.search(rf"\bI(?:'m| am) (?:dating|seeing|married to|engaged to|in a relationship with) ({NAME})", s, _Q)
    if m and is_name(m.group(1)):
        state = "engaged:" if "engaged" in m.group(0).lower() else ""
        verb = m.group(0).split(" ", 1)[1].replace("'m ", "").replace("am ", "")
        yield cand(ctx, ("partner", ""), "relationship", f"The user is {verb}.", value=state + m.group(1).lower(),
                    entities=("user", m.group(1)), salience=0.75)
    yield from _children(s, ctx)


def _children(s: str, ctx: Context) -> Iterator[Candidate]:
    if not re.search(r"\b(?:kids|children)\b", s, _Q) or HYPOTHETICAL.search(s):
        return
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
