"""Walking an evicted window: sentence rules per user message, emotions, then de-duplication.

The walk keeps a little state across messages (people just named, the last two user
messages) so "we" and a reschedule can be read in context; the assistant's messages only
contribute its own dated promises. ``dedupe`` leaves one candidate per thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from memfs.agent.dream.ops import CloseOp, MessageLike
from memfs.agent.dream.rules.base import Candidate, Context, SlotValue, introduce, partner_name
from memfs.agent.dream.rules.lexicon import EMOTIONS, HYPOTHETICAL
from memfs.agent.dream.rules.plans import find_closes, moved_from, plan_match, rule_promise
from memfs.agent.dream.rules.registry import card_slots, sentence_candidates
from memfs.agent.dream.rules.text import content_words, names_in, sentences, third_person, tidy

from memfs.cards import Card


def walk(window: Sequence[MessageLike], active: Sequence[Card],
         slots: Callable[[Card], list[SlotValue]] = card_slots,
         strict: bool = False) -> tuple[list[Candidate], list[CloseOp]]:
    """Candidates and closes from every message of ``window``; ``slots`` reads existing cards;
    ``strict``: see ``Context.strict``."""
    cands: list[Candidate] = []
    closes: list[CloseOp] = []
    partner = partner_name(active, slots)
    people: list[str] = [partner] if partner else []
    prev: list[tuple[MessageLike, list[Candidate]]] = []
    for msg in window:
        prior = [(m.content, cs) for m, cs in prev[-2:]]
        if msg.role != "user":
            ctx = Context(msg, active, people, slots=slots, prior=prior)
            cands += [c for s in sentences(msg.content) for c in rule_promise(s, ctx)]
            continue
        ctx = Context(msg, active, people, prior_text=" ".join(m.content for m, _ in prev[-2:]),
                      slots=slots, prior=prior, strict=strict)
        found: list[Candidate] = []
        for s in sentences(msg.content):
            got = sentence_candidates(s, ctx)
            found += got
            if not any(c.target for c in got):
                closes += find_closes(s, ctx)
        found += _emotion(msg, found, prev, ctx)
        prev.append((msg, found))
        cands += found
    return cands, closes


def _emotion(msg: MessageLike, found: list[Candidate],
             prev: list[tuple[MessageLike, list[Candidate]]], ctx: Context) -> list[Candidate]:
    """Strong feelings raise the salience of what they are about; alone, they are an event.

    What they are about: this message's or the last two messages' cards, else an event (a fall,
    a loss) a few messages back in the same session ("Grandad had a fall" ... "I am scared").
    Alone, the card tells the moment with all of this message's sentences (the situation is
    usually there), after the message before it when that one said something and became no card."""
    hits = [s for s in sentences(msg.content) if EMOTIONS.search(s) and not HYPOTHETICAL.search(s)
            and not s.rstrip().endswith("?") and not _someone_elses(s)]
    if not hits:
        return []
    same = [(m, cs) for m, cs in prev if m.session == msg.session]
    near = found + [c for _, cs in same[-2:] for c in cs]
    near = [c for c in near if c.type != "preference"] or [c for _, cs in same[-4:] for c in cs if c.type == "event"]
    for c in near:
        c.salience = max(c.salience, 0.9)
    if near:
        return []
    told = sentences(msg.content)
    context = ""
    if same and same[-1][0] is prev[-1][0] and not prev[-1][1] and len(content_words(prev[-1][0].content)) >= 3:
        context = prev[-1][0].content.rstrip(" .!?") + ". "
    said = [third_person(p) for p in sentences(context + " ".join(told if len(told) > len(hits) else hits))]
    text = tidy(" ".join(p[:1].upper() + p[1:] for p in said))
    text = introduce(text, names_in(" " + text), ctx)
    return [Candidate(slot=("event", f"{msg.session}:{msg.turn}"), type="event",
                      body=f"On {msg.ts.date().isoformat()}: {text}", msg=msg, salience=0.9,
                      valid_from=msg.ts.date(), entities=("user", *names_in(" " + text)),
                      turns={m.turn for m, _ in prev[-1:] if context})]


_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|myself|we|we're|us)\b", re.IGNORECASE)
_THIRD_SUBJECT = re.compile(r"\b(?i:he|she|they|he's|she's|they're)\b|\b[A-Z][a-z]+ (?:is|was|'s|got|looked|seemed)\b")


def _someone_elses(s: str) -> bool:
    """"my flatmate Jonas is devastated" is Jonas's feeling, not the user's."""
    third = _THIRD_SUBJECT.search(s)
    if third is None:
        return False
    return not _FIRST_PERSON.search(re.sub(r"\bmy \w+", "", s[third.start():] + " " + s[:third.start()]))


def _same_thing(a: Candidate, b: Candidate) -> bool:
    if a.slot != b.slot:
        return False
    return a.slot[0] != "plan" or bool(a.words & b.words) or (a.target is not None and a.target == b.target)


def _fold_moves(cands: list[Candidate]) -> list[Candidate]:
    """A reschedule of a plan told earlier in the same window ("dentist on Thursday 15th" ...
    "my appointment got moved to Friday") replaces that plan instead of becoming a second one."""
    out: list[Candidate] = []
    for c in cands:
        earlier = [(plan_match(c.words, c.entities[1:], o.body, o.entities[1:]), i) for i, o in enumerate(out)
                   if c.moved and c.target is None and o.type == "plan" and o.expires != c.expires]
        score, at = max(earlier, default=(0, -1))
        if score <= 0:
            out.append(c)
            continue
        old = out.pop(at)
        c.body = moved_from(c.body, old.body, old.expires, old.entities[1:])
        c.entities = tuple(dict.fromkeys((*c.entities, *old.entities)))
        c.words, c.turns = c.words | old.words, c.turns | old.turns
        out.append(c)
    return out


def dedupe(cands: list[Candidate]) -> list[Candidate]:
    """One candidate per thing: repeats merge, a later value wins, and an ending ("I quit")
    followed by a new value ("I start at X") is kept as its own event."""
    out: list[Candidate] = []
    for c in _fold_moves(cands):
        same = next((o for o in out if _same_thing(o, c)), None)
        if same is None:
            out.append(c)
        elif same.ends and not c.ends:
            same.slot = ("event", f"ended:{same.slot[0]}")
            out.append(c)
        elif same.value == c.value or c.slot[0] == "plan":
            same.turns |= c.turns
            same.salience = max(same.salience, c.salience)
        else:
            c.turns |= same.turns
            out[out.index(same)] = c
    return out
