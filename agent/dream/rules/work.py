"""Rules for work: a job (now or starting), a promotion, and leaving a job.

The job is one slot: a new role or employer supersedes the card holding the old one, and
leaving ("I handed in my notice") ends it, so a new job after quitting keeps both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memfs.agent.dream.dates import find_date, iso_label
from memfs.agent.dream.rules.base import Candidate, Context, a_noun, cand
from memfs.agent.dream.rules.lexicon import END, JOBS, NAMES, WORKPLACES
from memfs.agent.dream.rules.text import norm_key, sentences, third_person, tidy

_Q = re.IGNORECASE
_START = r"\bI (?:start|'m starting|am starting|begin|'ll start|will start|'ll be starting)"
_ROLE_END = r"(?=\s+(?:on|in|next|from|this|starting)\b|[,.!?]|$)"
_PLACE = (rf"(?:a|an|the|this|that|a local|my local|our local) (?:[\w'-]+ ){{0,3}}?(?:{WORKPLACES})\b"
          rf"(?: (?:on|in|near|off|by) (?:the )?{NAMES}| down the road| round the corner| in town)?")
"""A workplace named by what it is: "a bakery", "the café on Mill Road", "a garden centre"."""
_NOT_ROLES = r"(?!(?:bit|little|lot|regular|member|customer|guest|patient|fan|visitor|mess|wreck|total|huge|big)\b)"
_JOB_PATTERNS = (
    (True, rf"{_START} (?:a new job |work |my new job )?(?:[^,.!?]{{0,24}}? )??as (?:a|an) (?P<role>[a-z][a-z -]*?)"
           rf"(?: at (?P<org>{NAMES}))?{_ROLE_END}"),
    (False, rf"\bI (?:work|am working|'m working) as (?:a|an) (?P<role>[a-z][a-z -]*?)(?: at (?P<org>[^,.!?]+?))?{END}"),
    (False, rf"\bI(?:'m| am) (?:now |currently |still )?(?:a|an) {_NOT_ROLES}(?P<role>[a-z][a-z-]*(?: [a-z-]+){{0,2}}?) "
            rf"(?:at|in) (?P<org>{_PLACE})"),
    (False, rf"\bI(?:'m| am) (?:a|an) (?P<role>(?:[a-z-]+ ){{0,2}}?(?:{JOBS}))\b(?: at (?P<org>{NAMES}))?"),
    (False, rf"\bI (?:now |currently |still |also |actually )?(?:work|am working|'m working)"
            rf"(?: part[- ]time| full[- ]time| nights| weekends)? (?:at|in|for) (?P<org>{_PLACE})"),
    (False, rf"\bI (?:now |currently |still |actually )?(?:work|am working|'m working) (?:at|for) "
            rf"(?P<org>(?!(?:Christmas|Easter|Weekends|Night|Home)\b){NAMES})"),
    (True, rf"{_START} (?:a new job |work |working |my new job )?at (?P<org>(?:the )?[A-Za-z][\w&' -]*?)"
           r"(?=\s+(?:on|in|next|from|this|tomorrow)\b|[,.!?]|$)"),
)
_JOB_TALK = re.compile(r"\b(?:job|position|role|hired|offer|contract|work)\b", re.IGNORECASE)


def rule_job(s: str, ctx: Context) -> Iterator[Candidate]:
    """The user's role and/or employer, with a start date when they are about to start."""
    for starting, pattern in _JOB_PATTERNS:
        m = re.search(pattern, s, _Q)
        if m is None:
            continue
        role, org = (m.groupdict().get("role") or "").strip(), (m.group("org") or "").strip()
        if starting and not role and not (org[:1].isupper() or _JOB_TALK.search(ctx.msg.content + " " + ctx.prior_text)):
            continue
        body = f"The user works as {a_noun(role)}" if role else "The user works"
        body += f" at {org}" if org else ""
        hit = find_date(s[m.start():], ctx.msg.ts.date()) if starting else None
        if hit and not hit.past:
            body += f" (starting {iso_label(hit)})"
        yield cand(ctx, ("job", ""), "fact", body + ".", value=norm_key(role or org), salience=0.7,
                   entities=("user", org) if org[:1].isupper() else ("user",),
                   valid_from=hit.start if hit and not hit.past else None)
        return
    yield from _promoted(s, ctx)


def _promoted(s: str, ctx: Context) -> Iterator[Candidate]:
    """"I got promoted to team lead" or "I got promoted! team lead on the payments squad"."""
    m = re.search(r"\bI (?:just |finally )?(?:got|was|have been|'ve been) promoted\b(?: to (?:a |an )?(?P<role>[^,.!?]+))?",
                  s, _Q)
    if m is None:
        return
    told = m.group("role")
    if told is None:
        after = sentences(ctx.msg.content[ctx.msg.content.find(s) + len(s):])
        told = after[0] if after else ""
    said = told.split(",")[0].strip(" .!")
    role = re.split(r"\s+(?:on|at|for|in|with)\s+", said, maxsplit=1)[0]
    if not role or len(role.split()) > 4 or re.match(r"(?:I|it|that|so|and|we|they|he|she)\b", role, _Q):
        return
    hit = find_date(told, ctx.msg.ts.date())
    body = f"The user got promoted to {third_person(said)}"
    if hit and not hit.past:
        body += f" (starting {iso_label(hit)})"
    yield cand(ctx, ("job", ""), "fact", tidy(body), value=norm_key(role), salience=0.75,
               valid_from=hit.start if hit and not hit.past else ctx.msg.ts.date())


def rule_quit(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bI (?:just |finally |officially )?(?:(?:quit|left) (?:my job|my position|work\b|the company)|"
                  r"resigned|handed in my notice|gave my notice|put in my notice|got fired|was fired|"
                  r"got laid off|was laid off|lost my job)", s, _Q)
    if m:
        body = tidy(third_person(s))[:-1] + f" (said on {ctx.msg.ts.date().isoformat()})."
        yield cand(ctx, ("job", ""), "event", body, value="quit", ends=True, salience=0.75,
                   valid_from=ctx.msg.ts.date())
