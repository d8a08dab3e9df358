"""Is a standing fact still true? A learned change stage over (sentence, active card) pairs.

People rarely tell a change in the words of the card it ends: "handed in my apron", "out of
lancaster finally!!", "keys to the new place smell of paint". On extraction blind34 only 3 of 22
changes were superseded by a right card, and 12 of the 22 sentences that told one scored under 0.25
for every card class (BENCHMARKS.md, stop 38), so they never became a candidate and no rule about
which card a *candidate* replaces could reach them (stop 38's x-sup). Stop 33's x-end2 read every
sentence, but judged "is this a change" by cosines to a dozen prototype sentences, and made more
cards wrongly stale than it fixed ("sure paolo." replaced a boyfriend).

So this stage reads every user sentence of the window (questions excepted) against every active
card of the user's that the window's ops left alone, and a logistic regression
(``data/change.npz``, fit by ``python -m memfs.agent.dream.fit_change`` on the dev windows'
expected supersedes) says whether the sentence makes the card untrue. It reads the pair (how near
they are, whether the sentence names the card's place, employer or person, the single slot both
read as, whose sentence it is) and the sentence's own embedding, so what "reads as a change" is
learnt from many people's changes rather than written as prototypes.

A card past the threshold is superseded by the window's own card from that sentence when there is
one, else by a card written from the sentence in the user's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from memfs.agent.dream.cardtext import speaks_of_user, told_of_someone_else, write_body
from memfs.agent.dream.dates import find_date
from memfs.agent.dream.ops import Extraction, MessageLike, Op, SupersedeOp, WriteOp, op_targets
from memfs.agent.dream.polarity import off_score
from memfs.agent.dream.prototypes import Prototypes, load_prototypes
from memfs.agent.dream.rules.lexicon import STOPWORDS
from memfs.agent.dream.rules.text import first_person, names_in

from memfs.cards import Card
from memfs.embed import DEFAULT_MODEL, Embedder

DATA_PATH = Path(__file__).parent / "data" / "change.npz"
KINDS = ("fact", "relationship", "preference")
"""The old cards a change may replace: a plan or an event is retired, not replaced."""
N_PAIR = 18
"""The pair features ahead of the sentence's embedding in a row (``pair_features``)."""


@dataclass(frozen=True)
class Said:
    """A user sentence of the window, with the sentence it leans on (``cardtext.leans_on_previous``)."""

    msg: MessageLike
    sentence: str
    context: str


def user_sentences(window: Sequence[MessageLike]) -> list[Said]:
    """Every whole sentence the user typed in the window, questions, hypotheticals and hedges
    excepted ("if I got the halden job I'd move to bristol" changes nothing yet)."""
    from memfs.agent.dream.extract_semantic import _speculative, _units

    return [Said(u.msg, u.sentence, u.context) for u in _units(window)
            if u.text == u.sentence and not u.sentence.rstrip().endswith("?") and not _speculative(u.sentence)]


_WORD = re.compile(r"[^\W\d_][\w'-]{2,}")
_NOT_CONTENT = frozenset({"user", "user's", "users", "their", "they", "them", "works", "lives", "live", "work",
                          "uses", "likes", "name", "named", "called", "still"})


def content_words(text: str) -> frozenset[str]:
    """The words that can name a place, an employer, a person or a pastime: not stopwords, not a
    card's scaffolding ("the user", "works", "lives")."""
    words = {w.lower().strip("'-") for w in _WORD.findall(text)}
    return frozenset(w for w in words if w not in STOPWORDS and w not in _NOT_CONTENT and len(w) > 2)


def _stems(words: frozenset[str]) -> frozenset[str]:
    return frozenset(w[:5] for w in words)


@dataclass
class Pairs:
    """The rows of one window: ``x[i, j]`` reads sentence ``i`` against card ``j``."""

    said: list[Said]
    cards: list[Card]
    x: np.ndarray
    """Shape (sentences, cards, N_PAIR + dim)."""
    vectors: np.ndarray
    """The sentences' embeddings (L2-normalised)."""


def pairs(window: Sequence[MessageLike], cards: Sequence[Card], embedder: Embedder,
          protos: Prototypes | None = None, said: list[Said] | None = None) -> Pairs:
    """Every (user sentence, active user card of ``KINDS``) pair of the window as feature rows."""
    said = user_sentences(window) if said is None else said
    olds = [c for c in cards if c.status == "active" and c.type in KINDS]
    dim = embedder.dim
    if not said or not olds:
        return Pairs(said, olds, np.zeros((len(said), len(olds), N_PAIR + dim), dtype=np.float32),
                     np.zeros((len(said), dim), dtype=np.float32))
    protos = protos or load_prototypes(embedder)
    texts = [s.sentence for s in said] + [first_person(c.body) for c in olds]
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    s_vecs, c_vecs = vecs[: len(said)], vecs[len(said):]
    sims = s_vecs @ c_vecs.T
    s_scores, c_scores = protos.score(s_vecs), protos.score(c_vecs)
    single = [name for name, cls in protos.classes.items() if cls.single]
    off = off_score(s_vecs, embedder)
    c_words = [content_words(c.body) | {e.lower() for e in c.entities if e.lower() != "user"} for c in olds]
    x = np.zeros((len(said), len(olds), N_PAIR + dim), dtype=np.float32)
    for i, s in enumerate(said):
        words = _stems(content_words(s.sentence + " " + s.context))
        told = _stems(content_words(s.sentence))
        own = float(not told_of_someone_else(s.sentence))
        mine = float(speaks_of_user(s.sentence))
        s_best = s_scores[i].best()[0]
        length = min(len(s.sentence.split()), 40) / 20.0
        for j, card in enumerate(olds):
            stems = _stems(c_words[j])
            shared = len(stems & words)
            others = np.delete(sims[i], j)
            both_single = max((min(s_scores[i][k], c_scores[j][k]) for k in single), default=0.0)
            c_best = c_scores[j].best()[0]
            x[i, j, :N_PAIR] = (
                sims[i, j],
                float(sims[i, j] - (others.max() if len(others) else 0.0)),
                float(sims[i, j] - sims[:, j].max()),
                shared / max(1, len(stems)),
                float(shared > 0),
                both_single,
                float(c_best in single),
                float(s_best == c_best),
                float(off[i]),
                own,
                mine,
                float(card.type == "fact"),
                float(card.type == "relationship"),
                float(card.type == "preference"),
                length,
                float(shared > 0) * sims[i, j],
                float(sims[i, j]) ** 2,
                min(len(told - stems), 8) / 4.0,
            )
            x[i, j, N_PAIR:] = s_vecs[i]
    return Pairs(said, olds, x, s_vecs)


@dataclass(frozen=True)
class Model:
    """The regression (``w``, ``b``) and the probability from which a sentence ends a card."""

    w: np.ndarray
    b: float
    threshold: float

    def p(self, x: np.ndarray) -> np.ndarray:
        z = np.asarray(x, dtype=np.float32) @ self.w + self.b
        return np.asarray(1.0 / (1.0 + np.exp(-z)))

    def save(self, path: Path = DATA_PATH) -> None:
        np.savez(path, w=self.w.astype(np.float32), b=np.float32(self.b), threshold=np.float32(self.threshold))

    @classmethod
    def load(cls, path: Path = DATA_PATH) -> Model | None:
        try:
            with np.load(path) as data:
                return cls(np.asarray(data["w"], dtype=np.float32), float(data["b"]), float(data["threshold"]))
        except (OSError, KeyError, ValueError):
            return None


_SHIPPED: dict[str, Model | None] = {}


def shipped_model() -> Model | None:
    """``data/change.npz``, loaded once; None when absent (no change stage)."""
    key = str(DATA_PATH)
    if key not in _SHIPPED:
        _SHIPPED[key] = Model.load(DATA_PATH)
    return _SHIPPED[key]


def decide(p: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """(sentence, card) pairs to act on: each card's best sentence past ``threshold``, best first,
    each sentence ending at most one card."""
    picks: list[tuple[int, int]] = []
    taken: set[int] = set()
    if p.size == 0:
        return picks
    order = sorted(range(p.shape[1]), key=lambda j: -float(p[:, j].max()))
    for j in order:
        col = np.where([i in taken for i in range(p.shape[0])], -1.0, p[:, j])
        i = int(np.argmax(col))
        if col[i] >= threshold:
            picks.append((i, j))
            taken.add(i)
    return picks


def with_changes(extraction: Extraction, window: Sequence[MessageLike], cards: Sequence[Card],
                 embedder: Embedder, model: Model | None = None) -> Extraction:
    """``extraction`` with a supersede for each active card a sentence of the window makes untrue,
    by the learned pair decision; cards an op already targets are left to that op."""
    model = model or shipped_model()
    if model is None or embedder.name != DEFAULT_MODEL:
        return extraction
    found = pairs(window, cards, embedder)
    if not found.cards or not found.said:
        return extraction
    return apply(extraction, found, model.p(found.x), model.threshold)


def apply(extraction: Extraction, found: Pairs, p: np.ndarray, threshold: float) -> Extraction:
    """The supersedes ``p`` (sentence x card probabilities) asks for, on cards no op of
    ``extraction`` targets yet."""
    used = {t for op in extraction.ops for t in op_targets(op)}
    p = np.where([[c.id in used for c in found.cards]], -1.0, p)
    ops = list(extraction.ops)
    for i, j in decide(p, threshold):
        ops = _supersede(ops, found.said[i], found.cards[j])
    return replace(extraction, ops=ops)


def _supersede(ops: list[Op], said: Said, old: Card) -> list[Op]:
    """The window's own card from ``said`` becomes the supersede when there is one; else a card in
    the user's words."""
    for k, op in enumerate(ops):
        if isinstance(op, WriteOp) and op.session == said.msg.session and said.msg.turn in op.turns \
                and op.type in KINDS:
            fields = {f: getattr(op, f) for f in ("type", "body", "entities", "salience", "valid_from", "expires",
                                                   "turns", "session")}
            return [*ops[:k], SupersedeOp(old_id=old.id, **fields), *ops[k + 1:]]
        if isinstance(op, SupersedeOp) and op.session == said.msg.session and said.msg.turn in op.turns:
            return ops
    body = write_body(said.sentence, find_date(said.sentence, said.msg.ts.date()), said.context)
    names = [n for n in names_in(" " + said.context + " " + said.sentence) if n.lower() != "the user"]
    entities = tuple(dict.fromkeys(["user", *names]))
    return [*ops, SupersedeOp(old_id=old.id, type=old.type, body=body, entities=entities,
                              salience=round(max(old.salience, 0.6), 2), valid_from=None, expires=None,
                              turns=(said.msg.turn,), session=said.msg.session)]
