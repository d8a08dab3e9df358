"""Search latency at 1k / 10k / 110k indexed items, peak memory, indexing vs encode throughput,
and cold start (the first search in a new process, as a one-shot ``memfs search`` does).

    python bench/search_bench.py [--scales 1000,10000,110000] [--queries 60] [--home DIR]
    python bench/search_bench.py --cold 3 --reuse --throughput 0 --queries 0

Item vectors at every scale are random-but-normalised, planted in the index's content-hash
cache so that 110k real encodes (hours on 2 cores) are not needed; the measured query path
is the real one: ``memfs.search.search`` on a real pair repository (git, history files,
freshness check, BM25, fusion) including embedding the query with the real model.
Throughput is measured on real text: indexing N new messages through the index versus
``model.encode`` on the same N texts, in the same process.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memfs import history  # noqa: E402
from memfs.app import MemoryStore  # noqa: E402
from memfs.cards import Card  # noqa: E402
from memfs.embed import SentenceTransformerEmbedder, VectorStore, content_key  # noqa: E402
from memfs.gitio import DREAM  # noqa: E402
from memfs.index import forget_open_indexes, index_folder, reconcile  # noqa: E402
from memfs.index_items import card_item, message_item  # noqa: E402
from memfs.search import search  # noqa: E402

WHO = ["Lin", "Priya", "my sister", "Tom", "the neighbour", "my boss", "Ana", "grandma", "Biscuit"]
DID = ["booked", "cancelled", "talked about", "laughed at", "worried about", "planned",
       "finished", "forgot", "loved", "complained about", "cooked", "painted", "fixed"]
WHAT = ["the trip to Lisbon", "a dentist appointment", "the garden shed", "a chocolate cake",
        "the new job", "a jigsaw puzzle", "the football match", "a birthday party", "the car",
        "a pottery class", "the heating bill", "a podcast about shipwrecks", "the book club"]
WHEN = ["on Monday", "last weekend", "this morning", "before Christmas", "after work",
        "in the rain", "at midnight", "during lunch", "next Friday", "years ago"]
QUERIES = ["when is the dentist appointment", "what did Lin say about the trip",
           "remember the chocolate cake?", "how is the new job going", "the garden shed",
           "any plans for the weekend?", "what happened with the car", "Priya birthday",
           "suggest a snack", "book club this month", "heating bill worries", "pottery class"]


def sentence(rng: random.Random, n: int) -> str:
    return (f"{rng.choice(WHO)} {rng.choice(DID)} {rng.choice(WHAT)} {rng.choice(WHEN)}, "
            f"and {rng.choice(WHO).lower()} {rng.choice(DID)} {rng.choice(WHAT)} (note {n}).")


def build_pair(home: Path, n_cards: int, n_messages: int, dim: int, model: str) -> Path:
    """A pair with ``n_cards`` committed cards and ``n_messages`` in history; vectors planted."""
    shutil.rmtree(home, ignore_errors=True)
    pair = MemoryStore(home).pair("bench", "mira")
    rng = random.Random(n_cards + n_messages)
    created = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    cards = [Card(id=f"c-{i:06d}", type=rng.choice(["fact", "preference", "plan", "event"]),
                  body=sentence(rng, i), created=created + dt.timedelta(hours=i),
                  salience=round(rng.random(), 2)) for i in range(n_cards)]
    if cards:
        pair.repo.commit({c.path: c.to_text() for c in cards}, "dream", "bench cards", DREAM)
    per_session = 1000
    texts = [card_item(c).index_text for c in cards]
    for s in range(0, n_messages, per_session):
        k = s // per_session
        session = f"s-2026{1 + k // 28:02d}{1 + k % 28:02d}-01"
        lines = []
        for t in range(min(per_session, n_messages - s)):
            msg = history.Message(session, t, "user" if t % 2 == 0 else "assistant",
                                  sentence(rng, n_cards + s + t),
                                  created + dt.timedelta(minutes=s + t))
            lines.append(msg.to_json())
            texts.append(message_item(msg).index_text)
        (pair.root / "history").mkdir(exist_ok=True)
        (pair.root / "history" / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
    plant_vectors(index_folder(pair.root, model) / "vectors", model, texts, dim)
    return pair.root


def plant_vectors(folder: Path, model: str, texts: list[str], dim: int) -> None:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((len(texts), dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = VectorStore(folder, dim)
    for start in range(0, len(texts), 50_000):
        chunk = texts[start:start + 50_000]
        store.add([content_key(model, t) for t in chunk], vecs[start:start + len(chunk)])


def measure_latency(home: Path, embedder: SentenceTransformerEmbedder, n: int) -> dict[str, float]:
    store = MemoryStore(home, embedder=embedder)
    pair = store.pair("bench", "mira", create=False)
    forget_open_indexes()
    t0 = time.perf_counter()
    search(pair, "warm up", k=5)
    first = time.perf_counter() - t0
    for q in QUERIES[:3]:
        search(pair, q, k=5)
    times = []
    for i in range(n):
        query = f"{QUERIES[i % len(QUERIES)]} {WHO[i % len(WHO)]}"  # no query repeats
        t = time.perf_counter()
        search(pair, query, k=5)
        times.append(time.perf_counter() - t)
    times.sort()
    return {"first_search_s": round(first, 2),
            "p50_ms": round(1000 * statistics.median(times), 1),
            "p95_ms": round(1000 * times[int(0.95 * (len(times) - 1))], 1),
            "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def load_average() -> str:
    """The 1/5/15-minute load average: the machine is shared, every number carries it."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure_cold(home: Path, model: str, runs: int) -> dict[str, object]:
    """First search in new processes: one after deleting the index's state (vectors kept,
    so it is the rebuild without embedding), then ``runs`` with the state left by the last.

    Each child loads the model before the clock starts: what is timed is the index load and
    the query, which is what a persisted index can speed up.
    """
    pair_root = home / "bench" / "mira"
    folder = index_folder(pair_root, model)
    for path in folder.iterdir() if folder.exists() else []:
        if path.name != "vectors":
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    rows = []
    for run in range(runs + 1):
        load = load_average()
        out = subprocess.run([sys.executable, __file__, "--cold-child", str(home)],
                             check=True, capture_output=True, text=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        rows.append({"state": "rebuilt" if run == 0 else "persisted", "load": load, **row})
    persisted = [r["first_search_s"] for r in rows[1:]]
    return {"cold_runs": rows, "cold_rebuild_s": rows[0]["first_search_s"],
            "cold_persisted_s": min(persisted) if persisted else None}


def cold_child(home: Path) -> None:
    """One fresh process: load the model, then time the first and second search."""
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["load the model"])
    pair = MemoryStore(home, embedder=embedder).pair("bench", "mira", create=False)
    t = time.perf_counter()
    first = search(pair, QUERIES[0], k=5)
    first_s = time.perf_counter() - t
    t = time.perf_counter()
    search(pair, QUERIES[1], k=5)
    second_s = time.perf_counter() - t
    print(json.dumps({"first_search_s": round(first_s, 3), "second_search_ms":
                      round(1000 * second_s, 1), "top": first[0].id if first else None,
                      "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                         / 1024)}))


def measure_throughput(home: Path, embedder: SentenceTransformerEmbedder,
                       n: int) -> dict[str, float]:
    """Raw encode, then indexing (append + reconcile), then raw encode again (load drifts)."""
    shutil.rmtree(home, ignore_errors=True)
    pair = MemoryStore(home, embedder=embedder).pair("bench", "mira")
    rng = random.Random(1)
    texts = [sentence(rng, 10_000_000 + i) for i in range(n)]

    def raw_rate() -> float:
        t = time.perf_counter()
        embedder.model.encode(texts, batch_size=embedder.batch_size,
                              normalize_embeddings=True, show_progress_bar=False)
        return n / (time.perf_counter() - t)

    before = raw_rate()
    rng = random.Random(2)  # fresh texts, so the index cannot reuse anything
    now = dt.datetime(2026, 11, 5, tzinfo=dt.timezone.utc)
    for i in range(n):
        history.append(pair.root, "s-20261105-01", "user", sentence(rng, 20_000_000 + i), now)
    t = time.perf_counter()
    plan = reconcile(pair.root, embedder)
    indexed = plan.embedded / (time.perf_counter() - t)
    raw = (before + raw_rate()) / 2
    return {"n": n, "encode_per_s": round(raw, 1), "index_per_s": round(indexed, 1),
            "ratio": round(indexed / raw, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1000,10000,110000")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--throughput", type=int, default=512)
    parser.add_argument("--home", default="/tmp/memfs-bench-search")
    parser.add_argument("--reuse", action="store_true",
                        help="Keep pairs built by an earlier run (latency only).")
    parser.add_argument("--cold", type=int, default=0,
                        help="Also time the first search in new processes (this many runs "
                             "on the persisted state, after one rebuild).")
    parser.add_argument("--cold-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_child:
        cold_child(Path(args.cold_child))
        return
    embedder = SentenceTransformerEmbedder()
    results: dict[str, object] = {}
    if args.throughput:
        results["throughput"] = measure_throughput(Path(args.home) / "tp", embedder,
                                                   args.throughput)
        print(json.dumps(results), flush=True)
    for scale in (int(s) for s in args.scales.split(",")):
        n_cards = max(1, scale // 11)
        home = Path(args.home) / str(scale)
        t = time.perf_counter()
        if not (args.reuse and (home / "bench" / "mira" / ".git").exists()):
            build_pair(home, n_cards, scale - n_cards, embedder.dim, embedder.name)
        built = time.perf_counter() - t
        row: dict[str, object] = {"items": scale, "cards": n_cards,
                                  "messages": scale - n_cards, "build_s": round(built, 1)}
        if args.cold:
            row.update(measure_cold(home, embedder.name, args.cold))
        if args.queries:
            row.update({"load": load_average(), **measure_latency(home, embedder, args.queries)})
        results[str(scale)] = row
        print(json.dumps(row), flush=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
