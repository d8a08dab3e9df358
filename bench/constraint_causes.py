"""Why a suggestion's constraint misses the context, counted by cause (issue 12, stop 25).

For each probe of the named constraint splits (spent dev splits only; never a blind one
before the lead has measured it): did the plan name the probe's domain ("domain"), was the
constraint's row among the constraint search's candidates (write-time limit score above
``bar`` and in the best ``pool``, or among either learned regression's best: the search's own
``_candidates``, "pool"), was it among the search's top 3 for the right
domain ("rank"), and did it reach the context. Run:

    python bench/constraint_causes.py --splits dev,test --messages 1600
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
from collections import Counter


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", default="dev")
    ap.add_argument("--messages", type=int, default=1600)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from memfs.agent.evals import constraints as ce
    from memfs.agent.evals.report import Timings, eval_home, load_embedder
    from memfs.agent.services import wired_store

    from memfs.constraints import ConstraintWeights, _candidates, occasion, rank_constraints
    from memfs.context import build_context
    from memfs.index import open_index
    from memfs.search_types import make_query

    w = ConstraintWeights()
    embedder = load_embedder(None, Timings())
    out = []
    for split in args.splits.split(","):
        probes = ce.load_probes(split)
        with eval_home(None) as folder:
            store = wired_store(folder, embedder=embedder)
            first = None
            for n, group in enumerate(ce.groups_of(probes, 5)):
                pair = store.pair("eval", f"group-{n + 1}")
                said = ce.write_history(pair, group, args.messages, bank=ce.bank_of(split))
                if first is not None:
                    shutil.copytree(ce.vector_folder(first), ce.vector_folder(pair),
                                    dirs_exist_ok=True)
                pair.search("warm up", k=1)
                first = first or pair
                index = open_index(pair.root, pair.store.embedder)
                now = ce.START + dt.timedelta(days=60)
                for p in group:
                    window = ce.live_window(p, now)  # empty unless the probe has ``before``
                    ctx = build_context(pair, p.request, now=now, window=window)
                    mid = said[p.id]
                    row = next(r for r, it in enumerate(index.items) if it.ref == ("message", mid)) \
                        if any(it.ref == ("message", mid) for it in index.items) else None
                    lim = float(index.limit[row]) if row is not None else None
                    users = index.limit[index.limit > -1]
                    lrank = int((users > lim).sum()) + 1 if lim is not None else None
                    asked = occasion([m.content for m in window], p.request)
                    query = make_query(asked, 3, now=now)
                    hits = rank_constraints(index, query, [p.domain])
                    right = p.domain in tuple(ctx.plan.constraint_domains)
                    inctx = mid in {h.id for h in ctx.hits}
                    got = mid in {h.id for h in hits}
                    pool = row is not None and row in set(_candidates(index, query, w)[0].tolist())
                    cause = ("ok" if inctx else "domain" if not right else
                             "pool" if not pool else "rank" if not got else "other")
                    out.append({"split": split, "id": p.id, "domain": p.domain,
                                "plan": list(ctx.plan.constraint_domains), "limit": lim,
                                "limit_rank": lrank, "top3_right_domain": got,
                                "learned_ranks": [int((score > score[row]).sum()) + 1 if row is not None else None
                                                  for score in (index.learned, index.learned_ask)],
                                "in_context": inctx, "cause": cause})
    causes = Counter(r["cause"] for r in out)
    right = sum(r["domain"] in r["plan"] for r in out)
    fixed = sum(r["top3_right_domain"] for r in out)
    summary = {"probes": len(out), "right_domain": right, "in_context": causes["ok"],
               "found_if_domain_right": fixed, "causes": dict(causes)}
    if args.json:
        print(json.dumps({"summary": summary, "rows": out}, indent=1))
    else:
        for r in out:
            print(r["split"], r["id"], r["domain"], r["plan"], r["limit"] and round(r["limit"], 3),
                  r["limit_rank"], r["cause"])
        print(summary)


if __name__ == "__main__":
    main()
