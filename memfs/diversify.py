"""k hits should be k distinct pieces of information.

After fusion, two things still waste slots: near-identical texts that the exact duplicate
key missed ("my cousin is hilarious lol" next to "haha my cousin is hilarious"), and one
topic that fills every slot with paraphrases of itself. ``select`` handles both over the
best candidates' embeddings: a candidate nearly identical to a better one is **collapsed**
into it (the hit then counts both), and the rest are picked by maximal marginal relevance:
each pick pays a **diversity penalty** for how much it resembles what was already picked,
above a similarity ``threshold`` (below it, two records are about different things and
nothing is paid). Both are recorded per hit for ``--explain``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]


@dataclass
class Selection:
    """Positions (into the candidate arrays) of the hits, best first, and why."""

    order: list[int] = field(default_factory=list)
    merged: dict[int, list[int]] = field(default_factory=dict)
    """Hit position -> candidate positions collapsed into it (near-identical text)."""
    penalty: dict[int, float] = field(default_factory=dict)
    """Hit position -> the diversity penalty it paid when it was picked."""


def select(vectors: Floats, scores: Floats, k: int, dup_threshold: float, penalty: float,
           threshold: float) -> Selection:
    """Collapse near-identical candidates, then pick ``k`` by maximal marginal relevance.

    ``vectors`` (L2-normalised) and ``scores`` are row-aligned over the candidates;
    ``penalty`` 0 and ``dup_threshold`` > 1 give plain top-k by score.
    """
    pool = np.argsort(-scores, kind="stable")[:max(4 * k + 30, k)]
    if not len(pool):
        return Selection()
    vecs = np.asarray(vectors[pool], dtype=np.float32)
    sims = vecs @ vecs.T
    kept, merged = _collapse(sims >= dup_threshold)
    chosen = _mmr(kept, sims, scores[pool], k, penalty, threshold)
    out = Selection()
    for j, paid in chosen:
        out.order.append(int(pool[j]))
        out.penalty[int(pool[j])] = paid
        if j in merged:
            out.merged[int(pool[j])] = [int(pool[m]) for m in merged[j]]
    return out


def _collapse(same: npt.NDArray[np.bool_]) -> tuple[list[int], dict[int, list[int]]]:
    """Each candidate, best first, joins the first better kept one it is nearly identical
    to, or is kept itself. A candidate like no better one is kept without a look (most
    of them); only the others are walked, in order, one matrix column each."""
    earlier = np.triu(same, 1)  # [i, j]: i ranks above j and is nearly identical to it
    is_kept: npt.NDArray[np.bool_] = np.logical_not(earlier.any(axis=0))
    merged: dict[int, list[int]] = {}
    for j in np.flatnonzero(~is_kept).tolist():
        hits = np.flatnonzero(earlier[:j, j] & is_kept[:j])
        if len(hits):
            merged.setdefault(int(hits[0]), []).append(j)
        else:
            is_kept[j] = True
    return np.flatnonzero(is_kept).tolist(), merged


def _mmr(kept: list[int], sims: Floats, scores: Floats, k: int, penalty: float,
         threshold: float) -> list[tuple[int, float]]:
    """Greedy picks of (position in pool, penalty paid)."""
    remaining = list(kept)
    chosen: list[tuple[int, float]] = []
    worst = np.zeros(len(scores), dtype=np.float32)  # highest similarity to a pick so far
    while remaining and len(chosen) < k:
        rem = np.array(remaining)
        paid = penalty * np.maximum(worst[rem] - threshold, 0.0) / max(1.0 - threshold, 1e-6)
        best = int(np.argmax(scores[rem] - paid))
        pick = remaining.pop(best)
        chosen.append((pick, float(paid[best])))
        worst = np.maximum(worst, sims[pick])
    return chosen
