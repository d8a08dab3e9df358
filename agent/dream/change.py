"""Is a standing fact still true? A change stage that reads (sentence, active card) pairs.

People rarely tell a change in the words of the card it ends: "handed in my apron", "out of
lancaster finally!!", "keys to the new place smell of paint". On extraction blind34 only 3 of 22
changes were superseded by a right card, and 12 of the 22 sentences that told one scored under 0.25
for every card class (BENCHMARKS.md, stop 38), so they never became a candidate and no rule about
which card a *candidate* replaces could reach them (stop 38's x-sup). Reading every sentence against
the cards with MiniLM's separate embeddings does not work either: "I've been at Lumen for six years
though" sits as near its job card as "I'm off the grill in río grande!" does to its own, and every
cosine score or regression over them bought each right supersede with a card wrongly made stale
(stop 33's x-end2, stop 39's logistic x-chg).

So the judge reads the two texts *together*: MiniLM's transformer with a one-logit head
(``CrossJudge``), fine-tuned on the dev windows' labelled pairs and on helper-written banks of
changes, continuity talk, other people's changes and hypotheticals (``fit_change.py``). Each user
sentence of the window (questions, hypotheticals and hedges excepted) is judged against its nearest
active fact, relationship or preference card that no op of the window already replaces.

A pair the judge believes is **flagged, not acted on**: the card stays active and gets a
``possible_change`` (the date and the user's words), shown beside it in every context. Ending the
card was tried at stop 40: on fresh text the stage found the right card in about half the changes,
but every supersede it made on a guess ended a true fact (about one for every two it got right), and
a lost true fact is worse than a stale one the model can see questioned. A flag loses nothing; the
person settles it by hand, or a later dream's supersede does.

The judge is the mean of two fine-tunes with different seeds (one fine-tune's dev estimate moved by
about five supersedes between training draws). Their weights ship as int8 differences from the
packaged MiniLM's (``data/change_judge.npz``); without that file, or with another embedding model,
the stage does nothing. In a dream the judge runs on onnxruntime like the embedder
(``judge_onnx``): exported with torch once, then never importing it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from memfs.agent.dream.ops import Extraction, FlagOp, MessageLike, Op, op_targets
from memfs.agent.dream.rules.text import first_person

from memfs.cards import Card
from memfs.embed import DEFAULT_MODEL, Embedder

JUDGE_PATH = Path(__file__).parent / "data" / "change_judge.npz"
KINDS = ("fact", "relationship", "preference")
"""The old cards a change may replace: a plan or an event is retired, not replaced."""
FLAG_THRESHOLD = 0.90
"""The judge's probability (the mean of its members') from which a card is flagged, chosen with
``FLOOR`` on dev splits the shipped judge is not fit on, with at most one card wrongly flagged for
two changes found on each of them: the change-dense blind35-37 (27 of 68 changes flagged or
superseded, main alone 3; 9 wrong flags) and the talk-heavy blind39 (8 of 26, main 4; 2 wrong), and
9 cards flagged over nine 1,600-message pairs of ordinary chat (profile blind13-15, where nothing
changes). Stop 41, x-flag4; BENCHMARKS.md."""
TOP_CARDS = 1
"""Each sentence is judged against its nearest card only: a dream over a pair with hundreds of cards
stays one pair per sentence (with the floor, three nearest cards gave the same dev counts)."""
FLOOR = 0.25
"""A (sentence, card) pair less alike (cosine) than this is not judged: judged against its nearest card however
far, a sentence about something else ("took another spot off my shoulder") was read as ending the
card nearest it ("barracks for Port Adelaide"; stop 40, x-chg2 on dev)."""
MAX_TOKENS = 128
"""A (sentence, card) pair is cut to this many tokens, longest part first, in the fit and at run time."""


@dataclass(frozen=True)
class Said:
    """A user sentence of the window, with the sentence it leans on (``cardtext.leans_on_previous``)."""

    msg: MessageLike
    sentence: str
    context: str

    @property
    def text(self) -> str:
        return (self.context + " " + self.sentence).strip()


def user_sentences(window: Sequence[MessageLike]) -> list[Said]:
    """Every whole sentence the user typed in the window, questions, hypotheticals and hedges
    excepted ("if I got the halden job I'd move to bristol" changes nothing yet)."""
    from memfs.agent.dream.extract_semantic import _speculative, _units

    return [Said(u.msg, u.sentence, u.context) for u in _units(window)
            if u.text == u.sentence and not u.sentence.rstrip().endswith("?") and not _speculative(u.sentence)]


@dataclass
class Nearby:
    """A window's sentences, the active cards a change may replace, and their cosines."""

    said: list[Said]
    cards: list[Card]
    sims: np.ndarray
    """Shape (sentences, cards)."""


def nearby(window: Sequence[MessageLike], cards: Sequence[Card], embedder: Embedder) -> Nearby:
    said = user_sentences(window)
    olds = [c for c in cards if c.status == "active" and c.type in KINDS]
    if not said or not olds:
        return Nearby(said, olds, np.zeros((len(said), len(olds)), dtype=np.float32))
    vecs = np.asarray(embedder.embed([s.sentence for s in said] + [first_person(c.body) for c in olds]),
                      dtype=np.float32)
    return Nearby(said, olds, vecs[: len(said)] @ vecs[len(said):].T)


def nearest(sims: np.ndarray, top: int = TOP_CARDS, floor: float = FLOOR) -> list[tuple[int, int]]:
    """The (sentence, card) pairs to judge: each sentence with its ``top`` nearest cards, if at
    least ``floor`` alike."""
    if sims.size == 0:
        return []
    order = np.argsort(-sims, axis=1)[:, :top]
    return [(i, int(j)) for i in range(sims.shape[0]) for j in order[i] if sims[i, j] >= floor]


class CrossJudge:
    """p(change) for (sentence, card) pairs: the mean of its members' probabilities (fine-tunes with
    different seeds; one fine-tune's estimate moved by about five supersedes between training draws,
    stop 39). The members are loaded on first use."""

    def __init__(self, path: Path = JUDGE_PATH, model: Any = None, models: Sequence[Any] = ()) -> None:
        """``model``/``models``: already fine-tuned ones (a fit's held-out estimate) instead of ``path``'s."""
        self.path = path
        self._models: list[Any] = [*([model] if model is not None else []), *models]
        self._tok: Any = None
        if self._models:
            from transformers import AutoTokenizer

            from memfs.embed import resolve_model

            self._tok = AutoTokenizer.from_pretrained(resolve_model(DEFAULT_MODEL))

    def available(self) -> bool:
        return bool(self._models) or self.path.exists()

    def members(self) -> list[Any]:
        """The torch models (loading them from ``path`` if need be)."""
        if not self._models:
            self._load()
        return self._models

    def _load(self) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as hf_logging

        from memfs.embed import resolve_model

        base = resolve_model(DEFAULT_MODEL)
        with np.load(self.path) as data:
            tags = sorted({key.split("/", 1)[0] for key in data.files})
            for tag in tags:
                level = hf_logging.get_verbosity()
                hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # the base checkpoint has no head, by design
                try:
                    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
                finally:
                    hf_logging.set_verbosity(level)
                state = model.state_dict()
                for key in data.files:
                    member, rest = key.split("/", 1)
                    kind, name = rest.split(":", 1)
                    if member != tag:
                        continue
                    if kind == "full":
                        state[name] = torch.from_numpy(np.asarray(data[key], dtype=np.float32))
                    elif kind == "q":
                        delta = np.asarray(data[key], dtype=np.float32) * float(data[f"{tag}/s:{name}"])
                        state[name] = state[name] + torch.from_numpy(delta)
                model.load_state_dict(state)
                model.eval()
                self._models.append(model)
        self._tok = AutoTokenizer.from_pretrained(base)

    def __call__(self, said: Sequence[str], cards: Sequence[str]) -> np.ndarray:
        if not said:
            return np.zeros(0, dtype=np.float32)
        models = self.members()
        import torch

        out = []
        with torch.no_grad():
            for b in range(0, len(said), 64):
                enc = self._tok(list(said[b:b + 64]), list(cards[b:b + 64]), truncation=True, max_length=MAX_TOKENS,
                                padding=True, return_tensors="pt")
                out.append(np.mean([torch.sigmoid(m(**enc).logits.squeeze(-1)).numpy() for m in models], axis=0))
        return np.concatenate(out).astype(np.float32)


class Judge(Protocol):
    def __call__(self, said: Sequence[str], cards: Sequence[str]) -> np.ndarray: ...


_SHIPPED: dict[tuple[str, str], Judge] = {}


def shipped_judge(embedder: Embedder) -> Judge | None:
    """``data/change_judge.npz``'s judge, loaded once per process; None when the file is absent.
    Beside the torch-free embedder it runs on onnxruntime too (``judge_onnx``), exported once into
    the embedder's models folder; beside sentence-transformers, torch is loaded already. A dream's
    embedder is wrapped (a vector cache, a memo of recent texts), so the wrappers are looked through:
    judged by what it wrapped, the first judge of stop 41 took torch into every dream (+5 s and
    +290 MB on the offline demo)."""
    if not JUDGE_PATH.exists():
        return None
    from memfs.embed_onnx import OnnxEmbedder

    inner: Any = embedder
    while not isinstance(inner, OnnxEmbedder) and getattr(inner, "inner", None) is not None:
        inner = inner.inner
    folder = str(inner.path.parent) if isinstance(inner, OnnxEmbedder) else ""
    key = (str(JUDGE_PATH), folder)
    if key not in _SHIPPED:
        from memfs.agent.dream.judge_onnx import judge_for

        _SHIPPED[key] = judge_for(JUDGE_PATH, Path(folder)) if folder else CrossJudge(JUDGE_PATH)
    return _SHIPPED[key]


def judged(found: Nearby, judge: Judge, used: set[str], top: int = TOP_CARDS, floor: float = FLOOR) -> np.ndarray:
    """p(change) per (sentence, card); 0 where not judged (not among the sentence's nearest cards,
    under the floor, or a card an op of the window already replaces)."""
    p = np.zeros(found.sims.shape, dtype=np.float32)
    pairs = [(i, j) for i, j in nearest(found.sims, top, floor) if found.cards[j].id not in used]
    if pairs:
        got = judge([found.said[i].text for i, _ in pairs], [found.cards[j].body for _, j in pairs])
        for (i, j), q in zip(pairs, got, strict=True):
            p[i, j] = q
    return p


def decide(p: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """(sentence, card) pairs to act on: each card's best sentence past ``threshold``, best first,
    each sentence ending at most one card."""
    picks: list[tuple[int, int]] = []
    taken: set[int] = set()
    if p.size == 0:
        return picks
    for j in sorted(range(p.shape[1]), key=lambda j: -float(p[:, j].max())):
        col = np.where([i in taken for i in range(p.shape[0])], -1.0, p[:, j])
        i = int(np.argmax(col))
        if col[i] >= threshold:
            picks.append((i, j))
            taken.add(i)
    return picks


def with_flags(extraction: Extraction, window: Sequence[MessageLike], cards: Sequence[Card],
               embedder: Embedder, judge: Judge | None = None, threshold: float | None = None,
               floor: float | None = None) -> Extraction:
    """``extraction`` with a flag on each active card a sentence of the window may make untrue;
    cards an op already supersedes, merges or retires are left to that op. ``threshold`` and
    ``floor`` default to the module's (read at the call, so a bench can move them)."""
    if embedder.name != DEFAULT_MODEL:
        return extraction
    judge = judge or shipped_judge(embedder)
    if judge is None:
        return extraction
    found = nearby(window, cards, embedder)
    if not found.said or not found.cards:
        return extraction
    used = {t for op in extraction.ops for t in op_targets(op)}
    return flag(extraction, found, judged(found, judge, used, TOP_CARDS, FLOOR if floor is None else floor),
                FLAG_THRESHOLD if threshold is None else threshold)


def flag(extraction: Extraction, found: Nearby, p: np.ndarray, threshold: float) -> Extraction:
    """The flags ``p`` (sentence x card) asks for: each card's likeliest sentence past ``threshold``,
    each sentence questioning one card at most."""
    used = {t for op in extraction.ops for t in op_targets(op)}
    p = np.where([[c.id in used for c in found.cards]], -1.0, p) if p.size else p
    flags: list[Op] = [FlagOp(id=found.cards[j].id, words=found.said[i].text, said=found.said[i].msg.ts,
                              session=found.said[i].msg.session, turn=found.said[i].msg.turn)
                       for i, j in decide(p, threshold)]
    return replace(extraction, ops=[*extraction.ops, *flags]) if flags else extraction
