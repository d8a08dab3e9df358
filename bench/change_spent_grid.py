"""x-chg3's shipped judge at other operating points on spent splits (analysis after a judgement,
never a candidate's choice): main's ops plus the stage, per nearest cards, floor and threshold.

    python bench/change_spent_grid.py [splits [floors [thresholds]]] [--own-only]     # default blind35,blind36 (spent at stop 40)
"""
import sys

import numpy as np
from memfs.agent.dream import change as CH
from memfs.agent.dream import extraction_eval as ev

from memfs.embed import SentenceTransformerEmbedder

CH.shipped_judge = lambda e: None  # type: ignore[assignment]  # the base: main's ops, no stage
ex = ev.make("offline")
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OWN = "--own-only" in sys.argv
FLOORS = [float(f) for f in (ARGS[1] if len(ARGS) > 1 else "-1,0.2,0.275,0.35,0.45").split(",")]
THRESHOLDS = [float(t) for t in (ARGS[2] if len(ARGS) > 2 else "0.9,0.952,0.97,0.98,0.99").split(",")]
wins = ev.select(ev.load_dataset(), ARGS[0] if ARGS else "blind35,blind36")
base = {w.id: ex(w.messages, w.cards, w.summary, w.now) for w in wins}
emb = SentenceTransformerEmbedder()
judge = CH.CrossJudge(CH.JUDGE_PATH)
found = {w.id: CH.nearby(w.messages, w.cards, emb) for w in wins}
used = {w.id: {t for op in base[w.id].ops for t in CH.op_targets(op)} for w in wins}
p = {top: {w.id: CH.judged(found[w.id], judge, used[w.id], top, floor=-1.0) for w in wins} for top in (1, 3)}
def counts(rep):
    t = {k: ev.Counts() for k in ev.TARGET_KINDS}
    for w in rep.windows:
        for k in ev.TARGET_KINDS:
            t[k].add(w.targets[k])
    c = rep.cards()
    return f"right {t['supersede_matched'].tp:2d} replaced {t['supersede'].tp:2d} stale {t['supersede'].fp} false {sum(len(w.false_cards) for w in rep.windows)} P {c.precision:.3f} R {c.recall:.3f}"
def run(top, floor, thr):
    done = {w.id: CH.apply(base[w.id], found[w.id], np.where(found[w.id].sims >= floor, p[top][w.id], 0.0), thr,
                           OWN) for w in wins}
    look = {id(w.messages): done[w.id] for w in wins}
    return counts(ev.score_extraction(lambda m, *_: look[id(m)], wins))
print("main", counts(ev.score_extraction(lambda m, *_: {id(w.messages): base[w.id] for w in wins}[id(m)], wins)))
for top in (1, 3):
    for floor in FLOORS:
        for thr in THRESHOLDS:
            print(top, floor, thr, run(top, floor, thr), flush=True)
