"""The decision probes with and without coverage by meaning (stop 42, x-cover).

    python bench/decision_meaning.py data/decision_blind2.jsonl [-v]

Run from two checkouts to compare them: a planner that takes no ``similar`` (before x-cover)
runs without it; ``classify`` is left out in both, so they differ only in the coverage by
meaning. Prints right decisions per kind (or per split and label for the 60 probes); ``-v``
lists the misses and every probe answered by meaning.
"""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from collections.abc import Sequence

import numpy as np
from memfs.agent.evals.decision import load_probes
from memfs.agent.plan_rules import plan_offline

from memfs.embed import default_embedder


def main(source: str, verbose: bool) -> None:
    embedder = default_embedder()

    def similar(text: str, units: Sequence[str]) -> list[float]:
        vecs = np.asarray(embedder.embed([text, *units]), dtype=np.float32)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
        return [float(x) for x in vecs[1:] @ vecs[0]]

    takes = "similar" in inspect.signature(plan_offline).parameters
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    rows = []
    for probe in load_probes(source=source):
        extra = {"similar": similar} if takes else {}
        plan = plan_offline(probe.message, probe.window, probe.summary, probe.pins, **extra)
        key = probe.kind or f"{probe.split}-{'need' if probe.need_retrieval else 'no'}"
        ok = plan.need_retrieval == probe.need_retrieval
        total[key] += 1
        right[key] += ok
        rows.append((probe.id, key, ok, plan.reason))
    print("with similar" if takes else "no similar", {k: f"{right[k]}/{total[k]}" for k in total})
    if verbose:
        for row in rows:
            if not row[2] or "meaning" in row[3]:
                print("  ", row)


if __name__ == "__main__":
    main(sys.argv[1], "-v" in sys.argv)
