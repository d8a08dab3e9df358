"""The offline dream extractor: deterministic rules, no model.

Used when no LLM is configured, by the demo and by tests. It is honest about being weaker
than a model: it only recognises the patterns below, in English. What it does recognise,
it handles the way the model is told to (see templates/dream_prompt.md):

- only what the *user* said becomes a card (plus promises the assistant made to the user);
  hypotheticals ("if I had a cat..."), questions and small talk ("I had pasta") never do;
- each card is written in the third person so it makes sense alone weeks later;
- plans carry absolute dates computed from the message timestamp, and unfinished plans
  become cards (they are what a summary rewrite silently drops);
- a new value for a single-valued "slot" (job, home, partner, birthday, a plan's date)
  supersedes the active card holding the old one, instead of competing with it;
- an existing card is recognised by running the same sentence rules over its body read
  back in the first person, so cards written by a model or by hand match too.

Precision matters as much as recall: every extra card is a distractor at retrieval time.

Layout: ``dates`` resolves dates, ``rules/`` holds the sentence rules (``rules.registry``
lists them), ``window`` walks the messages, ``summary`` rewrites the summary; this module
turns candidates into ops against the existing cards. ``find_date``, ``third_person``,
``card_slots`` and ``rewrite_summary`` are re-exported here for older callers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence

from memfs.agent.dream.dates import ROUTINE, find_date
from memfs.agent.dream.ops import (
    CloseOp,
    ExpireOp,
    Extraction,
    MergeOp,
    MessageLike,
    Op,
    SupersedeOp,
    WriteOp,
    op_targets,
)
from memfs.agent.dream.rules.base import Candidate, SlotValue
from memfs.agent.dream.rules.registry import card_slots, slots_reader
from memfs.agent.dream.rules.text import content_words, names_in, norm_key, third_person
from memfs.agent.dream.summary import rewrite_summary, same_fact
from memfs.agent.dream.window import dedupe, walk

from memfs.cards import Card
from memfs.embed import Embedder

__all__ = ["OfflineExtractor", "card_slots", "extract_offline", "find_date", "rewrite_summary", "third_person"]

Slots = Callable[[Card], list[SlotValue]]


def _same_value(a: str, b: str) -> bool:
    na, nb = norm_key(a), norm_key(b)
    return na == nb or na.startswith(nb + " ") or nb.startswith(na + " ")


def _plan_dup(c: Candidate, card: Card) -> bool:
    return card.expires == c.expires and bool(c.words & content_words(card.body))


def _draft(c: Candidate, old: Card | None = None) -> dict[str, object]:
    body = c.body  # a superseding card reads as a fact on its own; ``supersedes`` links the old one
    if old is not None and (c.ends or c.value == "died"):
        body = f"{body.rstrip('.')} (what ended: {old.body.rstrip('.')[:1].lower()}{old.body.rstrip('.')[1:]})."
    entities = ("user", *c.entities[1:], *(old.entities[1:] if old is not None and c.ends else ()))
    return {"type": c.type, "body": body, "entities": tuple(dict.fromkeys(entities)),
            "salience": round(c.salience, 2), "valid_from": c.valid_from, "expires": c.expires,
            "turns": tuple(sorted(c.turns)), "session": c.msg.session}


def _resolve_one(c: Candidate, active: Sequence[Card], used: set[str], slots: Slots) -> Op | None:
    by_id = {card.id: card for card in active}
    if c.target is not None:
        return None if c.target in used else SupersedeOp(old_id=c.target, **_draft(c, by_id[c.target]))  # type: ignore[arg-type]
    if c.slot[0] == "plan":
        return None if any(_plan_dup(c, card) for card in active) else WriteOp(**_draft(c))  # type: ignore[arg-type]
    holders = [(card, value) for card in active for slot, value in slots(card) if slot == c.slot]
    if any(_same_value(value, c.value) for _, value in holders):
        return None
    old = next((card for card, _ in holders if card.id not in used), None)
    if old is not None:
        return SupersedeOp(old_id=old.id, **_draft(c, old))  # type: ignore[arg-type]
    return WriteOp(**_draft(c))  # type: ignore[arg-type]


def _merges(active: Sequence[Card], used: set[str], slots: Slots) -> Iterator[MergeOp]:
    """Two active cards asserting the same slot and value become one."""
    groups: dict[tuple[tuple[str, str], str], list[Card]] = {}
    for card in active:
        found = slots(card)
        if card.id not in used and card.type != "plan" and found:
            groups.setdefault((found[0][0], norm_key(found[0][1])), []).append(card)
    for same in groups.values():
        if len(same) < 2:
            continue
        keep = max(same, key=lambda c: (c.salience, len(c.body)))
        entities = tuple(dict.fromkeys(e for c in same for e in c.entities))
        yield MergeOp(ids=tuple(c.id for c in same), type=keep.type, body=keep.body, entities=entities,
                      salience=max(c.salience for c in same), valid_from=keep.valid_from, expires=keep.expires)


def extract_offline(window: Sequence[MessageLike], cards: Sequence[Card], summary: str,
                    now: dt.datetime, strict: bool = False) -> Extraction:
    """Decide, by rules, what of ``window`` survives: a new summary and card ops.

    ``cards`` are the pair's cards (only ``active`` ones are considered); ``now`` is when the
    dream runs (plans whose ``expires`` is before its date are expired). ``strict`` gates the
    rules that cost precision (``rules.base.Context.strict``); the shipped extractor uses it.
    """
    today = now.date()
    active = [c for c in cards if c.status == "active"]
    slots = slots_reader(active)
    cands, closes = walk(window, active, slots, strict)
    ops: list[Op] = []
    used: set[str] = set()
    pending: list[CloseOp | Candidate] = [*closes, *dedupe(cands)]
    for candidate in pending:
        op = candidate if isinstance(candidate, CloseOp) else _resolve_one(candidate, active, used, slots)
        if op is not None and not set(op_targets(op)) & used:
            ops.append(op)
            used |= set(op_targets(op))
    for merge in _merges(active, used, slots):
        ops.append(merge)
        used |= set(merge.ids)
    ops += [ExpireOp(id=c.id) for c in active if c.id not in used and c.expires and c.expires < today]
    return Extraction(summary=rewrite_summary(summary, window, ops, active, today), ops=ops)


class OfflineExtractor:
    """The offline extractor as dreaming uses it: the learned extractor behind the strict rules.

    Every user message the rules found nothing in goes to the learned extractor
    (``learned.LearnedExtractor``: classifiers over sentence embeddings, fitted on the dev
    windows, no dependence on wording). The rules run strict (``Context.strict``: the gated
    rules and other people's plans write nothing); under the leave-one-split-out estimate
    (``bench/extract_loso.py``, issue 13's third round) they add a little recall on the
    splits they were not written from and keep reschedules, closes and supersedes (see
    BENCHMARKS.md). A learned card that repeats a card of this dream or an active one is
    dropped (``_known``). Without an embedder (``embedder=None``) only the rules run,
    unstrict: nothing else would catch an allergy.
    """

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder

    def __call__(self, window: Sequence[MessageLike], cards: Sequence[Card], summary: str,
                 now: dt.datetime) -> Extraction:
        ruled = extract_offline(window, cards, summary, now, strict=self.embedder is not None)
        if self.embedder is None:
            return ruled
        from memfs.agent.dream.learned import LearnedExtractor

        learned = LearnedExtractor(self.embedder)(window, cards, summary, now)
        both = combine(ruled, learned, window, cards, summary, now)
        from memfs.agent.dream.change import with_flags

        flagged = with_flags(both, window, cards, self.embedder)
        if flagged is both:
            return both
        active = [c for c in cards if c.status == "active"]
        return Extraction(summary=rewrite_summary(summary, window, flagged.ops, active, now.date()), ops=flagged.ops)


def combine(ruled: Extraction, semantic: Extraction, window: Sequence[MessageLike], cards: Sequence[Card],
            summary: str, now: dt.datetime) -> Extraction:
    """The rules' ops, then each learned (or embedding) op on a message the rules wrote nothing
    from and on a card no earlier op touched; the summary is rewritten from the result. A rule's
    plan that is a routine ("spin class every Tuesday") is dropped: a routine is a standing
    fact, which the learned extractor writes as one."""
    ops = [op for op in ruled.ops if not (isinstance(op, WriteOp) and op.type == "plan" and ROUTINE.search(op.body))]
    covered = {(op.session, t) for op in ops if isinstance(op, (WriteOp, SupersedeOp, MergeOp))
               for t in op.turns}
    used = {t for op in ops for t in op_targets(op)}
    active = [c for c in cards if c.status == "active"]
    for op in semantic.ops:
        if isinstance(op, (ExpireOp, MergeOp)):
            continue
        if isinstance(op, (WriteOp, SupersedeOp)) and any((op.session, t) in covered for t in op.turns):
            continue
        if isinstance(op, WriteOp) and _known(op, ops, active):
            continue
        if set(op_targets(op)) & used:
            continue
        ops.append(op)
        used |= set(op_targets(op))
    return Extraction(summary=rewrite_summary(summary, window, ops, active, now.date()), ops=ops)


def _known(op: WriteOp, ops: Sequence[Op], active: Sequence[Card]) -> bool:
    """A new embedding card that an op of this dream or an active card already says (most of
    its content words, ``summary.same_fact``; plans only when they share the date), or that
    names the same person or place as a card of the same type this dream already writes: the
    fact told again in other words is not a second card."""
    mine = [o for o in ops if isinstance(o, (WriteOp, SupersedeOp, MergeOp)) and o.type == op.type]
    bodies = [(o.body, o.expires) for o in mine] + [(c.body, c.expires) for c in active if c.type == op.type]
    if any(same_fact(op.body, body) for body, expires in bodies if op.type != "plan" or expires == op.expires):
        return True
    return op.type != "plan" and any(_name_words(op.body) & _name_words(o.body) for o in mine)


def _name_words(text: str) -> set[str]:
    return {w for name in names_in(text) for w in name.split()}
