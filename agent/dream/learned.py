"""The learned offline extractor: small trained classifiers over sentence embeddings.

Round one and two scored user sentences against hand-written prototypes with hand-tuned
thresholds, in front of ~1,670 phrase rules; both were fitted to the splits they were scored
on and did not carry over to fresh text (blind8: P 0.75, R 0.35). Here the decision "is this
sentence a card, and of which type" is a multinomial logistic regression, fitted
(``fit_learned.py``) on the labelled dev windows of the extraction set and the chat of the spent
profile sets (so that chat is not carded as who the user is), over features that do not depend on
wording:

- the all-MiniLM-L6-v2 embedding of the sentence, of the user's sentence before it (a fact told
  over two messages) and of the assistant turn before it ("Do you have something lined up?");
- a few grammar flags (``flags``): is the user the subject, does it open on someone else, is it
  reported ("X says ..."), conditional ("if we had ..."), a question, does it carry a future or
  past date. The classifier learns how much each counts; none of them writes a card alone.

The weights ship as package data (``data/learned.npz``), produced by ``python -m
memfs.agent.dream.fit_learned``; the planted-facts scenario and the blind splits are never
read by the fit. The card is written extractively (``cardtext.write_body``: the user's own
words in the third person, the date resolved once, the sentence before it in front when this
one leans on it). Everything after the decision — closing a cancelled plan, one card per fact,
supersede on the same slot, merges, expiry — is the embedding extractor's
(``extract_semantic.SemanticExtractor``), which this class extends.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from memfs.agent.dream.cardtext import (
    called_off,
    first_person_anywhere,
    leans_on_previous,
    message_sentences,
    names_kin,
    says_who_the_user_is,
    someone_else_acts,
    speaks_of_user,
    states_identity,
    told_of_someone_else,
    users_own,
    write_body,
)
from memfs.agent.dream.coref import name_in_body, people_known
from memfs.agent.dream.dates import ROUTINE, DateHit, find_date, looks_past
from memfs.agent.dream.extract_semantic import Cand, SemanticExtractor, Unit, closing
from memfs.agent.dream.ops import CloseOp, MessageLike
from memfs.agent.dream.polarity import off_score
from memfs.agent.dream.prototypes import Prototypes
from memfs.agent.dream.rules.lexicon import HEDGE, HYPOTHETICAL
from memfs.agent.dream.rules.text import names_in
from memfs.agent.dream.speech import addressed, asks, bids
from memfs.agent.dream.verify import Proposal, Verifier, shipped_verifier

from memfs.cards import Card
from memfs.embed import DEFAULT_MODEL, Embedder

DATA_PATH = Path(__file__).parent / "data" / "learned.npz"
TYPES = ("fact", "relationship", "preference", "boundary", "plan", "event")
PROPOSE_FLOOR = 0.3
"""The card probability from which a sentence's card is proposed to the verifier (and recorded
for its fit); without a verifier the first stage's own ``threshold`` decides."""
PLAN_OFF_MARGIN: float | None = 0.04
"""A plan card is not written when its sentence's ``polarity.off_score`` is above this (the
sentence reads more as a plan called off, skipped, missed or wished for than as one that is on);
``None``: no such gate. 0.04: the widest margin that removes the false plans of the LOSO bench
without losing a reference card (``bench/extract_loso.py --extractor polarity``, where folds
choosing on the other splits pick 0.0 and lose three; BENCHMARKS.md, issue 13's eighth round)."""
SALIENCE = {"fact": 0.65, "relationship": 0.65, "preference": 0.5, "boundary": 0.85, "plan": 0.65, "event": 0.5}

_CONDITIONAL = re.compile(r"\b(?:if|imagine|imagining|suppose|would|wouldn't|could|when we ever|one day|"
                          r"someday|wish|hypothetically)\b", re.IGNORECASE)
_REPORTED = re.compile(r"\b\w+\s+(?:says|said|reckons|thinks|told (?:me|us|everyone)|claims|keeps saying|swears|"
                       r"is convinced)\b(?:\s+that)?\s+(?:I|I'm|I'll|I've|I'd|we|we're|me|my|the user)\b",
                       re.IGNORECASE)
_KIN_WORD = (r"(?:mum|mom|dad|sister|brother|friend|mate|boss|manager|partner|girlfriend|boyfriend|wife|husband|"
             r"flatmate|housemate|roommate|colleague|cousin|aunt|uncle|son|daughter|niece|nephew|gran|nan|"
             r"neighbour|neighbor|fianc[eé]e?)")
_KIN_NAME = re.compile(r"\bmy\s+(?:\w+\s+)?" + _KIN_WORD + r"\s+([a-z][a-z'-]{2,})\b", re.IGNORECASE)
_APPOSITION = re.compile(r"\bmy\s+((?:(?:little|big|older|younger|best|twin|step|old)\s+)?" + _KIN_WORD
                         + r")\s+([a-z][a-z'-]{2,})\b", re.IGNORECASE)
_NOT_NAMES = frozenset({"and", "but", "who", "was", "is", "has", "had", "says", "said", "thinks", "just", "got",
                        "came", "went", "will", "can", "cant", "can't", "does", "did", "lives", "works",
                        "the", "for", "from", "with", "again", "still", "also", "never", "always", "really",
                        "told", "reckons", "wants", "made", "keeps", "isn't", "wasn't", "doesn't", "didn't",
                        "that", "this", "here", "there", "now", "too", "over", "back", "loves", "hates",
                        "since", "because", "when", "though", "tho", "lol", "not", "who's", "she's", "he's",
                        "they", "she", "his", "her", "him", "our", "your", "all", "any", "one", "about"})


def named_in_passing(sentence: str) -> list[tuple[str, str]]:
    """The user's people named in apposition ("my cousin aroha reckons ...", "my mate Colm says
    ..."): (kin, Name) pairs. A lowercase word after the kin word is a name unless it is a
    function word or reads as a verb ("my dad grooms it", "my boss yelled")."""
    out = []
    for m in _APPOSITION.finditer(sentence):
        word = m.group(2)
        if word.lower() in _NOT_NAMES or word.islower() and word.endswith(("s", "ed", "ing")):
            continue
        out.append((" ".join(m.group(1).lower().split()), word.capitalize()))
    return out


def entities(sentence: str, context: str = "") -> tuple[str, ...]:
    """``user`` and the people and places named: capitalised names, and a lowercase word right
    after "my friend / sister / boss ..." ("my friend deepa") is a person too."""
    text = f"{context} {sentence}"
    names = [n for n in names_in(" " + text) if n.lower() != "the user"]
    names += [m.group(1).capitalize() for m in _KIN_NAME.finditer(text) if m.group(1).lower() not in _NOT_NAMES]
    return ("user", *dict.fromkeys(names))


def flags(sentence: str, day_future: bool, day_past: bool) -> list[float]:
    """Grammar of a sentence as numbers the classifier weighs (no flag decides alone): whose
    sentence it is, reported, conditional, hedged, a question, dated ahead or back, and its
    length, and its speech act (a question or a request to the assistant: ``speech.py``)."""
    return [float(asks(sentence)), float(bids(sentence)),
            float(speaks_of_user(sentence)), float(first_person_anywhere(sentence)), float(names_kin(sentence)),
            float(someone_else_acts(sentence)), float(_REPORTED.search(sentence) is not None),
            float(_CONDITIONAL.search(sentence) is not None or HYPOTHETICAL.search(sentence) is not None),
            float(HEDGE.search(sentence) is not None), float(sentence.rstrip().endswith("?")),
            float(day_future), float(day_past), min(len(sentence.split()), 40) / 40.0]


N_FLAGS = len(flags("", False, False))


@dataclass(frozen=True)
class Row:
    """One user sentence with the text around it that the features read."""

    msg: MessageLike
    sentence: str
    previous: str
    asked: str


def rows_of(window: Sequence[MessageLike], units: Sequence[Unit]) -> list[Row]:
    """The sentence units of ``units`` (not the clauses), each with the user's sentence before
    it and the assistant turn before its message."""
    asked: dict[int, str] = {}
    last = ""
    for msg in window:
        if msg.role != "user":
            last = msg.content
        else:
            asked[id(msg)] = last
    out: list[Row] = []
    previous = ""
    for unit in units:
        if unit.text != unit.sentence:
            continue
        out.append(Row(unit.msg, unit.sentence, previous, asked.get(id(unit.msg), "")))
        previous = unit.sentence
    return out


def features(rows: Sequence[Row], embedder: Embedder, protos: Prototypes) -> np.ndarray:
    """One feature row per sentence: its similarity to each prototype class, the grammar
    flags, and three embeddings (the sentence, the user's sentence before, the turn asked)."""
    names = sorted(protos.classes)
    if not rows:
        return np.zeros((0, len(names) + N_FLAGS + 3 * embedder.dim), dtype=np.float32)
    texts = [r.sentence for r in rows] + [r.previous or "-" for r in rows] + [r.asked or "-" for r in rows]
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    n = len(rows)
    similar = np.array([[s[name] for name in names] for s in protos.score(vecs[:n])], dtype=np.float32)
    grammar = []
    for r in rows:
        hit = find_date(r.sentence, r.msg.ts.date())
        future = hit is not None and not hit.past and hit.end > r.msg.ts.date() and not looks_past(r.sentence)
        grammar.append(flags(r.sentence, future, hit is not None and not future))
    return np.hstack([similar * 3.0, np.asarray(grammar, dtype=np.float32), vecs[:n], vecs[n: 2 * n] * 0.5,
                      vecs[2 * n:] * 0.5]).astype(np.float32)


@dataclass(frozen=True)
class Model:
    """Two logistic regressions over ``features``: is this sentence a card (``card_*``), and of
    which type (``type_*``, multinomial over ``TYPES``); ``threshold`` is the card probability
    a sentence must reach."""

    card_w: np.ndarray
    card_b: float
    type_w: np.ndarray
    type_b: np.ndarray
    threshold: float

    def card(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-(x @ self.card_w + self.card_b))))

    def types(self, x: np.ndarray) -> np.ndarray:
        z = x @ self.type_w + self.type_b
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return np.asarray(e / e.sum(axis=1, keepdims=True))

    def save(self, path: Path = DATA_PATH) -> None:
        np.savez_compressed(path, card_w=self.card_w.astype(np.float32), card_b=np.array(self.card_b),
                            type_w=self.type_w.astype(np.float32), type_b=self.type_b.astype(np.float32),
                            threshold=np.array(self.threshold), types=np.array(TYPES))

    @classmethod
    def load(cls, path: Path = DATA_PATH) -> Model:
        with np.load(path, allow_pickle=False) as data:
            if tuple(str(t) for t in data["types"]) != TYPES:
                raise ValueError(f"{path}: fitted for other card types; rerun fit_learned")
            return cls(data["card_w"], float(data["card_b"]), data["type_w"], data["type_b"],
                       float(data["threshold"]))


_SHIPPED: list[Model] = []


def shipped_model() -> Model:
    """The fitted model shipped in ``data/learned.npz`` (loaded once per process)."""
    if not _SHIPPED:
        _SHIPPED.append(Model.load())
    return _SHIPPED[0]


FITTED_DIM = 384
"""The embedding width ``data/learned.npz`` was fitted on (all-MiniLM-L6-v2)."""
_WARNED: set[str] = set()


def _warn_once(model: str) -> None:
    if model not in _WARNED:
        _WARNED.add(model)
        logging.getLogger("memfs.dream").warning(
            "learned extractor: fitted on %s, not %s; using the prototype extractor",
            DEFAULT_MODEL, model)


class LearnedExtractor(SemanticExtractor):
    """``extractor(window, cards, summary, now) -> Extraction``: the classifier decides which
    sentences are cards and of what type; the rest is ``SemanticExtractor``'s."""

    def __init__(self, embedder: Embedder, model: Model | None = None, verifier: Verifier | None = None,
                 plan_off: float | None | str = "shipped", record: bool = False, gates: frozenset[str] = frozenset()) -> None:
        """Without ``model``, the shipped first stage and the shipped verifier (``verify.py``,
        when ``data/verifier.npz`` exists); with one, only the ``verifier`` given, if any.
        ``plan_off``: the polarity margin of plan cards (default ``PLAN_OFF_MARGIN``).
        ``record``: propose (and keep in ``proposed``) the cards from ``PROPOSE_FLOOR`` up
        even without a verifier, for the verifier's fit; otherwise, with no verifier, only
        the cards the first stage writes are built."""
        super().__init__(embedder)
        self.record = record
        self.gates = gates
        """Measured, off by default (BENCHMARKS "Stop 27, false cards"): ``"own"``, a fact,
        preference, plan or event card only from a sentence whose grammar says it is the user's
        own (``cardtext.users_own``); ``"episode"``, no fact or preference card from a sentence
        that tells one past episode (a single day at or before the message's, or told in the
        past tense with no date): what happened once is not a standing fact."""
        self.plan_off = PLAN_OFF_MARGIN if plan_off == "shipped" else plan_off
        self.verifier = verifier if model is not None else verifier or shipped_verifier()
        self.model = model or shipped_model()
        self.proposed: list[Proposal] = []
        """The last window's proposals from ``min(PROPOSE_FLOOR, threshold)`` up, before the
        verifier (what ``fit_learned.out_of_fold`` labels)."""

    def propose(self, window: Sequence[MessageLike], units: list[Unit], unit_vecs: np.ndarray,
                protos: Prototypes, active: Sequence[Card], card_vecs: np.ndarray) -> tuple[list[Cand], list[CloseOp]]:
        if self.embedder.name != DEFAULT_MODEL or self.embedder.dim != FITTED_DIM:
            # the weights read all-MiniLM-L6-v2's vectors: with another model (or a test's
            # fake embedder) they mean nothing, so the prototype extractor decides instead
            _warn_once(self.embedder.name)
            return super().propose(window, units, unit_vecs, protos, active, card_vecs)
        th = protos.thresholds
        plans = [i for i, c in enumerate(active) if c.type == "plan" or c.expires is not None]
        closes: list[CloseOp] = []
        vec_of = {id(u): v for u, v in zip(units, unit_vecs, strict=True)}
        cancelled: set[str] = set()  # sentences that call a plan off: they close it, they write no card
        for unit in units:
            if unit.scores is not None and unit.scores.best()[0] == "cancel" and unit.scores.best()[1] >= th.cancel:
                cancelled.add(unit.sentence)
                close = closing(unit, vec_of[id(unit)], active, card_vecs, th, plans)
                closes += [close] if close is not None and close.id not in {c.id for c in closes} else []
        sentence_units = [u for u in units if u.text == u.sentence]
        rows = rows_of(window, units)
        if not rows:
            return [], closes
        x = features(rows, self.embedder, protos)
        card, types = self.model.card(x), self.model.types(x)
        for i, row in enumerate(rows):
            if states_identity(row.sentence):  # the user's own pronouns or name, however casually said
                card[i] = max(float(card[i]), min(1.0, self.model.threshold + 0.01))
                types[i] = np.eye(len(TYPES))[TYPES.index("fact")]
        grammar = slice(len(protos.classes), len(protos.classes) + N_FLAGS)
        floor = (min(PROPOSE_FLOOR, self.model.threshold)
                 if self.verifier is not None or self.record else self.model.threshold)
        proposed = [Proposal(c, float(p), self.model.threshold, t, xr[grammar])
                    for unit, row, p, t, xr in zip(sentence_units, rows, card, types, x, strict=True)
                    if p >= floor and unit.sentence not in cancelled
                    and (c := self._typed(unit, row, t, vec_of[id(unit)], protos))]
        bar = self.verifier.floor if self.verifier is not None else self.model.threshold
        chosen = [p for p in proposed if p.card_p >= bar]
        people = [Proposal(c, 1.0, self.model.threshold, np.eye(len(TYPES))[TYPES.index("relationship")],
                           np.zeros(N_FLAGS, dtype=np.float32), people=True)
                  for c in self._people(sentence_units, [p.cand for p in chosen], protos)]
        self.proposed = proposed + people
        chosen += people
        if self.verifier is not None:
            chosen = self.verifier.keep(chosen, self.embedder, TYPES)
        name_people([p.cand for p in chosen if not p.people], window, active)
        return [p.cand for p in chosen], closes

    def _people(self, units: Sequence[Unit], cands: Sequence[Cand], protos: Prototypes) -> list[Cand]:
        """A relationship card for each of the user's people named in passing ("my cousin aroha
        reckons I should ...") whom no card of this window names already: the apposition
        says who they are to the user even when the sentence is about something else. The body
        is only that ("The user's cousin is Aroha."), so reported or hypothetical content of
        the sentence never becomes a fact."""
        known = {e.lower() for c in cands for e in c.entities}
        found: list[tuple[Unit, str]] = []
        for unit in units:
            if states_nothing(unit.sentence, "relationship"):
                continue
            for kin, name in named_in_passing(unit.sentence):
                if name.lower() not in known:
                    known.add(name.lower())
                    found.append((unit, f"The user's {kin} is {name}."))
        if not found:
            return []
        vecs = np.asarray(self.embedder.embed([body for _, body in found]), dtype=np.float32)
        cls = "family" if "family" in protos.classes else "relationship"
        return [Cand(cls, "relationship", body, unit.msg, SALIENCE["relationship"], vec,
                     entities=entities(body), turns={unit.msg.turn})
                for (unit, body), vec in zip(found, vecs, strict=True)]

    def _typed(self, unit: Unit, row: Row, types: np.ndarray, vec: np.ndarray, protos: Prototypes) -> Cand | None:
        """The most likely type's card; a routine told with a day ("parkrun every Saturday") is
        a standing fact, not a plan; reported speech ("my manager priya says I'm ...") can only
        say who that person is, never the user's own fact or plan."""
        order = [TYPES[int(i)] for i in np.argsort(-types)]
        kind = order[0]
        day = unit.msg.ts.date()
        hit = find_date(unit.sentence, day)
        ahead = hit is not None and not hit.past and hit.end > day and not looks_past(unit.sentence)
        if kind == "plan" and hit is not None and called_off(unit.sentence, hit):
            return None  # a plan said in the negative is none, nor a fact in its place
        if _REPORTED.search(unit.sentence):
            kind = "relationship" if "relationship" in order[:3] else ""
        elif kind == "plan" and ROUTINE.search(unit.sentence):
            kind = next(k for k in order if k not in ("plan", "event"))
        elif kind == "plan" and not ahead:
            # no day ahead of its own: not a plan ("me and tamsin split up in january"), the next type
            kind = order[1]
        return self._card(unit, row, kind, vec, protos, hit, ahead) if kind else None

    def _card(self, unit: Unit, row: Row, kind: str, vec: np.ndarray, protos: Prototypes,
              hit: DateHit | None, future: bool) -> Cand | None:
        """The candidate card for an accepted sentence, unless its grammar says it states
        nothing yet: a question, a conditional or hedge (not a boundary), a plan without a future
        date of its own, a routine ("every Sunday"), or a plan someone else carries out."""
        sentence = unit.sentence
        if states_nothing(sentence, kind) and not states_identity(sentence):
            return None
        if "own" in self.gates and kind in ("fact", "preference", "plan", "event") and not users_own(sentence):
            return None
        day = unit.msg.ts.date()  # ``hit`` / ``future``: the sentence's date, as _typed found it
        if "episode" in self.gates and kind in ("fact", "preference") and one_episode(sentence, day, hit):
            return None
        expires = None
        if kind == "plan":
            if hit is None or not future or ROUTINE.search(sentence) or someone_else_acts(sentence, hit):
                return None  # (a plan said in the negative never gets here: ``_typed`` drops it)
            if self.plan_off is not None and float(off_score(vec, self.embedder)[0]) > float(self.plan_off):
                return None  # reads as a plan that is off (called off, skipped, missed, wished for)
            expires = hit.end
        context = row.previous if leans_on_previous(sentence) else ""
        best = unit.scores.best()[0] if unit.scores is not None else kind
        cls = best if best in protos.classes and protos.classes[best].type == kind else kind
        body = write_body(sentence, hit if future or kind == "event" else None, context)
        slot, lead = (unit.scores[cls], unit.scores.lead(cls)) if unit.scores is not None else (1.0, 1.0)
        return Cand(cls, kind, body, unit.msg, SALIENCE[kind], vec, entities=entities(sentence, context),
                    expires=expires, valid_from=day if kind in ("plan", "event") else None, turns={unit.msg.turn},
                    slot=slot, lead=lead, own=not told_of_someone_else(sentence)
                    and (cls not in IDENTITY_SLOTS or says_who_the_user_is(sentence)), sentence=sentence,
                    standing=standing(sentence, body, kind, cls, day, hit, context))


IDENTITY_SLOTS = frozenset({"name", "pronouns"})
"""The single slots a card replaces only from a sentence that says it of the user
(``cardtext.says_who_the_user_is``): someone else's name or pronouns read just like the user's."""
REFERENT_REACH = 4
"""How many of the user's earlier messages in the session a card's he or she is looked up in."""


def name_people(cands: Sequence[Cand], window: Sequence[MessageLike], active: Sequence[Card]) -> None:
    """Write into each card the person its unnamed he or she is (``coref.name_in_body``), looked
    up in the session's messages before the card's sentence and the sentences of its message up
    to it."""
    if not cands:
        return
    relationships = [c for c in active if c.type == "relationship"]
    from_cards = people_known([c.body for c in relationships], [e for c in relationships for e in c.entities])
    position = {id(m): i for i, m in enumerate(window)}
    for cand in cands:
        at = position.get(id(cand.msg))
        if at is None:
            continue
        earlier = [m.content for m in window[:at] if m.session == cand.msg.session and m.role == "user"][-REFERENT_REACH:]
        said = message_sentences(cand.msg.content)
        before = [*earlier, *(said[: said.index(cand.sentence)] if cand.sentence in said else [])]
        body, name = name_in_body(cand.body, before, {**from_cards, **people_known(before)})
        if body != cand.body:
            cand.body = body
            if name and name not in cand.entities:
                cand.entities = (*cand.entities, name)


def standing(sentence: str, body: str, kind: str, cls: str, day: dt.date, hit: DateHit | None,
             context: str = "") -> bool:
    """Does the card say who the user is (a profile line), not only what happened in chat? A
    boundary and the user's name or pronouns always do. Otherwise the card must have the user
    in it ("I", "my", "we"; or "the user" once a "he" is resolved to "the user's grandad") and
    not tell one past episode: "had a slice with butter and honey, best thing all week" and
    "six of us took three evenings on one panel" stay cards, found by search, but are not put
    in front of the model on every turn (stop 42, x-spine). A card written with the sentence
    before it ("he's 88. he taught me to draw") is an episode only when both sentences are."""
    if kind == "boundary" or cls in IDENTITY_SLOTS or states_identity(sentence):
        return True
    import os
    v = os.environ.get("MEMFS_SPINE", "both")
    if v != "episode" and not (first_person_anywhere(sentence) or _THE_USER.search(body)
            or context and first_person_anywhere(context)):
        return False
    if v == "fp":
        return True
    return not (one_episode(sentence, day, hit)
                and (not context or one_episode(context, day, find_date(context, day))))


_THE_USER = re.compile(r"\bthe user\b", re.IGNORECASE)


def one_episode(sentence: str, day: dt.date, hit: DateHit | None) -> bool:
    """Does ``sentence`` tell one past episode: a date of one day at or before ``day`` ("on
    sunday", "last night", "today"), or no date and the past tense?"""
    if hit is not None:
        return hit.start == hit.end and hit.end <= day
    return looks_past(sentence)


_CONDITIONAL_CLAUSE = re.compile(r"^\W*(?:\w+\s+){0,3}?(?:if|imagine|suppose|when we ever|one day|someday)\b"
                                 r"|\b(?:would|'d)\s+(?:probably\s+|definitely\s+|totally\s+)?\w+", re.IGNORECASE)


_WORD = re.compile(r"[^\W\d_]{3,}")


def states_nothing(sentence: str, kind: str) -> bool:
    """A question, a message with no word in it ("💍💍"), or, when the card would not be a
    boundary, a sentence said to the assistant (a question typed without "?", a request:
    ``speech.addressed``), a conditional or a hedge ("if I ever learn to drive ...", "I might
    apply"): no card of ``kind`` is written from it."""
    if sentence.rstrip().endswith("?") or not _WORD.search(sentence):
        return True  # a question, or no word at all ("💍💍", "ok x"): nothing stated yet
    return kind != "boundary" and bool(addressed(sentence) or _CONDITIONAL_CLAUSE.search(sentence)
                                       or HYPOTHETICAL.search(sentence) or HEDGE.search(sentence))
