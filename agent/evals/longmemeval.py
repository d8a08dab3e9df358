"""Turn-level retrieval recall on LongMemEval_S, for memfs search and two baselines.

Each question brings its own haystack (~48 sessions, ~500 turns). Every turn becomes a
message item of an in-memory ``PairIndex`` — the same index and ``rank`` function
``memfs search`` uses — and we count a hit at k when any evidence turn (``has_answer``) is
among the top k (recall_any@k, as the benchmark's own code does). Plain BM25 and plain dense
retrieval run through the same code with one weight set to 1 and the rest to 0, so the
comparison is about fusion, not about plumbing.

LongMemEval has no cards or statuses. Recency is measured from the question's date.
Questions are ordered round-robin by type and split by a hash of ``question_id``
(``split_of``): within each type, ids sorted by their sha256 digest, the first half is
``dev`` (the only split anything is tuned on), the rest ``test``. The committed ids are in
``bench/data/longmemeval_split.json`` (a test checks this rule reproduces them).
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memfs.embed import CachedEmbedder, Embedder, VectorStore
from memfs.errors import BadInputError
from memfs.index_items import Item
from memfs.pair_index import PairIndex
from memfs.ranking import Weights, names
from memfs.search import DEFAULT_WEIGHTS, make_query, rank

KS = (1, 5, 10)
PLAIN: dict[str, Any] = {"salience": 0.0, "collapse": False, "dup_threshold": 2.0, "diversity": 0.0,
         "salience_damping": 0.0, "neighbour": 0.0, "time_match": 0.0, "speaker": 0.0,
         "pieces": 0.0, "bm25_ideal": 0.0, "request_user": 0.0, "framing": False,
         "request_topic": 0.0}
"""Everything issue 12 added, off: what ranking was before it (salience was flat then)."""
METHODS = {
    "bm25": Weights(**{**PLAIN, "semantic": 0, "bm25": 1, "entity": 0, "recency": 0,
                       "type_match": 0}),
    "dense": Weights(**{**PLAIN, "semantic": 1, "bm25": 0, "entity": 0, "recency": 0,
                        "type_match": 0}),
    "old-hybrid": Weights(**{**PLAIN, "semantic": 0.6}),
}
"""Baselines run through the same code: plain BM25, plain dense, and the hybrid as it
shipped before issue 12 (its weights: semantic 0.6, BM25 0.3; every issue-12 signal off;
its salience was flat for messages, so leaving it out ranks messages the same)."""
CACHE_DIR = Path("~/.cache/memfs-bench").expanduser()


def split_of(questions: Sequence[dict[str, Any]]) -> dict[str, str]:
    """``question_id`` -> ``dev`` | ``test``: per type, sha256 order, first half dev."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for q in questions:
        by_type[q["question_type"]].append(q["question_id"])
    out = {}
    for ids in by_type.values():
        ids.sort(key=lambda i: hashlib.sha256(i.encode("utf-8")).hexdigest())
        for n, qid in enumerate(ids):
            out[qid] = "dev" if n < len(ids) // 2 else "test"
    return out


def load_questions(path: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    """The questions, round-robin by type (so ``limit`` keeps every type), with ``split``."""
    try:
        with gzip.open(Path(path).expanduser(), "rt", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        raise BadInputError(f"{path}: not a LongMemEval .json.gz file ({exc})") from exc
    splits = split_of(data)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in data:
        by_type[q["question_type"]].append(q)
    ordered = []
    for round_ in range(max(len(v) for v in by_type.values())):
        for qtype in sorted(by_type):
            if round_ < len(by_type[qtype]):
                q = dict(by_type[qtype][round_])
                q["split"] = splits[q["question_id"]]
                ordered.append(q)
    return ordered[:limit] if limit else ordered


def parse_date(text: str) -> dt.datetime:
    """LongMemEval dates look like ``2023/05/20 (Sat) 02:21``."""
    day, _, clock = text.partition(")")
    parsed = dt.datetime.strptime(day.split("(")[0].strip() + " " + clock.strip(),
                                  "%Y/%m/%d %H:%M")
    return parsed.replace(tzinfo=dt.timezone.utc)


def haystack_items(question: dict[str, Any]) -> tuple[list[Item], set[str]]:
    """Every turn as a message item, and the ids of the evidence turns."""
    items, evidence = [], set()
    for sid, date, turns in zip(question["haystack_session_ids"], question["haystack_dates"],
                                question["haystack_sessions"]):
        when = parse_date(date).timestamp()
        for j, turn in enumerate(turns):
            tid = f"{sid}_{j}"
            items.append(Item("message", tid, f"history/{sid}.jsonl", turn["content"],
                              turn["content"], time=when + j, session=sid, turn=j,
                              role=turn["role"], entities=tuple(sorted(names(turn["content"])))))
            if turn.get("has_answer"):
                evidence.add(tid)
    return items, evidence


def question_index(question: dict[str, Any], embedder: Embedder) -> tuple[PairIndex, set[str]]:
    items, evidence = haystack_items(question)
    index = PairIndex(Path("/nonexistent-longmemeval"), embedder)
    index.apply(items, [], embedder.embed([i.index_text for i in items]))
    return index, evidence


def recall_row(index: PairIndex, question: dict[str, Any], evidence: set[str],
               weights: Weights) -> dict[int, float]:
    q = make_query(question["question"], max(KS), now=parse_date(question["question_date"]))
    hits = rank(index, q, weights)
    # a hit is every copy collapsed into it: the identical text is what the model reads
    shown = [{h.id, *h.collapsed} for h in hits]
    return {k: float(any(evidence & ids for ids in shown[:k])) for k in KS}


def run_longmemeval(path: str | Path, limit: int | None = None,
                    methods: Sequence[str] = ("bm25", "dense", "old-hybrid", "hybrid"),
                    embedder: Embedder | None = None, weights: Weights | None = None,
                    cache_dir: Path | None = CACHE_DIR) -> dict[str, Any]:
    """Recall_any@{1,5,10} per method, overall, per question type and per split."""
    embedder = _cached(embedder, cache_dir)
    chosen = {m: METHODS.get(m) or (weights or DEFAULT_WEIGHTS) for m in methods}
    prepared = []
    for question in load_questions(path, limit):
        index, evidence = question_index(question, embedder)
        if evidence:
            prepared.append((question, index, evidence))
    return evaluate(prepared, chosen)


Prepared = list[tuple[dict[str, Any], Any, set[str]]]
"""(question, its haystack index, the evidence turn ids) for each question."""


def evaluate(prepared: Prepared, methods: dict[str, Weights]) -> dict[str, Any]:
    """Recall rows for every question under every method's weights, summarised."""
    rows: list[dict[str, Any]] = []
    for question, index, evidence in prepared:
        for method, w in methods.items():
            row: dict[Any, Any] = {"method": method, "type": question["question_type"],
                                   "split": question["split"]}
            row.update(recall_row(index, question, evidence, w))
            rows.append(row)
    return summarise(rows, list(methods))


def summarise(rows: list[dict[Any, Any]], methods: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"ks": list(KS), "methods": {}}
    for method in methods:
        mine = [r for r in rows if r["method"] == method]
        groups: dict[str, list[dict[Any, Any]]] = defaultdict(list)
        for r in mine:
            groups["all"].append(r)
            groups[r["type"]].append(r)
            groups[f"split:{r['split']}"].append(r)
            groups[f"{r['split']}:{r['type']}"].append(r)
        report["methods"][method] = {
            name: {"n": len(g), **{f"R@{k}": sum(r[k] for r in g) / len(g) for k in KS}}
            for name, g in groups.items()}
    report["questions"] = len(rows) // max(len(methods), 1)
    return report


def format_table(report: dict[str, Any]) -> str:
    """A Markdown table: one row per (group, method)."""
    header = "| group | n | method | " + " | ".join(f"R@{k}" for k in report["ks"]) + " |"
    lines = [header, "|" + "---|" * (3 + len(report["ks"]))]
    groups = list(next(iter(report["methods"].values())).keys())
    groups.sort(key=lambda g: (g != "all", g.startswith("split:"), g))
    for group in groups:
        for method, table in report["methods"].items():
            row = table[group]
            cells = " | ".join(f"{row[f'R@{k}']:.3f}" for k in report["ks"])
            lines.append(f"| {group} | {row['n']} | {method} | {cells} |")
    return "\n".join(lines)


def _cached(embedder: Embedder | None, cache_dir: Path | None) -> Embedder:
    if embedder is None:
        from memfs.embed import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    if cache_dir is None:
        return embedder
    store = VectorStore(cache_dir / "vectors" / embedder.name, embedder.dim)
    return CachedEmbedder(embedder, store, chunk=512)
