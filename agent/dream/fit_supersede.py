"""Fit the learned supersede decision (``supersede.py``) and write ``data/supersede.npz``.

    python -m memfs.agent.dream.fit_supersede            # fit on every dev window, write the file
    python -m memfs.agent.dream.fit_supersede --loso     # leave one split out: the dev estimate

The rows are the pairs the decision is asked about in a dream: each candidate card of a dev window
(the shipped extractor's, fronted by the rules) that the slot rule does not already set against a
card, against each active card of ``supersede.KINDS``. A pair is positive when the window expects
the old card superseded and the candidate is the one, among the window's candidates that match a
reference card, that names the most of the old card's words (then the nearest): ``supersede_matched``
counts a supersede only when the replacing card is right. Only dev windows are read
(``devset.dev_windows``: never a blind split that has not been measured).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from memfs.agent.dream import extract_semantic as S
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream.ops import WriteOp
from memfs.agent.dream.prototypes import load_prototypes
from memfs.agent.dream.supersede import DATA_PATH, KINDS, N_FEATURES, Decider, Model, content_words

from memfs.embed import Embedder

C = 1.0
"""scikit-learn's ``C``; fixed, not tuned."""
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)
"""The decision's threshold is the one of these that makes the most right supersedes minus wrong
ones on the windows it is fit on."""


@dataclass
class Asked:
    """One candidate the decision is asked about: its rows against the window's active cards."""

    window: str
    split: str
    rows: np.ndarray
    allowed: np.ndarray
    labels: np.ndarray
    wanted: np.ndarray
    """Per active card: does the window expect it superseded?"""


def collect(embedder: Embedder, windows: Sequence[ev.EvalWindow]) -> list[Asked]:
    """Every ``Asked`` of ``windows``, from one run of the shipped extractor with the decision off."""
    from memfs.agent.dream import fit_learned, learned

    protos = load_prototypes(embedder)
    dummy = Model(np.zeros(N_FEATURES, np.float32), 0.0, 1.0)
    seen: list[tuple[list[S.Cand], Sequence[S.Card], np.ndarray, Sequence[str], S.Thresholds, frozenset[str]]] = []
    original = S._resolve

    def spy(cands, active, card_vecs, card_classes, th, single, decide=None):  # type: ignore[no-untyped-def]
        seen.append((list(cands), list(active), card_vecs, list(card_classes), th, single))
        return original(cands, active, card_vecs, card_classes, th, single, None)

    extractor = fit_learned.with_rules(learned.LearnedExtractor(embedder))
    out: list[Asked] = []
    S._resolve = spy  # type: ignore[assignment]
    try:
        for w in windows:
            seen.clear()
            extractor(w.messages, w.cards, w.summary, w.now)
            out += _asked(w, seen, protos, embedder, dummy)
    finally:
        S._resolve = original  # type: ignore[assignment]
    return out


def _asked(w: ev.EvalWindow, seen: list, protos, embedder: Embedder, dummy: Model) -> list[Asked]:  # type: ignore[type-arg,no-untyped-def]
    want = set(w.expected.get("supersede", []))
    refs = w.expected.get("cards", [])
    out: list[Asked] = []
    for cands, active, card_vecs, card_classes, th, single in seen:
        if not active:
            continue
        decide = Decider(dummy, protos, embedder, active, card_vecs, single)
        used: set[str] = set()
        pending: list[tuple[S.Cand, np.ndarray, np.ndarray]] = []
        for c in cands:
            sims = card_vecs @ c.vector
            if float(sims.max()) >= th.duplicate:
                continue
            old = S._replaced(c, active, sims, card_classes, th, used, single)
            if old is not None:
                used.add(old.id)
            elif c.type in KINDS:
                pending.append((c, sims, decide.rows(c, sims)))
        wanted = np.array([a.id in want and a.id not in used for a in active])
        labels = {n: np.zeros(len(active), dtype=bool) for n in range(len(pending))}
        right = [n for n, (c, _, _) in enumerate(pending)
                 if any(ev.card_matches(_op(c), r) for r in refs)]
        for i, card in enumerate(active):
            if not wanted[i] or not right:
                continue
            words = content_words(card.body)
            best = max(right, key=lambda n: (len(words & content_words(pending[n][0].sentence or pending[n][0].body)),
                                              float(pending[n][1][i])))
            labels[best][i] = True
        out += [Asked(w.id, w.split, rows, decide.allowed.copy(), labels[n], wanted)
                for n, (_, _, rows) in enumerate(pending)]
    return out


def _op(c: S.Cand) -> WriteOp:
    return WriteOp(type=c.type, body=c.body, entities=c.entities, salience=round(c.salience, 2),  # type: ignore[arg-type]
                   valid_from=c.valid_from, expires=c.expires, turns=tuple(sorted(c.turns)), session=c.msg.session)


def fit(asked: Sequence[Asked], c: float = C) -> Model:
    """The regression on the allowed pairs of ``asked``, class-balanced, and its threshold."""
    from sklearn.linear_model import LogisticRegression

    x = np.concatenate([a.rows[a.allowed] for a in asked])
    y = np.concatenate([a.labels[a.allowed] for a in asked])
    reg = LogisticRegression(C=c, max_iter=2000, class_weight="balanced").fit(x, y.astype(int))
    model = Model(reg.coef_[0].astype(np.float32), float(reg.intercept_[0]), 1.0)
    return max((Model(model.w, model.b, t) for t in THRESHOLDS), key=lambda m: _net(m, asked))


def _net(model: Model, asked: Sequence[Asked]) -> int:
    """Right supersedes minus wrong ones, deciding as ``_resolve`` does (the best card per
    candidate, each card once per window)."""
    net = 0
    used: dict[str, set[int]] = {}
    for a in asked:
        p = np.where(a.allowed, model.p(a.rows), 0.0)
        taken = used.setdefault(a.window, set())
        p[list(taken)] = 0.0
        if len(p) and float(p.max()) >= model.threshold:
            i = int(np.argmax(p))
            taken.add(i)
            net += 1 if a.labels[i] else -1
    return net


def main(argv: Sequence[str] | None = None) -> None:
    from memfs.agent.dream.devset import dev_windows
    from memfs.embed import default_embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(DATA_PATH))
    args = parser.parse_args(argv)
    asked = collect(default_embedder(), dev_windows())
    model = fit(asked)
    model.save(type(DATA_PATH)(args.out))
    pos = int(sum(a.labels[a.allowed].sum() for a in asked))
    print(f"supersede model: {len(asked)} candidates, {pos} positive pairs, threshold {model.threshold} -> {args.out}")


if __name__ == "__main__":
    main()
