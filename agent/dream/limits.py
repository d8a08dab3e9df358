"""A limit the user states once becomes a boundary card, so it is in every turn's profile.

Issue 12's third point: "I haven't touched alcohol in years" has to reach the context of a
request for a cocktail. The constraint search (``memfs.constraints``) looks for that one
message among all the user's messages at every turn; a boundary card and its profile line
(``summary.md``'s ``## Profile`` is in every turn's context) put it there without a search.
The learned extractor cards about half of such sentences, some as an event or a plan, which
go to the story and are shortened first.

At dream time, after the offline extractor decided (``extract_offline.OfflineExtractor``),
each user sentence of the window is read again:

1. its write-time limit score (``memfs.salience.message_limit``, the score the index stores
   for the constraint search: close to a limit or circumstance of any domain, far from news
   and chatter) reaches ``LIMIT_BAR``, for the sentence or one of its clauses;
2. the learned extractor's card probability (``learned.Model.card``) reaches ``CARD_FLOOR``
   (a low bar), and its probability of a boundary or preference card reaches ``KIND_FLOOR``;
3. its grammar binds the user (``blocked``): not a question or a request to the assistant
   (``speech.py``), not a hypothetical, conditional or hedge (``rules.lexicon``'s
   ``HYPOTHETICAL`` and ``HEDGE``, ``learned``'s conditional clause), not reported speech,
   not a habit the user only used to have, no day ahead (that is a plan), and the user's own (``cardtext.users_own``), or
   another person's where a clause of the same sentence says what the user does about it.

Such a sentence, when no card of this dream or no active card already says it, becomes a
card of type ``boundary`` written extractively (``cardtext.write_body``: the user's words in
the third person, the date resolved once, the sentence before it in front when it leans on
it); an event or plan card this dream writes from the same sentence becomes that boundary
instead. The summary is rewritten from the result. The two bars were chosen on the dev data
only (the dev constraint probes, the salience and request dev sets, the extraction set's dev
splits, the small-talk bank; numbers in the branch report of issue 12's point 3).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from memfs.agent.dream.cardtext import (
    clauses,
    leans_on_previous,
    names_kin,
    someone_else_acts,
    speaks_of_user,
    users_own,
    write_body,
)
from memfs.agent.dream.dates import find_date, looks_past
from memfs.agent.dream.ops import Extraction, MergeOp, MessageLike, Op, SupersedeOp, WriteOp
from memfs.agent.dream.rules.lexicon import HEDGE, HYPOTHETICAL
from memfs.agent.dream.speech import asks, bids
from memfs.agent.dream.summary import rewrite_summary, same_fact

from memfs.cards import Card
from memfs.embed import DEFAULT_MODEL, Embedder

LIMIT_BAR = 0.55
"""The write-time limit score (``message_limit``) a sentence or clause must reach."""
CARD_FLOOR = 0.15
"""The learned extractor's card probability the sentence must reach."""
KIND_FLOOR = 0.25
"""The learned extractor's probability that the card is a boundary or a preference (the
types a limit is carded as) the sentence must reach: news, feelings and personal facts that
merely sound serious stay below it."""
SALIENCE = 0.85
"""A boundary card's salience (as the learned extractor writes one)."""
STANDING = frozenset({"boundary", "preference", "fact", "relationship"})
"""Card types that already stand in the profile: a sentence carded as one is not carded again."""

_USED_TO = re.compile(r"\bused to\b", re.IGNORECASE)
"""The past habitual: a limit the user used to keep is not one they keep now."""


@dataclass(frozen=True)
class Limit:
    """A user sentence read as a limit, with the numbers that decided it."""

    msg: MessageLike
    sentence: str
    previous: str
    limit: float
    card_p: float
    blocked: str | None
    kinds: dict[str, float]
    """The learned extractor's type probabilities (``learned.TYPES``)."""


def blocked(sentence: str) -> str | None:
    """Why ``sentence`` states no limit that binds the user, or ``None``: a question or a
    request to the assistant, a hypothetical or hedge, reported speech, a habit the user used
    to have, or someone else's fact that no clause ties to what the user does. Read on the
    whole sentence, even when a clause of it scored as the limit."""
    from memfs.agent.dream.learned import _CONDITIONAL_CLAUSE, _REPORTED

    if sentence.rstrip().endswith("?") or asks(sentence):
        return "question"
    if bids(sentence):
        return "request"
    if HYPOTHETICAL.search(sentence) or _CONDITIONAL_CLAUSE.search(sentence):
        return "hypothetical"
    if HEDGE.search(sentence):
        return "hedge"
    if _REPORTED.search(sentence) or someone_else_acts(sentence):
        return "reported"
    if _USED_TO.search(sentence):
        return "past"
    if users_own(sentence) and not names_kin(sentence):
        return None
    if any(speaks_of_user(c) for c in clauses(sentence)[1:]):
        return None  # "my son can't have nuts, so we never keep them in the house"
    return "someone else"


def _dated_ahead(sentence: str, msg: MessageLike) -> bool:
    """Does the sentence name a day ahead of its message ("I see a nutritionist on Thursday")?
    What is planned for a day is a plan, not a standing limit."""
    day = msg.ts.date()
    hit = find_date(sentence, day)
    return hit is not None and not hit.past and hit.end > day and not looks_past(sentence)


def read_limits(window: Sequence[MessageLike], embedder: Embedder) -> list[Limit]:
    """Every user sentence of ``window`` whose limit score reaches ``LIMIT_BAR`` (its own or a
    clause's), with its learned card probability and the grammar gate's verdict."""
    from memfs.agent.dream.extract_semantic import _units
    from memfs.agent.dream.learned import TYPES, features, rows_of, shipped_model
    from memfs.agent.dream.prototypes import load_prototypes

    from memfs.salience import message_limit, message_salience

    units = _units(window)
    if not units:
        return []
    texts = [u.text for u in units]
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    speakers = ["user"] * len(units)
    scores = message_limit(speakers, vecs, message_salience(texts, speakers, vecs, embedder), embedder)
    best: dict[tuple[int, str], float] = {}
    for unit, score in zip(units, scores, strict=True):
        key = (id(unit.msg), unit.sentence)
        best[key] = max(best.get(key, -1.0), float(score))
    rows = rows_of(window, units)
    picked = [r for r in rows if best[(id(r.msg), r.sentence)] >= LIMIT_BAR]
    if not picked:
        return []
    protos = load_prototypes(embedder)
    x = features(picked, embedder, protos)
    model = shipped_model()
    out = []
    for row, p, kinds in zip(picked, model.card(x), model.types(x), strict=True):
        out.append(Limit(row.msg, row.sentence, row.previous, best[(id(row.msg), row.sentence)], float(p),
                         blocked(row.sentence) or ("dated" if _dated_ahead(row.sentence, row.msg) else None),
                         dict(zip(TYPES, map(float, kinds), strict=True))))
    return out


def promote(extraction: Extraction, window: Sequence[MessageLike], cards: Sequence[Card], summary: str,
            now: dt.datetime, embedder: Embedder) -> Extraction:
    """``extraction`` with a boundary card for each limit of ``window`` that nothing says yet
    (or an event or plan card of the same sentence turned into one); unchanged when the
    embedder is not the model the learned extractor was fitted on."""
    from memfs.agent.dream.learned import FITTED_DIM

    if embedder.name != DEFAULT_MODEL or embedder.dim != FITTED_DIM:
        return extraction
    limits = [x for x in read_limits(window, embedder) if x.card_p >= CARD_FLOOR and x.blocked is None
              and x.kinds["boundary"] + x.kinds["preference"] >= KIND_FLOOR]
    if not limits:
        return extraction
    active = [c for c in cards if c.status == "active"]
    ops = list(extraction.ops)
    changed = False
    for limit in limits:
        changed |= _card_limit(limit, ops, active)
    if not changed:
        return extraction
    return Extraction(summary=rewrite_summary(summary, window, ops, active, now.date()), ops=ops)


def _card_limit(limit: Limit, ops: list[Op], active: Sequence[Card]) -> bool:
    """Add (or upgrade to) the boundary card of ``limit`` in ``ops``; did ``ops`` change?"""
    from memfs.agent.dream.learned import entities

    msg = limit.msg
    day = msg.ts.date()
    context = limit.previous if leans_on_previous(limit.sentence) else ""
    body = write_body(limit.sentence, find_date(limit.sentence, day), context)
    mine = [n for n, op in enumerate(ops) if isinstance(op, (WriteOp, SupersedeOp, MergeOp))
            and msg.turn in op.turns and op.session in (None, msg.session)]
    if any(ops[n].type in STANDING | {"plan"} for n in mine):  # type: ignore[union-attr]
        return False  # the message is carded already, as a standing fact or as its plan
    for n in mine:
        op = ops[n]
        if isinstance(op, (WriteOp, SupersedeOp)) and op.type == "event" and same_fact(body, op.body):
            ops[n] = dataclasses.replace(op, type="boundary", valid_from=None, salience=max(op.salience, SALIENCE))
            return True  # (a plan keeps its date: what is planned is not a standing limit)
    if any(same_fact(body, o.body) for o in ops if isinstance(o, (WriteOp, SupersedeOp)) and o.type in STANDING):
        return False
    if any(_said_by(c, msg) or c.type in STANDING and same_fact(body, c.body) for c in active):
        return False
    ops.append(WriteOp(type="boundary", body=body, entities=entities(limit.sentence, context),
                       salience=SALIENCE, turns=(msg.turn,), session=msg.session))
    return True


def _said_by(card: Card, msg: MessageLike) -> bool:
    """Was ``card`` written from ``msg`` (its provenance names the turn)?"""
    return card.source is not None and card.source.session == msg.session and msg.turn in card.source.turns
