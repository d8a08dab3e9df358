"""The decision probes through ``plan_offline`` with the real model's ``similar`` (stop 42, x-cover).

    python bench/decision_meaning.py data/decision_blind2.jsonl [-v]

Run from two checkouts to compare them: a planner that takes no ``similar`` (before x-cover)
runs without it; ``classify`` is left out in both, so they differ only in the coverage by
meaning. Prints right decisions per kind (or per split and label for the 60 probes)."""
import inspect, json, sys
from collections import Counter
import numpy as np
from memfs.agent.evals.decision import load_probes
from memfs.agent.plan_rules import plan_offline
from memfs.embed import default_embedder

emb = default_embedder()
def similar(text, units):
    v = np.asarray(emb.embed([text, *units]), dtype=np.float32)
    v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
    return [float(x) for x in v[1:] @ v[0]]

takes = "similar" in inspect.signature(plan_offline).parameters
src = sys.argv[1]
probes = load_probes(source=src)
right = Counter(); total = Counter(); rows = []
for p in probes:
    kw = {"similar": similar} if takes else {}
    plan = plan_offline(p.message, p.window, p.summary, p.pins, **kw)
    key = p.kind or f"{p.split}-{'need' if p.need_retrieval else 'no'}"
    total[key] += 1; ok = plan.need_retrieval == p.need_retrieval; right[key] += ok
    rows.append((p.id, key, ok, plan.reason))
print("similar" if takes else "no similar", {k: f"{right[k]}/{total[k]}" for k in total})
if "-v" in sys.argv:
    for r in rows:
        if not r[2] or "meaning" in r[3]: print("  ", r)
