"""LongMemEval_S turn-level recall_any@{1,5,10}: BM25, dense, and memfs hybrid search.

    python bench/longmemeval_recall.py [PATH] [--split dev|test|all] [--limit N] [--tune]
                                       [--ablate] [--json OUT]

Embeddings are cached by content hash under ~/.cache/memfs-bench (29k turns take tens of
minutes on 2 cores the first time). The split is by a hash of ``question_id``
(``bench/data/longmemeval_split.json``): ``--tune`` grid-searches the fusion weights on
the ``dev`` split only and adds a ``hybrid-tuned`` row; ``test`` numbers are the honest
ones. ``hybrid`` is memfs's shipped default weights. ``--split dev`` indexes and scores the
dev questions only (what tuning runs use, so the test split is not seen while working);
``--split test`` is the one run that reports test. The dataset is never copied.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memfs.agent.evals.longmemeval import (  # noqa: E402
    CACHE_DIR,
    METHODS,
    _cached,
    evaluate,
    format_table,
    load_questions,
    question_index,
)

from memfs.ranking import Weights  # noqa: E402
from memfs.search import DEFAULT_WEIGHTS  # noqa: E402

DATA = str(Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval_s_60.json.gz")
GRID = {"semantic": (0.4, 0.6, 0.8), "bm25": (0.2, 0.3, 0.5, 0.7), "entity": (0.0, 0.1),
        "recency": (0.0, 0.05)}


def tune(prepared: list[tuple[dict[str, Any], Any, set[str]]]) -> tuple[Weights, float]:
    """The grid point with the best mean of R@1, R@5, R@10 on the dev split."""
    tune_set = [p for p in prepared if p[0]["split"] == "dev"]
    best, best_score = DEFAULT_WEIGHTS, -1.0
    for values in itertools.product(*GRID.values()):
        weights = dataclasses.replace(DEFAULT_WEIGHTS, **dict(zip(GRID, values)))
        table = evaluate(tune_set, {"hybrid": weights})["methods"]["hybrid"]["all"]
        score = (table["R@1"] + table["R@5"] + table["R@10"]) / 3
        if score > best_score + 1e-9:
            best, best_score = weights, score
    return best, best_score


def ablations() -> dict[str, Weights]:
    """The shipped hybrid with one issue-12 part switched off at a time."""
    off = {"-pieces": {"pieces": 0.0}, "-salience": {"salience_damping": 0.0},
           "-neighbour": {"neighbour": 0.0}, "-time": {"time_match": 0.0},
           "-speaker": {"speaker": 0.0},
           "-collapse-diversity": {"collapse": False, "dup_threshold": 2.0, "diversity": 0.0},
           "-bm25-ideal": {"bm25_ideal": 0.0}, "-request-user": {"request_user": 0.0},
           "-framing": {"framing": False},
           "-round2": {"bm25_ideal": 0.0, "request_user": 0.0, "framing": False},
           "-request-topic": {"request_topic": 0.0}}
    return {f"hybrid{name}": dataclasses.replace(DEFAULT_WEIGHTS, **change)  # type: ignore[arg-type]
            for name, change in off.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=DATA)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="all",
                        help="Index and score only this split's questions (default: all).")
    parser.add_argument("--ablate", action="store_true",
                        help="Also the hybrid without each issue-12 part (same run).")
    args = parser.parse_args()
    embedder = _cached(None, CACHE_DIR)
    prepared = []
    for question in load_questions(args.path, args.limit):
        if args.split != "all" and question["split"] != args.split:
            continue
        index, evidence = question_index(question, embedder)
        if evidence:
            prepared.append((question, index, evidence))
        print(f"indexed {len(prepared)} questions", file=sys.stderr, flush=True)
    methods = {**METHODS, "hybrid": DEFAULT_WEIGHTS}
    if args.ablate:
        methods.update(ablations())
    if args.tune:
        if args.split == "test":
            parser.error("--tune fits on the dev split: not with --split test")
        tuned, score = tune(prepared)
        print(f"tuned on the dev split (mean R@1/5/10 {score:.3f}): {tuned}", file=sys.stderr)
        methods["hybrid-tuned"] = tuned
    report = evaluate(prepared, methods)
    report["weights"] = {name: dataclasses.asdict(w) for name, w in methods.items()}
    print(format_table(report))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
