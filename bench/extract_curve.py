"""Learning curve and fit variants of the learned extractor, leave-one-split-out, in one run.

Does more training data still help the learned extractor (``agent/dream/learned.py``), and
which hyperparameters matter? For each dev split (``devset.dev_windows``: never an unmeasured
blind split) the first stage is fitted on the *other* splits, or on a fixed-seed share of their
windows (the same share of every split, at least one window each), and the offline extractor
as it ships (learned behind the strict phrase rules, ``fit_learned.with_rules``) is scored on
the held-out split. Every variant is scored on the same folds in the same run; the features of
each window are computed once (embeddings cached on disk as in ``extract_loso.py``) and the
rules' extraction of each window once (it does not depend on the fit).

    python bench/extract_curve.py --variants curve     # 50% (2 seeds), 75% (2 seeds), 100%
    python bench/extract_curve.py --variants hyper     # single hyperparameters, then the inner-CV choice

Prints, per variant, the pooled and the ``UNTUNED`` (extract_loso.py) P / R / produced / false,
and the thresholds (and hyperparameters) the folds' inner cross-validation chose.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from extract_loso import UNTUNED, DiskCachedEmbedder, pooled
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream import fit_learned as fl
from memfs.agent.dream.devset import dev_windows
from memfs.agent.dream.learned import LearnedExtractor


@dataclass(frozen=True)
class Variant:
    """A share of the training windows (``seed`` picks them) and the hyperparameter grid the
    fold's inner cross-validation chooses from."""

    name: str
    share: float = 1.0
    seed: int = 0
    grid: tuple[fl.Hyper, ...] = (fl.SHIPPED,)


@dataclass
class Result:
    scored: list[ev.WindowScore] = field(default_factory=list)
    chosen: Counter[str] = field(default_factory=Counter)


CURVE = (Variant("50% seed 1", 0.5, 1), Variant("50% seed 2", 0.5, 2), Variant("75% seed 1", 0.75, 1),
         Variant("75% seed 2", 0.75, 2), Variant("100%", 1.0))
CHOSEN = fl.Hyper(1.0, 1.5, False)
HYPER = (Variant("C 1, forbidden 1.5, unbalanced", grid=(CHOSEN,)),
         Variant("C 1, forbidden 1.5, balanced", grid=(fl.Hyper(1.0, 1.5, True),)),
         Variant("C 1, forbidden 3, unbalanced", grid=(fl.Hyper(1.0, 3.0, False),)),
         Variant("C 0.3, forbidden 3, balanced", grid=(fl.Hyper(0.3, 3.0, True),)),
         Variant("inner-CV choice per fold of the 4 above + shipped (fit_learned.GRID)", grid=fl.GRID))
SETS = {"curve": CURVE, "hyper": HYPER, "both": CURVE + HYPER, "grid": (CURVE[-1], HYPER[-1])}


def pick(windows: Sequence[int], split_of: Sequence[str], share: float, rng: np.random.Generator) -> list[int]:
    """``share`` of the windows of every split (at least one), in file order."""
    keep: list[int] = []
    for split in dict.fromkeys(split_of[i] for i in windows):
        mine = [i for i in windows if split_of[i] == split]
        n = max(1, round(share * len(mine)))
        keep += mine if n >= len(mine) else sorted(rng.choice(mine, size=n, replace=False).tolist())
    return sorted(keep)


def run(variants: Sequence[Variant], embedder: Any) -> dict[str, Result]:
    windows = dev_windows()
    blocks = [fl.training_set([w], embedder) for w in windows]
    split_of = [w.split for w in windows]
    ruled: dict[int, Any] = {}

    def extractor(model: Any) -> Any:
        from memfs.agent.dream.extract_offline import combine, extract_offline

        learned = LearnedExtractor(embedder, model)

        def both(msgs: Sequence[Any], cards: Sequence[Any], summary: str, now: dt.datetime) -> Any:
            if id(msgs) not in ruled:
                ruled[id(msgs)] = extract_offline(msgs, cards, summary, now, strict=True)
            return combine(ruled[id(msgs)], learned(msgs, cards, summary, now), msgs, cards, summary, now)

        return both

    results = {v.name: Result() for v in variants}
    for held in dict.fromkeys(split_of):
        others = [i for i, s in enumerate(split_of) if s != held]
        test = [w for w in windows if w.split == held]
        for v in variants:
            seed = v.seed * 1000 + sorted(set(split_of)).index(held)
            train = pick(others, split_of, v.share, np.random.default_rng(seed))
            x, y, weight, groups = (np.concatenate([blocks[i][k] for i in train]) for k in range(4))
            hyper, threshold, _ = fl.choose(x, y, weight, groups, v.grid)
            model = fl.fit_model(x, y, weight, threshold, hyper)
            res = results[v.name]
            res.scored += ev.score_extraction(extractor(model), test).windows
            res.chosen[f"{threshold}" + ("" if len(v.grid) == 1 else f" C{hyper.l2} fw{hyper.forbidden_weight}"
                                         f" {'bal' if hyper.balanced else 'unbal'}")] += 1
        print(f"[{dt.datetime.now(dt.UTC):%H:%M:%S}] {held} done", file=sys.stderr, flush=True)
    return results


def report(results: dict[str, Result]) -> list[str]:
    rows = [f"{'variant':40} {'pooled P':>8} {'R':>6} {'prod':>5} {'ref':>4} {'false':>5}   "
            f"{'untuned P':>9} {'R':>6} {'prod':>5} {'ref':>4} {'false':>5}   chosen"]
    for name, res in results.items():
        a, u = pooled(res.scored), pooled([w for w in res.scored if w.split in UNTUNED])
        rows.append(f"{name:40} {a['precision']:8.3f} {a['recall']:6.3f} {a['produced']:5} {a['reference']:4} "
                    f"{a['false_cards']:5}   {u['precision']:9.3f} {u['recall']:6.3f} {u['produced']:5} "
                    f"{u['reference']:4} {u['false_cards']:5}   {dict(res.chosen.most_common())}")
    return rows


def main(argv: Sequence[str]) -> int:
    from memfs.embed import SentenceTransformerEmbedder

    which = argv[argv.index("--variants") + 1] if "--variants" in argv else "curve"
    cache = Path(argv[argv.index("--cache") + 1] if "--cache" in argv else "/tmp/memfs-loso-embeddings.npz")
    embedder = DiskCachedEmbedder(SentenceTransformerEmbedder(), cache)
    results = run(SETS[which], embedder)
    embedder.save()
    print("\n".join(report(results)))
    print(json.dumps({name: {"loso": pooled(r.scored), "untuned": pooled([w for w in r.scored if w.split in UNTUNED]),
                             "chosen": dict(r.chosen)} for name, r in results.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
