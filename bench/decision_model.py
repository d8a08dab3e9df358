"""The decision probes as a turn plans them, from any checkout (stop 42).

    python bench/decision_model.py blind4 [-v]

``memfs eval decision --split S --model`` measures this checkout; this bench exists to put two
checkouts side by side, including one from before the learned reading (``memfs.agent.needs``),
whose planner has no ``model_decider``: it then runs the rules alone. ``classify`` is left out
in both (it only names suggestion domains). Prints right decisions per kind (or per split and
label for the 60 probes); ``-v`` lists the misses and every probe the model cued.
"""

from __future__ import annotations

import sys
from collections import Counter

from memfs.agent.evals import decision

from memfs.embed import default_embedder


def main(split: str, verbose: bool) -> None:
    with_model = hasattr(decision, "model_decider")
    decider = decision.model_decider(default_embedder()) if with_model else None
    report = decision.run_decision_eval(decider, decision.load_split(split))
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for row in report.rows:
        probe = row.probe
        key = probe.kind or f"{probe.split}-{'need' if probe.need_retrieval else 'no'}"
        total[key] += 1
        right[key] += row.correct
    print("with the model" if with_model else "rules only", {k: f"{right[k]}/{total[k]}" for k in total})
    if verbose:
        for row in report.rows:
            if not row.correct or "reads as" in row.plan.reason:
                print("  ", (row.probe.id, row.probe.kind, row.correct, row.plan.reason))


if __name__ == "__main__":
    main(sys.argv[1], "-v" in sys.argv)
