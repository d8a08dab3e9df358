"""Latency of the constraint search (a suggestion turn's extra retrieval) on a bench pair.

    python bench/constraint_bench.py --home /tmp/h12/ab/new/110000 [--queries 60]

Runs ``memfs.search.constraint_search`` on the pair ``search_bench.py`` built (random
planted vectors; the query is embedded with the real model) for suggestion requests with
their domains, after a warm-up, and prints one JSON line: p50 and p95 in ms, the load
average. Run it with an old checkout first on ``PYTHONPATH`` to compare versions side by
side (``search_ab.py``'s shadow package works).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from memfs.app import MemoryStore
from memfs.embed import default_embedder
from memfs.index import forget_open_indexes
from memfs.search import constraint_search

REQUESTS = [("What should I cook for dinner tonight?", ("food",)),
            ("Suggest a drink for the party.", ("drink", "food")),
            ("Any ideas for the weekend?", ("activity", "place")),
            ("What present should I get my dad?", ("gift",)),
            ("Where should we go on holiday?", ("place", "activity"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, type=Path)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    pair = MemoryStore(args.home, embedder=default_embedder()).pair("bench", "mira", create=False)
    forget_open_indexes()
    for text, domains in REQUESTS:
        constraint_search(pair, text, domains)
    times = []
    for i in range(args.queries):
        text, domains = REQUESTS[i % len(REQUESTS)]
        t = time.perf_counter()
        constraint_search(pair, f"{text} ({i})", domains)  # no request repeats
        times.append(time.perf_counter() - t)
    times.sort()
    print(json.dumps({"home": str(args.home), "queries": args.queries,
                      "p50_ms": round(1000 * statistics.median(times), 1),
                      "p95_ms": round(1000 * times[int(0.95 * (len(times) - 1))], 1),
                      "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}))


if __name__ == "__main__":
    main()
