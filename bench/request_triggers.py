"""How often the plan reads small talk as a request for a suggestion (issue 12, stop 33).

Every distinct user line of a constraint split's small talk (its own bank, or the planted
eval's: ``bank_of``), as the constraint eval writes it, is planned as a message with no window
(``AgentPlanner``, offline); a line that gets suggestion domains is a false trigger: the turn
spends context slots on constraints nobody asked about. The constraint lines themselves and
the lines typed again and again (``REPEATED``, half requests: "ugh I need a drink after
today") are left out. Run from the checkout to measure, beside another:

    python bench/request_triggers.py --split blind18 --messages 1600
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev")
    ap.add_argument("--messages", type=int, default=1600)
    args = ap.parse_args()
    from memfs.agent.evals import constraints as ce
    from memfs.agent.evals.report import Timings, eval_home, load_embedder
    from memfs.agent.services import AgentPlanner, wired_store

    from memfs.services import PlanRequest

    probes = ce.load_probes(args.split)
    lines: list[str] = []
    for _, msgs in ce.build_history(probes, args.messages, bank=ce.bank_of(args.split)):
        lines += [m["content"] for m in msgs if m["role"] == "user"]
    skip = {p.constraint for p in probes} | set(ce.REPEATED)
    lines = [line for line in dict.fromkeys(lines) if line not in skip]
    embedder = load_embedder(None, Timings())
    with eval_home(None) as folder:
        pair = wired_store(folder, embedder=embedder).pair("bench", "triggers")
        planner = AgentPlanner()
        named = {}
        for line in lines:
            plan = planner.plan(pair, PlanRequest(line, (), "", "", frozenset()))
            if plan.constraint_domains:
                named[line] = list(plan.constraint_domains)
    print(json.dumps({"split": args.split, "lines": len(lines), "triggered": len(named),
                      "share": round(len(named) / max(1, len(lines)), 3), "named": named},
                     indent=1))


if __name__ == "__main__":
    main()
