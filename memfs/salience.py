"""How much a past message matters, decided once, when it is indexed: no model call.

The companion-memory article's lesson: tag messages at write time (personal fact,
emotional intensity, constraint), and let that weigh in at retrieval. A user's statement
about their health, diet, safety, a boundary, who they are, their family, home or work
must outrank small talk ("what a day") and generic assistant filler ("Tell me more!").

A word list fitted to the sentences one has read plateaus fast (the offline extractor did),
so the score leans on the embedding model the index already runs: each message's vector
is compared with a few prototype sentences per category (``PERSONAL``) and with prototypes
of small talk and filler (``CHATTER``); the margin between the two goes through a logistic
curve together with cheap structural cues (who said it, first person, length, a bare
question). Calibrated on ``agent/evals/data/salience_dev.jsonl``; the result is a
number in [0, 1] stored per row, like a card's own ``salience``.

``message_limit`` is the second write-time score: how much a row sounds like a standing
limit or circumstance (a health condition, a doctor's order, a belief, a fear, money, a
dependent), in any domain. A suggestion's constraint search (``memfs.constraints``) starts
from the few rows it ranks highest, whatever the request's words (issue 12, sixth round).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memfs.constraint_domains import CIRCUMSTANCES, DOMAIN_LIMITS, LIMITS, NEWS
from memfs.embed import Embedder

PERSONAL: dict[str, tuple[str, ...]] = {
    "health": ("I have a chronic illness and take medication every day.",
               "The doctor told me I need surgery.",
               "I've been struggling with my mental health."),
    "diet": ("I can't eat certain foods, they make me ill.",
             "I don't eat meat or fish.",
             "I'm on a strict diet for medical reasons."),
    "safety": ("That situation is dangerous for me and I have to avoid it.",
               "Please never suggest that, it isn't safe for me."),
    "boundary": ("Please don't talk to me about that topic.",
                 "I don't want you to call me that."),
    "identity": ("I grew up in another country and moved here as a child.",
                 "My name is Sam and I'm thirty-four.",
                 "My religion is important to me."),
    "family": ("My sister is getting married next year.",
               "My father passed away when I was young.",
               "My son just started school."),
    "home": ("I live in a small flat with my partner.",
             "We are moving house next month."),
    "work": ("I work as a nurse at the hospital.",
             "I lost my job last week.",
             "My boss is making my life difficult."),
    "feeling": ("I've been feeling really anxious and lonely lately.",
                "I was devastated when it happened."),
    "constraint": ("I can't do that because of my condition.",
                   "That always makes me panic, so I stay away from it."),
}
CHATTER: tuple[str, ...] = (
    "Haha, that's funny.", "Tell me more!", "Oh nice!", "Good morning, how are you?",
    "That sounds lovely.", "What a day.", "Okay, cool.", "Sounds good to me!",
    "The weather is nice today.", "I had a sandwich for lunch.", "lol yeah",
    "What are you up to?", "Interesting, go on.",
    # everyday first-person chatter: said about one's day, not about one's life
    "I need to do the washing up later.", "The weekend went by so quickly.",
    "I watched a couple of episodes of a show last night.", "I'm heading out now, talk later.",
    "The neighbours are being noisy again.", "I finally cleaned the kitchen.",
    "I'm reading a good book at the moment.", "I went for a walk earlier.",
    "I'm so tired today.", "I bought a new mug.",
)

# Structural cues: general English, not phrases from any data set.
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|our|us)\b", re.I)
_WORD = re.compile(r"\w+")

# Calibration (salience_dev.jsonl, see BENCHMARKS.md): logistic over these features.
MARGIN_WEIGHT = 9.0
"""Per unit of (best personal similarity - best chatter similarity)."""
FIRST_PERSON_WEIGHT = 0.8
ASSISTANT_WEIGHT = -1.2
SHORT_WEIGHT = -1.5
"""At one word; fading to 0 at ``SHORT_WORDS`` words."""
SHORT_WORDS = 8
QUESTION_WEIGHT = -0.4
BIAS = 0.2

_PROTOTYPES: dict[str, tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]] = {}


def prototypes(embedder: Embedder) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """(personal, chatter) prototype vectors for ``embedder`` (embedded once per process)."""
    cached = _PROTOTYPES.get(embedder.name)
    if cached is None or cached[0].shape[1] != embedder.dim:
        personal = [s for group in PERSONAL.values() for s in group]
        vectors = np.asarray(embedder.embed([*personal, *CHATTER]), dtype=np.float32)
        cached = _PROTOTYPES[embedder.name] = (vectors[:len(personal)], vectors[len(personal):])
    return cached


def message_salience(texts: Sequence[str], roles: Sequence[str | None],
                     vectors: npt.NDArray[np.floating], embedder: Embedder) -> npt.NDArray[np.float32]:
    """Salience in [0, 1] of each message (``vectors`` row-aligned, L2-normalised)."""
    if not len(texts):
        return np.zeros(0, dtype=np.float32)
    personal, chatter = prototypes(embedder)
    vecs = np.asarray(vectors, dtype=np.float32)
    margin = (vecs @ personal.T).max(axis=1) - (vecs @ chatter.T).max(axis=1)
    cues = np.array([_cues(t, r) for t, r in zip(texts, roles)], dtype=np.float32)
    logit = MARGIN_WEIGHT * margin + cues + BIAS
    out: npt.NDArray[np.float32] = (1.0 / (1.0 + np.exp(-logit))).astype(np.float32)
    return out


def _cues(text: str, role: str | None) -> float:
    """The structural part of the logit."""
    words = len(_WORD.findall(text))
    value = 0.0
    if role == "assistant":
        value += ASSISTANT_WEIGHT
    elif _FIRST_PERSON.search(text):
        value += FIRST_PERSON_WEIGHT
    if words < SHORT_WORDS:
        value += SHORT_WEIGHT * (SHORT_WORDS - max(words, 1)) / (SHORT_WORDS - 1)
    if text.rstrip().endswith("?") and words < 2 * SHORT_WORDS:
        value += QUESTION_WEIGHT
    return value


def logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


LIMIT_SALIENCE = 0.5
"""Weight of salience in ``message_limit`` (a personal statement is likelier a limit)."""
NOT_LIMIT = -1.0
"""``message_limit`` of a row that cannot state the user's constraint: the assistant's
messages and the summary."""

_LIMIT_PROTOTYPES: dict[str, tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]] = {}


def limit_prototypes(embedder: Embedder) -> tuple[npt.NDArray[np.float32],
                                                  npt.NDArray[np.float32]]:
    """(limit, not-limit) prototype vectors for ``embedder``: every limit of the domain
    model (``memfs.constraint_domains``: ``LIMITS``, each domain's ``DOMAIN_LIMITS``,
    ``CIRCUMSTANCES``) against personal news and chatter (``NEWS``, ``CHATTER``)."""
    cached = _LIMIT_PROTOTYPES.get(embedder.name)
    if cached is None or cached[0].shape[1] != embedder.dim:
        limits = [*LIMITS, *(s for group in DOMAIN_LIMITS.values() for s in group),
                  *CIRCUMSTANCES]
        vectors = np.asarray(embedder.embed([*limits, *NEWS, *CHATTER]), dtype=np.float32)
        cached = _LIMIT_PROTOTYPES[embedder.name] = (vectors[:len(limits)],
                                                      vectors[len(limits):])
    return cached


LIMIT_MODEL_PATH = Path(__file__).parent / "data" / "limit_model.npz"
"""A logistic regression on the embedding (``w``, ``b``), fit by ``python -m
memfs.agent.requests.fit_limit`` on the spent constraint splits' limits against chat."""
NOT_LEARNED = -30.0
"""``learned_limit`` of a row that is not the user's message (cards, the assistant, the summary)."""
_LIMIT_MODEL: dict[str, LimitWeights | None] = {}


@dataclass(frozen=True)
class LimitWeights:
    """The learned limit model: is a line a limit (``w``, ``b``), and of which domain, if it
    is one (``dw``: a row per domain of ``memfs.constraint_domains.DOMAINS``, ``db``; None in
    a file without them)."""

    w: npt.NDArray[np.float32]
    b: float
    dw: npt.NDArray[np.float32] | None = None
    db: npt.NDArray[np.float32] | None = None
    aw: npt.NDArray[np.float32] | None = None
    """The second limit regression (``aw``, ``ab``; None in a file without it), fit with real
    chat with an assistant as chat (stop 38, c-mix): in such a history the first one's best
    rows are long questions to the assistant, in chat between friends this one misses long,
    explanatory limits. The constraint search takes the best rows of each."""
    ab: float | None = None


def limit_model(path: Path | None = None) -> LimitWeights | None:
    """The learned limit model, loaded once; None when the file is absent or damaged (every
    row then gets ``NOT_LEARNED``)."""
    key = str(path or LIMIT_MODEL_PATH)
    if key not in _LIMIT_MODEL:
        try:
            with np.load(key) as data:
                domains = "dw" in data.files and "db" in data.files
                asked = "aw" in data.files and "ab" in data.files
                _LIMIT_MODEL[key] = LimitWeights(
                    np.asarray(data["w"], dtype=np.float32), float(data["b"]),
                    np.asarray(data["dw"], dtype=np.float32) if domains else None,
                    np.asarray(data["db"], dtype=np.float32) if domains else None,
                    np.asarray(data["aw"], dtype=np.float32) if asked else None,
                    float(data["ab"]) if asked else None)
        except (OSError, KeyError, ValueError):
            _LIMIT_MODEL[key] = None
    return _LIMIT_MODEL[key]


def limit_domains(vectors: npt.NDArray[np.floating], path: Path | None = None) -> npt.NDArray[np.float32] | None:
    """Per row of ``vectors``, the learned model's probability of each domain (rows x
    ``DOMAINS``), were the row a limit; None without the model. Read at query time for the
    constraint search's candidates only (~120 rows)."""
    model = limit_model(path)
    vecs = np.asarray(vectors, dtype=np.float32)
    if model is None or model.dw is None or model.db is None or model.dw.shape[1] != vecs.shape[1]:
        return None
    z = vecs @ model.dw.T + model.db
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float32)


def learned_limit(speakers: Sequence[str | None], vectors: npt.NDArray[np.floating],
                  path: Path | None = None, asked: bool = False) -> npt.NDArray[np.float32]:
    """The learned limit model's logit for each of the user's messages (``NOT_LEARNED`` for
    every other row). The prototype score (``message_limit``) reads a limit by its likeness to
    ~100 general sentences, and an indirect one ("the kidney clinic keeps me on a tight
    budget of potassium") ranks below hundreds of chat lines; a regression fit on real limits
    and real chat ranks most of them among a pair's best 40 (BENCHMARKS.md, stop 35, c-limit).
    Fixed at write time, like the prototype score. ``asked``: the second regression's logit
    (``LimitWeights.aw``), ``NOT_LEARNED`` for every row when the file has none."""
    out = np.full(len(speakers), NOT_LEARNED, dtype=np.float32)
    model = limit_model(path)
    rows = [n for n, who in enumerate(speakers) if who == "user"]
    if model is None or not rows:
        return out
    w, b = (model.aw, model.ab) if asked else (model.w, model.b)
    if w is None or b is None or w.shape[0] != np.asarray(vectors).shape[1]:
        return out
    out[rows] = np.asarray(vectors, dtype=np.float32)[rows] @ w + b
    return out


def message_limit(speakers: Sequence[str | None], vectors: npt.NDArray[np.floating],
                  salience: npt.NDArray[np.float32], embedder: Embedder) -> npt.NDArray[np.float32]:
    """How much each row sounds like a standing limit or circumstance that binds the user
    (theirs, or of someone they look after or buy for), whatever its domain: best cosine
    to a limit minus best cosine to news or chatter, plus ``LIMIT_SALIENCE`` x salience.
    Only the user's messages (``speakers`` "user") and cards ("card") are scored; every
    other row gets ``NOT_LIMIT``. Fixed at write time, like salience, so a
    suggestion's constraint search starts from the few rows that state a limit rather than
    from the rows near the request's words (``memfs.constraints``)."""
    out = np.full(len(speakers), NOT_LIMIT, dtype=np.float32)
    rows = [n for n, who in enumerate(speakers) if who in ("user", "card")]
    if not rows:
        return out
    limits, other = limit_prototypes(embedder)
    vecs = np.asarray(vectors, dtype=np.float32)[rows]
    margin = (vecs @ limits.T).max(axis=1) - (vecs @ other.T).max(axis=1)
    out[rows] = margin + LIMIT_SALIENCE * np.asarray(salience, dtype=np.float32)[rows]
    return out
