"""The offline extractor: user sentences scored against prototypes, cards in the user's words.

No model is needed, only the embedding model the pair already has for search. Per user
sentence (and per clause of a long one):

1. score it against every class of ``data/prototypes.json`` (``prototypes.py``);
2. keep it when its best card class clears ``accept`` and beats the best negative class
   (trivia, sarcasm, hypotheticals, other people's facts, reported speech, hedges) by
   ``margin``; questions never count;
3. decide whose fact it is: a user class ("I'm allergic ...") needs the user as subject; a
   sentence about someone else ("my dad got diagnosed ...") can only be a card about that
   person, written so that it names them;
4. a future date resolved from the message's own time plus a plan-like sentence is a plan;
   a cancellation closes the active plan it is most similar to;
5. write the card extractively (``cardtext.py``), and set it against the active cards: a
   near-identical one means "already known"; the same single-valued slot (job, home,
   partner, name, pronouns) or the same slot and a high similarity means supersede.

Thresholds are calibrated on every split but the blind ones (``calibrate.py``); the blind splits (``extraction_eval.BLIND``: blind8 to blind41) are never used.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from memfs.agent.dream.cardtext import (
    clauses,
    first_person_anywhere,
    leans_on_previous,
    message_sentences,
    names_kin,
    someone_else_acts,
    speaks_of_user,
    told_of_someone_else,
    write_body,
)
from memfs.agent.dream.dates import DateHit, find_date, looks_past
from memfs.agent.dream.ops import (
    CloseOp,
    ExpireOp,
    Extraction,
    MergeOp,
    MessageLike,
    Op,
    SupersedeOp,
    WriteOp,
)
from memfs.agent.dream.prototypes import Prototypes, Scores, Thresholds, load_prototypes
from memfs.agent.dream.rules.lexicon import HEDGE, HYPOTHETICAL
from memfs.agent.dream.rules.text import first_person, names_in
from memfs.agent.dream.summary import rewrite_summary

from memfs.cards import Card
from memfs.embed import Embedder

PERSONAL = {"family", "partner", "family_event", "pet", "boundary"}
"""Classes a sentence may yield when the user is not its subject (a card about that person or
pet, which names them); it still has to be the user speaking of their own ("my", "I", "me")."""
TASTES = {"like", "dislike"}


@dataclass
class Unit:
    """A sentence (or clause) of a user message, with what the extractor learnt about it."""

    msg: MessageLike
    text: str
    sentence: str
    context: str
    scores: Scores | None = None
    date: DateHit | None = None


@dataclass
class Cand:
    """A card this window proposes, before it meets the existing cards."""

    cls: str
    type: str
    body: str
    msg: MessageLike
    salience: float
    vector: np.ndarray
    entities: tuple[str, ...] = ("user",)
    expires: dt.date | None = None
    valid_from: dt.date | None = None
    turns: set[int] = field(default_factory=set)
    slot: float = 1.0
    """The sentence's prototype score for ``cls`` ..."""
    lead: float = 1.0
    """... and how far it beats its best other slot: a single-valued slot is replaced only by a
    sentence that clearly reads as it (``Thresholds.single``, ``single_margin``)."""
    own: bool = True
    """Is the sentence the user's, not told of someone else (``cardtext.told_of_someone_else``)?
    Only then may it replace the user's name, pronouns, job or home whatever the similarity:
    "my mate's relocating to coimbra" reads as a home, but not the user's (stop 34, s-owner2)."""
    sentence: str = ""
    """The user's sentence the card was written from, when one was (``learned.name_people`` reads
    the messages before it)."""
    standing: bool = True
    """A profile line as well as a card (``CardDraft.standing``)? The learned extractor says no
    for one past episode or a sentence without the user in it."""


class SemanticExtractor:
    """``extractor(window, cards, summary, now) -> Extraction`` backed by an embedder."""

    def __init__(self, embedder: Embedder, thresholds: Thresholds | None = None) -> None:
        self.embedder = embedder
        self.thresholds = thresholds

    def __call__(self, window: Sequence[MessageLike], cards: Sequence[Card], summary: str,
                 now: dt.datetime) -> Extraction:
        protos = load_prototypes(self.embedder, thresholds=self.thresholds)
        active = [c for c in cards if c.status == "active"]
        units = _units(window)
        texts = [u.text for u in units] + [first_person(c.body) for c in active]
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32) if texts else np.zeros((0, 1))
        unit_vecs, card_vecs = vectors[: len(units)], vectors[len(units):]
        for unit, scores in zip(units, protos.score(unit_vecs), strict=True):
            unit.scores = scores
        card_classes = [s.best()[0] for s in protos.score(card_vecs)]
        cands, closes = self.propose(window, units, unit_vecs, protos, active, card_vecs)
        single = frozenset(name for name, cls in protos.classes.items() if cls.single)
        ops = _resolve(_dedupe(cands, protos.thresholds), active, card_vecs, card_classes, protos.thresholds, single)
        used = {t for op in ops for t in _targets(op)}
        ops += [c for c in closes if c.id not in used]
        used |= {c.id for c in closes}
        ops += list(_merges(active, card_vecs, used, protos.thresholds))
        used |= {i for op in ops if isinstance(op, MergeOp) for i in op.ids}
        ops += [ExpireOp(id=c.id) for c in active
                if c.id not in used and c.expires is not None and c.expires < now.date()]
        return Extraction(summary=rewrite_summary(summary, window, ops, active, now.date()), ops=ops)

    def propose(self, window: Sequence[MessageLike], units: list[Unit], unit_vecs: np.ndarray,
                protos: Prototypes, active: Sequence[Card], card_vecs: np.ndarray) -> tuple[list[Cand], list[CloseOp]]:
        """The candidate cards and closes of this window (the learned extractor overrides it)."""
        return _candidates(units, unit_vecs, protos, active, card_vecs)


def _units(window: Sequence[MessageLike]) -> list[Unit]:
    units: list[Unit] = []
    previous = ""
    for msg in window:
        if msg.role != "user":
            continue
        said = message_sentences(msg.content)
        for i, sentence in enumerate(said):
            before = said[i - 1] if i else previous
            context = before if leans_on_previous(sentence) else ""
            units.append(Unit(msg, sentence, sentence, context))
            units += [Unit(msg, part, sentence, context) for part in clauses(sentence)]
        previous = said[-1] if said else previous
    return units


def _candidates(units: Sequence[Unit], vecs: np.ndarray, protos: Prototypes, active: Sequence[Card],
                card_vecs: np.ndarray) -> tuple[list[Cand], list[CloseOp]]:
    th = protos.thresholds
    cands: list[Cand] = []
    closes: list[CloseOp] = []
    plans = [i for i, c in enumerate(active) if c.type == "plan" or c.expires is not None]
    for unit, vec in zip(units, vecs, strict=True):
        scores = unit.scores
        if scores is None or unit.sentence.rstrip().endswith("?"):
            continue
        day = unit.msg.ts.date()
        unit.date = find_date(unit.text, day)
        best, score = scores.best()
        neg, neg_score = scores.best(negative=True)
        if best == "cancel" and score >= th.cancel and plans:
            close = closing(unit, vec, active, card_vecs, th, plans)
            closes += [close] if close is not None else []
            continue
        if _speculative(unit.sentence) and best != "boundary":
            continue
        standing = score >= th.accept and score - neg_score >= th.margin
        plan = None if standing and best in ("job", "home") else _plan(unit, vec, scores, th)
        if plan is not None:
            cands.append(plan)
        if not standing or best in ("plan", "cancel"):
            continue
        if plan is not None and best not in ("family", "partner"):
            continue
        if best == "emotion":
            _raise_salience(cands, unit.msg)
            continue
        cls = protos.classes[best]
        if GATES["type_accept"] and score < {"event": th.event, "preference": th.preference}.get(cls.type, 0.0):
            continue
        if GATES["person_named"] and best in ("family", "partner") and not _names_person(unit):
            continue
        mine = speaks_of_user(unit.sentence)
        if GATES["clause_subject"] and unit.text != unit.sentence and not speaks_of_user(unit.text) \
                and best not in PERSONAL:
            mine = False
        if best in PERSONAL and best != "boundary" and not first_person_anywhere(unit.sentence):
            continue
        if not mine and best not in PERSONAL:
            if best in ("health", "milestone", "diet") and _names_someone(unit.sentence):
                cls = protos.classes["family_event"]
            else:
                continue
        text = unit.sentence if unit.text == unit.sentence else unit.text
        cands.append(Cand(cls.name, cls.type, write_body(text, None, unit.context), unit.msg, cls.salience, vec,
                          entities=_entities(unit), turns={unit.msg.turn},
                          valid_from=day if cls.type == "event" else None,
                          slot=scores[cls.name], lead=scores.lead(cls.name),
                          own=not told_of_someone_else(unit.sentence)))
    return cands, closes


def closing(unit: Unit, vec: np.ndarray, active: Sequence[Card], card_vecs: np.ndarray, th: Thresholds,
            plans: Sequence[int]) -> CloseOp | None:
    """A cancellation closes the active plan it is most similar to (when similar enough)."""
    if not plans:
        return None
    sims = card_vecs[list(plans)] @ vec
    if float(sims.max()) < th.close_match:
        return None
    card = active[plans[int(sims.argmax())]]
    return CloseOp(id=card.id, reason=f"cancelled or done: {unit.sentence[:120]}")


def _speculative(sentence: str) -> bool:
    """Hypotheticals and hedges ("if I had a cat", "I might apply") state nothing yet."""
    return HYPOTHETICAL.search(sentence) is not None or HEDGE.search(sentence) is not None


def _raise_salience(cands: list[Cand], msg: MessageLike) -> None:
    """A strong feeling is not a card of its own; it makes what it is about matter more."""
    for c in cands[-3:]:
        if c.msg.session == msg.session and msg.turn - c.msg.turn <= 4:
            c.salience = max(c.salience, 0.9)


def _plan(unit: Unit, vec: np.ndarray, scores: Scores, th: Thresholds) -> Cand | None:
    hit, day = unit.date, unit.msg.ts.date()
    if hit is None or hit.past or hit.end <= day or looks_past(unit.text):
        return None
    if re.search(rf"\b(?:every|each)\s+(?:other\s+)?{re.escape(hit.phrase)}", unit.text, re.IGNORECASE):
        return None
    if scores["plan"] < th.plan or scores["neg_hedge"] > scores["plan"] or scores["neg_hypothetical"] > scores["plan"]:
        return None
    if scores["neg_reported"] > scores["plan"] + th.margin:
        return None
    if GATES["plan_subject"] and someone_else_acts(unit.text, hit):
        return None
    body = write_body(unit.sentence, find_date(unit.sentence, day), unit.context)
    return Cand("plan", "plan", body, unit.msg, 0.65, vec, entities=_entities(unit), expires=hit.end,
                valid_from=day, turns={unit.msg.turn})


GATES = {"plan_subject": True, "person_named": True, "clause_subject": True, "type_accept": True}
"""The acceptance gates of issue 13's second round, each measured on the dev splits (see
BENCHMARKS.md); a dict so ``bench/`` can switch one off to measure what it buys."""

def _names_person(unit: Unit) -> bool:
    """A relationship card needs someone it is about: a name or a kin word ("We'd been together
    four years" names no one)."""
    return bool(_entities(unit)[1:]) or _KIN_WORD.search(unit.text) is not None


_KIN_WORD = re.compile(r"\b(?:mum|mom|mother|dad|father|sister|brother|gran|grandma|grandad|grandpa|nan|aunt|"
                       r"uncle|cousin|son|daughter|wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|friend|"
                       r"flatmate|housemate|roommate|colleague|boss|niece|nephew)s?\b", re.IGNORECASE)


def _names_someone(sentence: str) -> bool:
    """A relative's own news ("my dad got diagnosed ...") is a card about them."""
    return names_kin(sentence)


def _entities(unit: Unit) -> tuple[str, ...]:
    names = [n for n in names_in(" " + unit.context + " " + unit.sentence) if n.lower() != "the user"]
    return ("user", *dict.fromkeys(names))


def _dedupe(cands: list[Cand], th: Thresholds) -> list[Cand]:
    """One candidate per thing: a clause and its sentence, a fact said twice, a later value of a
    single slot."""
    out: list[Cand] = []
    for c in cands:
        same = next((o for o in out if o.body == c.body and o.type == c.type or (o.cls == c.cls or o.msg is c.msg and o.type == c.type) and (
            float(o.vector @ c.vector) >= th.duplicate or o.msg is c.msg and o.type == c.type and o.cls != "plan"
            or (o.cls == "plan" and o.expires == c.expires and float(o.vector @ c.vector) >= th.supersede))), None)
        if same is None:
            out.append(c)
            continue
        same.turns |= c.turns
        same.standing = same.standing or c.standing
        if len(c.body) > len(same.body) and same.msg is c.msg:
            same.body, same.vector = c.body, c.vector
    return out


def _resolve(cands: list[Cand], active: Sequence[Card], card_vecs: np.ndarray, card_classes: Sequence[str],
             th: Thresholds, single: frozenset[str]) -> list[Op]:
    """Each candidate against the active cards: already known, a supersede, or a new card.
    ``single``: the single-valued slots (the prototypes' ``single`` flag)."""
    ops: list[Op] = []
    used: set[str] = set()
    for c in cands:
        sims = card_vecs @ c.vector if len(active) else np.zeros(0)
        if len(sims) and float(sims.max()) >= th.duplicate:
            continue
        old = _replaced(c, active, sims, card_classes, th, used, single)
        fields = {"type": c.type, "body": c.body, "entities": c.entities, "salience": round(c.salience, 2),
                  "valid_from": c.valid_from, "expires": c.expires, "turns": tuple(sorted(c.turns)),
                  "session": c.msg.session}
        if old is not None:
            used.add(old.id)
            ops.append(SupersedeOp(old_id=old.id, **fields))  # type: ignore[arg-type]
        else:
            ops.append(WriteOp(**fields, standing=c.standing))  # type: ignore[arg-type]
    return ops


def _replaced(c: Cand, active: Sequence[Card], sims: np.ndarray, classes: Sequence[str], th: Thresholds,
              used: set[str], single_slots: frozenset[str]) -> Card | None:
    """The active card this candidate makes untrue: the same single slot, or the same slot (a
    taste, a plan) and a high similarity. A single slot is replaced whatever the similarity
    ("we moved to Norwich" makes "lives in Sheffield" untrue, at cosine 0.40), so the sentence
    must clearly read as that slot: the slot is the argmax of the prototype scores, and small
    talk whose best score is weak took the user's home, job, partner and pronouns that way
    (stop 32). And, but for the partner (whose changes are told with the partner as subject), it
    must not be told of someone else: "the user's mate's relocating to coimbra" took the user's
    home (stop 34)."""
    best: tuple[float, Card] | None = None
    for i, card in enumerate(active):
        if card.id in used:
            continue
        same_slot = classes[i] == c.cls or (classes[i] in TASTES and c.cls in TASTES)
        if c.cls == "plan":
            same_slot = card.type == "plan" and card.expires != c.expires
        single = same_slot and c.cls in single_slots and card.type == c.type and (c.own or c.cls == "partner") \
            and c.slot >= th.single and c.lead >= th.single_margin
        wins = single or (same_slot and float(sims[i]) >= th.supersede)
        if wins and (best is None or float(sims[i]) > best[0]):
            best = (float(sims[i]), card)
    return best[1] if best else None


def _merges(active: Sequence[Card], vecs: np.ndarray, used: set[str], th: Thresholds) -> list[MergeOp]:
    """Two active cards that say the same thing become one."""
    out: list[MergeOp] = []
    taken = set(used)
    for i, a in enumerate(active):
        if a.id in taken or a.type == "plan":
            continue
        same = [b for j, b in enumerate(active) if j > i and b.id not in taken and b.type == a.type
                and float(vecs[i] @ vecs[j]) >= th.merge]
        if not same:
            continue
        group = [a, *same]
        keep = max(group, key=lambda c: (c.salience, len(c.body)))
        taken |= {c.id for c in group}
        out.append(MergeOp(ids=tuple(c.id for c in group), type=keep.type, body=keep.body,
                           entities=tuple(dict.fromkeys(e for c in group for e in c.entities)),
                           salience=max(c.salience for c in group), valid_from=keep.valid_from,
                           expires=keep.expires))
    return out


def _targets(op: Op) -> tuple[str, ...]:
    if isinstance(op, SupersedeOp):
        return (op.old_id,)
    return ()
