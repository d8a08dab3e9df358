"""The decision probes through the offline plan with the real model's readings (stop 42).

    python bench/decision_model.py blind4 [-v]

Run from two checkouts to compare them: ``needs`` (``memfs.agent.needs``, x-need) is passed
when the checkout's planner takes it, with the shipped threshold; ``classify`` is left out in
both (it only names suggestion domains), so two checkouts differ only in what they changed.
Prints right decisions per kind (or per split and label for the 60 probes); ``-v`` lists the
misses and every probe the model cued.
"""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from typing import Any

from memfs.agent.evals.decision import load_split
from memfs.agent.plan_rules import plan_offline

from memfs.embed import default_embedder


def main(split: str, verbose: bool) -> None:
    extra: dict[str, Any] = {}
    if "needs" in inspect.signature(plan_offline).parameters:
        from memfs.agent.needs.model import needs_memory, shipped

        embedder = default_embedder()
        extra = {"needs": lambda text: needs_memory(embedder, text),
                 "need_threshold": shipped().threshold}
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    rows = []
    for probe in load_split(split):
        plan = plan_offline(probe.message, probe.window, probe.summary, probe.pins, **extra)
        key = probe.kind or f"{probe.split}-{'need' if probe.need_retrieval else 'no'}"
        ok = plan.need_retrieval == probe.need_retrieval
        total[key] += 1
        right[key] += ok
        rows.append((probe.id, key, ok, plan.reason))
    print("with the model" if extra else "rules only", {k: f"{right[k]}/{total[k]}" for k in total})
    if verbose:
        for row in rows:
            if not row[2] or "reads as" in row[3]:
                print("  ", row)


if __name__ == "__main__":
    main(sys.argv[1], "-v" in sys.argv)
