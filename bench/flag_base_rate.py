"""How many cards the flag stage questions on ordinary chat, where no fact changes (stop 41's
amended rule, x-flag2): profile sets replayed through compaction and dreams, every pair the stage
judges recorded, then the distinct cards flagged per floor and threshold. The profile sets state
standing facts once among small talk and decoys and change none, so every flag is a wrong one.

    python bench/flag_base_rate.py [splits] [messages] [-v] [--save FILE]     # default blind13,blind14,blind15 1600

``--save FILE`` writes every distinct judged (sentence, card) pair as a jsonl line labelled no change:
the ordinary-chat negatives the judge is refit with (``fit_change.CHAT``; stop 41, x-flag3).
"""
import sys

import numpy as np
from memfs.agent.dream import change as CH
from memfs.agent.evals.profile import run_profile

FLOORS = (0.25, 0.30, 0.35, 0.40, 0.45)
THRESHOLDS = (0.50, 0.70, 0.85, 0.90, 0.95, 0.97, 0.98, 0.99)
ARGS = [a for k, a in enumerate(sys.argv[1:], 1) if not a.startswith("-") and sys.argv[k - 1] != "--save"]
SPLITS = (ARGS[0] if ARGS else "blind13,blind14,blind15").split(",")
MESSAGES = int(ARGS[1]) if len(ARGS) > 1 else 1600
SAVE = sys.argv[sys.argv.index("--save") + 1] if "--save" in sys.argv else None
seen: list[tuple[str, list[str], set[str], np.ndarray, np.ndarray, list[str]]] = []
split = ""
pairs: dict[tuple[str, str], str] = {}


def record(extraction, found, p, threshold):  # type: ignore[no-untyped-def]
    """Keep what the stage saw; flag nothing, so the run is main's."""
    used = {t for op in extraction.ops for t in CH.op_targets(op)}
    seen.append((split, [c.id for c in found.cards], used, found.sims.copy(), p.copy(),
                 [s.text for s in found.said]))
    if SAVE:
        for i, j in zip(*np.nonzero(p > 0), strict=True):
            pairs[(found.said[i].text, found.cards[j].body)] = split
    return extraction


CH.FLOOR = min(FLOORS)  # the stage judges (and records) every pair at or above the lowest floor tried
CH.flag = record  # type: ignore[assignment]
messages = 0
for split in SPLITS:
    report = run_profile(split, MESSAGES)
    messages += MESSAGES * len(report.pairs)
    print(f"{split}: {len(report.pairs)} pairs, facts in profile {sum(len(r.final.standing) for r in report.pairs)}",
          flush=True)
print(f"judged windows {len(seen)}, messages {messages}")
for floor in FLOORS:
    row = []
    for thr in THRESHOLDS:
        flagged: set[str] = set()
        for _, ids, used, sims, p, _ in seen:
            q = np.where(sims >= floor, p, 0.0)
            q = np.where([[i in used for i in ids]], -1.0, q) if q.size else q
            flagged |= {ids[j] for _, j in CH.decide(q, thr)}
        row.append(f"{len(flagged):3d}")
    print(f"floor {floor:.2f} " + " ".join(f"thr {t:.2f}:{n}" for t, n in zip(THRESHOLDS, row, strict=True)), flush=True)
if "-v" in sys.argv:
    for sp, ids, _used, sims, p, said in seen:
        for i, j in CH.decide(np.where(sims >= 0.25, p, 0.0), 0.9):
            print(f"  {sp} {p[i, j]:.3f} {sims[i, j]:.2f} {ids[j]} <- {said[i][:100]}")
if SAVE:
    import json
    from pathlib import Path

    Path(SAVE).write_text("".join(json.dumps({"card": card, "said": said, "change": False, "kind": "chat", "from": sp},
                                             ensure_ascii=False) + "\n" for (said, card), sp in pairs.items()),
                          encoding="utf-8")
    print(f"wrote {len(pairs)} pairs to {SAVE}")
