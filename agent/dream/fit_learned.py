"""Fit the learned extractor (``learned.py``) on the dev windows and write ``data/learned.npz``.

    python -m memfs.agent.dream.fit_learned

Reproducible: deterministic (lbfgs), the same windows in the same order. Reads only dev
windows (``devset.dev_windows``: never an unmeasured blind split) and never the planted-facts
scenario (``agent/evals/planted_data.py`` is not in the extraction set).

Labels, per user sentence of a window (``learned.rows_of``):

- a reference card's type, for the first sentence the extractor could write it from (not a
  question, not a conditional or hedge unless it is a boundary, and no ``forbidden`` card: "if
  tamsin and I had stayed together ..." holds the keyword "tamsin" of the boundary about her,
  but teaching it as that boundary taught the model to accept hypotheticals) that holds every
  keyword of it itself, else
  the first whose card body (as the extractor would write it, with the sentence it leans on)
  holds every keyword of that reference and, for a dated plan, the same end date; when no
  single sentence does, the sentence that completes it with the one before (facts told over two
  messages);
- ``none`` for every other sentence; a sentence that would write a ``forbidden`` card (other
  people's facts, hypotheticals, reported speech) is a negative weighted ``FORBIDDEN_WEIGHT``.

The acceptance probability is chosen without the fold being scored: each training split is
held out in turn (an inner leave-one-split-out), and the threshold with the best
sentence-level F0.5 on those out-of-fold probabilities is kept (precision counts double).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream.cardtext import leans_on_previous, normalise, write_body
from memfs.agent.dream.dates import find_date
from memfs.agent.dream.extract_semantic import _units
from memfs.agent.dream.learned import (
    TYPES,
    LearnedExtractor,
    Model,
    Row,
    features,
    rows_of,
    states_nothing,
)
from memfs.agent.dream.prototypes import load_prototypes

from memfs.embed import Embedder

CLASSES = ("none", *TYPES)
L2 = 3.0
"""Inverse regularisation strength (scikit-learn's ``C``)."""
FORBIDDEN_WEIGHT = 3.0
THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
INNER_FOLDS = 4
BETA = 0.5


def _body(row: Row) -> tuple[str, dt.date | None]:
    hit = find_date(row.sentence, row.msg.ts.date())
    context = row.previous if leans_on_previous(row.sentence) else ""
    return write_body(row.sentence, hit, context).lower(), hit.end if hit is not None else None


def _holds(text: str, keywords: Sequence[str]) -> bool:
    return all(any(alt.lower() in text for alt in kw.split("|")) for kw in keywords)


def labels(window: ev.EvalWindow, rows: Sequence[Row]) -> tuple[list[int], list[float]]:
    """Class index and sample weight per row of one window (see the module docstring)."""
    y = [0] * len(rows)
    weight = [1.0] * len(rows)
    bodies = [_body(r) for r in rows]
    forbidden = [_forbidden(body, window) for body, _ in bodies]
    for ref in window.expected["cards"]:
        want = ref.get("expires")
        free = [i for i in range(len(rows)) if y[i] == 0 and not forbidden[i] and _writable(rows[i], ref["type"])]

        def dated(i: int, want: Any = want) -> bool:
            end = bodies[i][1]
            return not want or (end is not None and end.isoformat() == want)

        own = [i for i in free if _holds(normalise(rows[i].sentence).lower(), ref["keywords"]) and dated(i)]
        alone = own or [i for i in free if _holds(bodies[i][0], ref["keywords"]) and dated(i)]
        joined = [i for i in free if i and _holds(bodies[i - 1][0] + " " + bodies[i][0], ref["keywords"])
                  and (dated(i) or dated(i - 1))]
        if alone or joined:
            y[(alone or joined)[0]] = CLASSES.index(ref["type"])
    for i in range(len(rows)):
        if y[i] == 0 and forbidden[i]:
            weight[i] = FORBIDDEN_WEIGHT
    return y, weight


def _forbidden(body: str, window: ev.EvalWindow) -> bool:
    return any(_holds(body, f["keywords"]) and not any(u.lower() in body for u in f.get("unless", []))
               for f in window.expected.get("forbidden", []))


def _writable(row: Row, kind: str) -> bool:
    """Could the extractor write a card of ``kind`` from this sentence at all (``learned._card``'s
    grammar gates)? A label it can never act on only teaches the classifier the wrong thing."""
    return not states_nothing(row.sentence, kind)


def training_set(windows: Sequence[ev.EvalWindow], embedder: Embedder) -> tuple[np.ndarray, np.ndarray,
                                                                                np.ndarray, np.ndarray]:
    """Features, labels, weights and split name of every user sentence of ``windows``."""
    xs, ys, ws, groups = [], [], [], []
    protos = load_prototypes(embedder)
    for w in windows:
        rows = rows_of(w.messages, _units(w.messages))
        y, weight = labels(w, rows)
        xs.append(features(rows, embedder, protos))
        ys += y
        ws += weight
        groups += [w.split] * len(rows)
    return np.vstack(xs), np.array(ys), np.array(ws), np.array(groups)


def _logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=L2, max_iter=3000, class_weight="balanced").fit(x, y, sample_weight=weight)


def fit_model(x: np.ndarray, y: np.ndarray, weight: np.ndarray, threshold: float) -> Model:
    """The card-or-not regression on every sentence, the type regression on the cards."""
    card = _logistic(x, (y > 0).astype(int), weight)
    pos = y > 0
    kinds = _logistic(x[pos], y[pos] - 1, weight[pos])
    type_w = np.zeros((x.shape[1], len(TYPES)), dtype=np.float32)
    type_b = np.full(len(TYPES), -30.0, dtype=np.float32)
    coef = kinds.coef_ if len(kinds.classes_) > 2 else np.vstack([-kinds.coef_, kinds.coef_])
    intercept = kinds.intercept_ if len(kinds.classes_) > 2 else np.array([-kinds.intercept_[0], kinds.intercept_[0]])
    for j, k in enumerate(kinds.classes_):
        type_w[:, int(k)], type_b[int(k)] = coef[j], intercept[j]
    return Model(card.coef_[0].astype(np.float32), float(card.intercept_[0]), type_w, type_b, threshold)


def _f_beta(p: np.ndarray, y: np.ndarray, threshold: float) -> float:
    said = p >= threshold
    tp = float(np.sum(said & (y > 0)))
    precision, recall = tp / max(float(said.sum()), 1.0), tp / max(float(np.sum(y > 0)), 1.0)
    return (1 + BETA**2) * precision * recall / (BETA**2 * precision + recall) if tp else 0.0


def choose_threshold(x: np.ndarray, y: np.ndarray, weight: np.ndarray, groups: np.ndarray) -> float:
    """The card threshold with the best out-of-fold F0.5 (card or not), the training splits
    dealt round-robin into ``INNER_FOLDS`` folds so no split is scored by a model fitted on it."""
    splits = list(dict.fromkeys(groups.tolist()))
    fold = np.array([splits.index(g) % INNER_FOLDS for g in groups])
    p = np.zeros(len(y))
    for k in range(INNER_FOLDS):
        inside = fold != k
        card = _logistic(x[inside], (y[inside] > 0).astype(int), weight[inside])
        p[~inside] = card.predict_proba(x[~inside])[:, 1]
    return max(THRESHOLDS, key=lambda t: _f_beta(p, y, t))


def fit(windows: Sequence[ev.EvalWindow], embedder: Embedder, inner: bool = True) -> Model:
    """The model fitted on ``windows``; the threshold from an inner cross-validation when ``inner``."""
    x, y, weight, groups = training_set(windows, embedder)
    threshold = choose_threshold(x, y, weight, groups) if inner else 0.6
    return fit_model(x, y, weight, threshold)


def fitter(embedder: Embedder, rules: bool = False) -> Callable[[Sequence[ev.EvalWindow]], ev.Extractor]:
    """For ``bench/extract_loso.py``: fit on the training splits, return the extractor (with
    ``rules``, the strict phrase rules in front of it, as ``OfflineExtractor`` combines them)."""
    def fit_and_make(windows: Sequence[ev.EvalWindow]) -> ev.Extractor:
        learned = LearnedExtractor(embedder, fit(windows, embedder))
        if not rules:
            return learned
        from memfs.agent.dream.extract_offline import combine, extract_offline

        def both(msgs: Sequence[Any], cards: Sequence[Any], summary: str, now: dt.datetime) -> Any:
            ruled = extract_offline(msgs, cards, summary, now, strict=True)
            return combine(ruled, learned(msgs, cards, summary, now), msgs, cards, summary, now)

        return both

    return fit_and_make


def main() -> int:
    from memfs.agent.dream.devset import dev_windows

    from memfs.embed import SentenceTransformerEmbedder

    windows = dev_windows()
    embedder = SentenceTransformerEmbedder()
    model = fit(windows, embedder)
    model.save()
    counts = np.bincount(training_set(windows, embedder)[1], minlength=len(CLASSES))
    print(f"fitted on {len(windows)} dev windows ({len({w.split for w in windows})} splits); "
          f"threshold {model.threshold}; sentences per class {dict(zip(CLASSES, counts.tolist(), strict=True))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
