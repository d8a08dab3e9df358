"""Leave-one-split-out estimate of the change stage (``agent/dream/change.py``) on the dev windows.

For each dev split, the change regression is fit on the other dev splits only, and the shipped
extractor's ops on the held-out windows get the supersedes it asks for; the pooled counts are
printed per threshold beside the shipped extractor alone (``off``). Blind splits are never read.

    python bench/change_loso.py [--c 0.05] [--pos-weight 20] [--thresholds 0.5,0.6,0.7]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from extract_loso import DiskCachedEmbedder
from memfs.agent.dream import change as CH
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream import fit_change as FC
from memfs.agent.dream import fit_learned as F
from memfs.agent.dream import learned as L
from memfs.agent.dream.devset import dev_windows
from memfs.agent.dream.ops import Extraction

from memfs.embed import SentenceTransformerEmbedder


def _value(args: Sequence[str], flag: str, default: str) -> str:
    return args[args.index(flag) + 1] if flag in args else default


def counts(report: ev.Report) -> dict[str, float]:
    cards = report.cards()
    tally: dict[str, ev.Counts] = {k: ev.Counts() for k in ev.TARGET_KINDS}
    for w in report.windows:
        for k in ev.TARGET_KINDS:
            tally[k].add(w.targets[k])
    false = sum(len(w.false_cards) for w in report.windows)
    return {"P": round(cards.precision, 3), "R": round(cards.recall, 3), "F1": round(cards.f1, 4),
            "false": false, "sup_right": tally["supersede_matched"].tp, "sup_expected":
            tally["supersede_matched"].tp + tally["supersede_matched"].fn,
            "replaced_not_expected": tally["supersede"].fp, "sup_any_right": tally["supersede"].tp}


def main(argv: Sequence[str]) -> int:
    c = float(_value(argv, "--c", str(FC.C)))
    pos = float(_value(argv, "--pos-weight", str(FC.POS_WEIGHT)))
    grid = [float(t) for t in _value(argv, "--thresholds", "0.3,0.4,0.5,0.6,0.7,0.8,0.9").split(",")]
    emb = DiskCachedEmbedder(SentenceTransformerEmbedder(), Path("/tmp/memfs-loso-embeddings.npz"))
    wins = dev_windows()
    base_extractor = F.with_rules(L.LearnedExtractor(emb))
    base = {w.id: base_extractor(w.messages, w.cards, w.summary, w.now) for w in wins}
    rows = FC.labelled(wins, emb)
    emb.save()
    if "--pair-only" in argv:
        for r in rows:
            r.pairs.x = r.pairs.x[..., :CH.N_PAIR]
    p: dict[str, np.ndarray] = {}
    for split in sorted({w.split for w in wins}):
        train = [r for r in rows if r.window.split != split]
        if "--gbm" in argv:
            from sklearn.ensemble import HistGradientBoostingClassifier
            x, y = FC.stack(train)
            gbm = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                                 l2_regularization=1.0, random_state=0).fit(
                x, y, sample_weight=np.where(y > 0, pos, 1.0))
            for r in rows:
                if r.window.split == split:
                    shape = r.pairs.x.shape[:2]
                    p[r.window.id] = gbm.predict_proba(r.pairs.x.reshape(-1, r.pairs.x.shape[-1]))[:, 1].reshape(
                        shape) if r.pairs.x.size else np.zeros(shape)
            continue
        model = FC.fit(train, c, pos)
        for r in rows:
            if r.window.split == split:
                p[r.window.id] = model.p(r.pairs.x) if r.pairs.x.size else np.zeros(r.pairs.x.shape[:2])
    by_id = {r.window.id: r for r in rows}

    def scored(threshold: float | None) -> dict[str, float]:
        done: dict[str, Extraction] = {}
        for w in wins:
            r = by_id[w.id]
            done[w.id] = base[w.id] if threshold is None or not r.pairs.x.size else \
                CH.apply(base[w.id], r.pairs, p[w.id], threshold)
        lookup = {id(w.messages): done[w.id] for w in wins}
        return counts(ev.score_extraction(lambda m, *_: lookup[id(m)], wins))

    print(f"C {c} pos_weight {pos}; {len(wins)} windows, positives {int(sum((r.y > 0).sum() for r in rows))}")
    print("off", scored(None), flush=True)
    for t in grid:
        print(t, scored(t), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
