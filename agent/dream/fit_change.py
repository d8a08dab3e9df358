"""Fit the change stage (``change.py``) on the dev windows' expected supersedes.

A dev window names the cards its conversation makes untrue (``expected.supersede``) and the cards
a dream should write (``expected.cards``), but not which sentence tells which change. A pair
(sentence, old card) is labelled a change when the old card is expected to be replaced and the
card written from the sentence matches a reference card of a compatible type; of several such
sentences, the one nearest the old card is the positive and the others are left out of the fit
(they may tell the change too, or tease it: "guess who quit"), as are the other sentences of a
window against a card it changes. Every other pair is a negative: talk about the same job, home or
partner that changes nothing, and other people's changes.

    python -m memfs.agent.dream.fit_change          # fit on every dev window, write data/change.npz
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream.cardtext import write_body
from memfs.agent.dream.change import DATA_PATH, Model, Pairs, pairs
from memfs.agent.dream.dates import find_date
from memfs.agent.dream.ops import WriteOp

from memfs.embed import Embedder

C = 0.05
"""Inverse L2 strength: a few hundred positives against ~400 features."""
POS_WEIGHT = 20.0
"""A positive row counts this many negatives (changes are rare among pairs)."""
THRESHOLD = 0.5


@dataclass
class Labelled:
    """One window's pairs and their labels: 1 change, 0 not, -1 left out."""

    window: ev.EvalWindow
    pairs: Pairs
    y: np.ndarray


def _tells(body: str, card_type: str, window: ev.EvalWindow) -> bool:
    op = WriteOp(type=card_type, body=body, entities=("user",))
    return any(ev.card_matches(op, ref) for ref in window.expected["cards"])


def label(window: ev.EvalWindow, found: Pairs) -> np.ndarray:
    y = np.zeros((len(found.said), len(found.cards)), dtype=np.int8)
    want = set(window.expected.get("supersede", []))
    for j, card in enumerate(found.cards):
        if card.id not in want:
            continue
        bodies = [write_body(s.sentence, find_date(s.sentence, s.msg.ts.date()), s.context) for s in found.said]
        tells = [i for i, body in enumerate(bodies) if _tells(body, card.type, window)]
        if not tells:
            continue
        best = max(tells, key=lambda i: float(found.x[i, j, 0]))
        y[:, j] = -1
        y[best, j] = 1
    return y


def labelled(windows: Sequence[ev.EvalWindow], embedder: Embedder) -> list[Labelled]:
    out = []
    for w in windows:
        found = pairs(w.messages, w.cards, embedder)
        out.append(Labelled(w, found, label(w, found)))
    return out


def stack(rows: Sequence[Labelled]) -> tuple[np.ndarray, np.ndarray]:
    xs = [r.pairs.x.reshape(-1, r.pairs.x.shape[-1]) for r in rows if r.pairs.x.size]
    ys = [r.y.reshape(-1) for r in rows if r.pairs.x.size]
    if not xs:
        return np.zeros((0, 1)), np.zeros(0)
    x, y = np.vstack(xs), np.concatenate(ys)
    keep = y >= 0
    return x[keep], y[keep]


def fit(rows: Sequence[Labelled], c: float = C, pos_weight: float = POS_WEIGHT,
        threshold: float = THRESHOLD) -> Model:
    from sklearn.linear_model import LogisticRegression

    x, y = stack(rows)
    weight = np.where(y > 0, pos_weight, 1.0)
    reg = LogisticRegression(C=c, max_iter=3000).fit(x, y, sample_weight=weight)
    return Model(reg.coef_[0].astype(np.float32), float(reg.intercept_[0]), threshold)


def main(argv: Sequence[str] | None = None) -> int:
    from memfs.agent.dream.devset import dev_windows

    from memfs.embed import SentenceTransformerEmbedder

    del argv
    model = fit(labelled(dev_windows(), SentenceTransformerEmbedder()))
    model.save(DATA_PATH)
    print(f"wrote {DATA_PATH} ({model.w.shape[0]} weights, threshold {model.threshold})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
