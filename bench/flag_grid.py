"""The dev choice of x-flag's operating point (stop 41's rule): main's ops, then the shipped judge's
flags at each floor and threshold, on spent splits the judge was never fit on.

    python bench/flag_grid.py [splits]      # default blind35,blind36,blind37

Noticed = expected supersedes whose old card is superseded by a right card or flagged; wrong = flags on
a card the window is not expected to supersede."""
import sys

import numpy as np
from memfs.agent.dream import change as CH
from memfs.agent.dream import extraction_eval as ev

from memfs.embed import SentenceTransformerEmbedder

FLOORS = (0.25, 0.30, 0.35, 0.40, 0.45)
THRESHOLDS = (0.50, 0.70, 0.85, 0.90, 0.95, 0.97, 0.98, 0.99)
"""Stop 41's amended grid (x-flag2); x-flag's first grid was floors 0.25-0.35 x thresholds 0.50-0.97."""
CH.shipped_judge = lambda e: None  # type: ignore[assignment]  # main's ops, no stage
ex = ev.make("offline")
wins = ev.select(ev.load_dataset(), sys.argv[1] if len(sys.argv) > 1 else "blind35,blind36,blind37")
base = {w.id: ex(w.messages, w.cards, w.summary, w.now) for w in wins}
emb = SentenceTransformerEmbedder()
judge = CH.CrossJudge(CH.JUDGE_PATH)
found = {w.id: CH.nearby(w.messages, w.cards, emb) for w in wins}
used = {w.id: {t for op in base[w.id].ops for t in CH.op_targets(op)} for w in wins}
p = {w.id: CH.judged(found[w.id], judge, used[w.id], 1, floor=min(FLOORS)) for w in wins}
right = {}
for w in wins:
    s = ev.score_window(base[w.id], w)
    produced = [op for op in base[w.id].ops if isinstance(op, (ev.WriteOp, ev.SupersedeOp, ev.MergeOp))]
    owner = ev._match(produced, w.expected["cards"])
    right[w.id] = {op.old_id for k, op in enumerate(produced) if isinstance(op, ev.SupersedeOp) and k in owner}
want = {w.id: set(w.expected.get("supersede", [])) for w in wins}
main_noticed = sum(len(right[i] & want[i]) for i in want)
print(f"windows {len(wins)} expected {sum(len(v) for v in want.values())} main noticed {main_noticed}")
best = None
for floor in FLOORS:
    for thr in THRESHOLDS:
        noticed = wrong = flags = 0
        for w in wins:
            q = np.where(found[w.id].sims >= floor, p[w.id], 0.0)
            flagged = {found[w.id].cards[j].id for _, j in CH.decide(q, thr)}
            flags += len(flagged)
            noticed += len((right[w.id] | flagged) & want[w.id])
            wrong += len(flagged - want[w.id])
        added = noticed - main_noticed
        ok = added > 0 and wrong <= added / 2
        print(f"floor {floor:.3f} thr {thr:.2f} flags {flags:3d} noticed {noticed:2d} added {added:+3d} wrong {wrong:2d} {'ok' if ok else ''}",
              flush=True)
        if ok and (best is None or noticed > best[0] or (noticed == best[0] and thr > best[2])):
            best = (noticed, floor, thr)
print("chosen", best)
