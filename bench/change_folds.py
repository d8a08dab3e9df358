"""The change judge's dev estimate: four folds grouped by split (``agent/dream/change.py``).

For each fold, the judge is fine-tuned (``fit_change.fit_judge``) on the other folds' dev pairs and
the change banks, and the held-out windows get the shipped extractor's ops plus the supersedes the
judge asks for, per threshold and per number of nearest cards judged; the pooled counts are printed
beside the shipped extractor alone (``off``). Blind splits are never read. About 20 minutes per
seed on 2 cores. (Stop 39's logistic stage and its leave-one-split-out bench, which failed their
gate, are at commit 4df4287 on branch ``x-chg``.)

    python bench/change_folds.py [--folds 4] [--no-bank] [--thresholds 0.95,0.97,0.98] [--tops 1,3]
                                 [--seeds 0,1] [--save P.npz] [--load P.npz[,Q.npz]] [--floors 0,0.2] [--own-only]

``--seeds``: one fine-tune per seed (another training order and other random negatives) and fold;
each seed is scored alone and the seeds' held-out probabilities averaged, as the shipped judge
averages its members (stop 40: one seed's estimate moved by about five supersedes between draws).
``--save`` keeps the held-out probabilities, ``--load`` scores saved ones without fitting (several
files: their seeds pooled). ``--floors``: pairs less alike than the floor are not judged (the held-out
probabilities are kept for every nearest pair, so floors are scored without fitting). ``--own-only``:
act only through a card the window wrote from the sentence (``change.OWN_CARD_ONLY``).
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

from memfs.embed import SentenceTransformerEmbedder


def _value(args: Sequence[str], flag: str, default: str) -> str:
    return args[args.index(flag) + 1] if flag in args else default


def counts(report: ev.Report) -> dict[str, float]:
    cards = report.cards()
    tally: dict[str, ev.Counts] = {k: ev.Counts() for k in ev.TARGET_KINDS}
    for w in report.windows:
        for k in ev.TARGET_KINDS:
            tally[k].add(w.targets[k])
    return {"P": round(cards.precision, 3), "R": round(cards.recall, 3), "F1": round(cards.f1, 4),
            "false": sum(len(w.false_cards) for w in report.windows),
            "by_right_card": tally["supersede_matched"].tp,
            "replaced_not_expected": tally["supersede"].fp, "right_card_replaced": tally["supersede"].tp}


def main(argv: Sequence[str]) -> int:
    n_folds = int(_value(argv, "--folds", "4"))
    grid = [float(t) for t in _value(argv, "--thresholds", "0.95,0.96,0.97,0.975,0.98,0.985,0.99").split(",")]
    tops = [int(t) for t in _value(argv, "--tops", "1,3").split(",")]
    floors = [float(f) for f in _value(argv, "--floors", "0").split(",")]
    own_only = "--own-only" in argv
    emb = DiskCachedEmbedder(SentenceTransformerEmbedder(), Path("/tmp/memfs-loso-embeddings.npz"))
    wins = dev_windows()
    rows = FC.labelled(wins, emb)
    if "--load" in argv:
        per_seed = {}
        for name in _value(argv, "--load", "").split(","):
            per_seed.update(_load(Path(name)))
    else:
        per_seed = held_out(rows, n_folds, [int(s) for s in _value(argv, "--seeds", "0").split(",")], tops,
                            [] if "--no-bank" in argv else FC.bank_items(), Path(_value(argv, "--save", "")))
    base_extractor = F.with_rules(L.LearnedExtractor(emb))
    base = {w.id: base_extractor(w.messages, w.cards, w.summary, w.now) for w in wins}
    emb.save()
    by_id = {r.window.id: r for r in rows}

    def scored(top: int | None, threshold: float, p: Probabilities, floor: float = -1.0) -> dict[str, float]:
        done = {w.id: base[w.id] if top is None else
                CH.apply(base[w.id], by_id[w.id].found,
                         np.where(by_id[w.id].found.sims >= floor, p[w.id, top], 0.0), threshold, own_only)
                for w in wins}
        lookup = {id(w.messages): done[w.id] for w in wins}
        return counts(ev.score_extraction(lambda m, *_: lookup[id(m)], wins))

    print("off", scored(None, 1.0, {}))
    runs = {f"seed {s}": {s: q} for s, q in per_seed.items()}
    if len(per_seed) > 1:
        runs["mean of seeds " + ",".join(map(str, per_seed))] = per_seed
    for run, members in runs.items():
        p = {key: np.mean([q[key] for q in members.values()], axis=0) for key in next(iter(members.values()))}
        for top in tops:
            for floor in floors:
                for t in grid:
                    print(f"{run} top {top} floor {floor} threshold {t}", scored(top, t, p, floor), flush=True)
    return 0


Probabilities = dict[tuple[str, int], np.ndarray]


def held_out(rows: Sequence[FC.Labelled], n_folds: int, seeds: Sequence[int], tops: Sequence[int],
             bank: Sequence[tuple[str, str, int]], save: Path) -> dict[int, Probabilities]:
    """Per seed, each window's p(change) from the fold's judge that never saw its split."""
    splits = sorted({r.window.split for r in rows})
    fold_of = {s: k % n_folds for k, s in enumerate(splits)}
    out: dict[int, Probabilities] = {}
    for seed in seeds:
        p: Probabilities = {}
        for k in range(n_folds):
            items = FC.dev_items([r for r in rows if fold_of[r.window.split] != k], seed=seed) + list(bank)
            judge = CH.CrossJudge(model=FC.fit_judge(items, seed=seed))
            for r in rows:
                if fold_of[r.window.split] == k:
                    for top in tops:
                        p[r.window.id, top] = CH.judged(r.found, judge, set(), top, floor=-1.0)
            print(f"seed {seed} fold {k}: fit on {len(items)} pairs", flush=True)
        out[seed] = p
        if save.name:
            np.savez_compressed(save, **{f"{s}|{w}|{t}": q for s, ps in out.items() for (w, t), q in ps.items()})
    return out


def _load(path: Path) -> dict[int, Probabilities]:
    out: dict[int, Probabilities] = {}
    with np.load(path) as data:
        for key in data.files:
            seed, window, top = key.split("|")
            out.setdefault(int(seed), {})[window, int(top)] = data[key]
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
