"""Load test of ``memfs serve``: many pairs, bounded concurrency, over loopback; and the same
workload through the in-process Python API, side by side in the same run.

    python bench/serve_bench.py [--pairs 50] [--turns 20] [--clients 16] [--window-budget 250]

A turn is what an app backend does per user message: ``POST .../context`` (what the
model should see) then ``POST .../messages`` (the user message and the reply). The server
is a real ``memfs serve`` process (real uvicorn, the real embedding model, dreams on its
thread pool); the client is ``--clients`` concurrent conversations, each pair's turns in
order. Afterwards, the run is checked, not assumed: every ``history/`` line is counted
(0 lost messages), every compaction must have been dreamed and merged (no pending event,
one ``dream:`` merge per event), and every request must have succeeded.

The in-process side runs the same conversations on ``--clients`` threads against one
``MemoryStore`` (same model, same thread pool of dreams), so the difference is what HTTP
(JSON, uvicorn, the per-request key check and pair lock) costs.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memfs.app import MemoryStore  # noqa: E402
from memfs.compaction import pending_events  # noqa: E402
from memfs.config import Config  # noqa: E402
from memfs.keys import KeyStore  # noqa: E402
from memfs.revisions import log as git_log  # noqa: E402
from memfs.runtime.model import SharedEmbedder  # noqa: E402
from memfs.runtime.pool import ThreadPoolQueue  # noqa: E402

WHO = ["Lin", "Priya", "my sister", "Tom", "the neighbour", "my boss", "Ana", "grandma"]
DID = ["booked", "cancelled", "talked about", "worried about", "planned", "finished", "loved"]
WHAT = ["the trip to Lisbon", "a dentist appointment", "the garden shed", "a chocolate cake",
        "the new job", "a pottery class", "the heating bill", "the book club"]
WHEN = ["on Monday", "last weekend", "this morning", "before Christmas", "after work"]
QUESTIONS = ["Do you remember what {who} said about {what}?", "What did I tell you about {what}?",
             "Remind me, when was {what}?", "Last time we talked about {what}, what did I decide?"]
REPLIES = ["That sounds like a lot to juggle.", "I'm glad you told me.", "How did that feel?",
           "Let's keep that in mind.", "That's lovely to hear."]

Turns = list[tuple[str, str]]


def conversation(seed: int, turns: int) -> Turns:
    """Deterministic user/assistant turns; every third user message asks about the past."""
    rng = random.Random(seed)
    out = []
    for n in range(turns):
        what, who = rng.choice(WHAT), rng.choice(WHO)
        if n % 3 == 2:
            text = rng.choice(QUESTIONS).format(who=who, what=what)
        else:
            text = f"{who.capitalize()} {rng.choice(DID)} {what} {rng.choice(WHEN)} (turn {n})."
        out.append((text, rng.choice(REPLIES)))
    return out


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(p95 * 1000, 1), "max_ms": round(ordered[-1] * 1000, 1)}


# -- checking a finished run ---------------------------------------------------------------------


def verify(home: Path, pairs: list[str], turns: int) -> dict[str, Any]:
    """Messages on disk, pending events, dream merges: what the run really left behind."""
    lines = pending = merges = compactions = 0
    short = []
    for name in pairs:
        root = home / "bench" / name
        count = sum(len(p.read_text().splitlines()) for p in (root / "history").glob("*.jsonl"))
        lines += count
        if count != 2 * turns:
            short.append(name)
        pending += len(pending_events(root))
        entries = git_log(MemoryStore(home).pair("bench", name, create=False).repo)
        merges += sum(1 for e in entries if e.is_dream)
        compactions += sum(1 for e in entries if e.subject.startswith("history: compaction:"))
    return {"history_lines": lines, "expected_lines": 2 * turns * len(pairs),
            "pairs_missing_messages": short, "compactions": compactions,
            "dream_merges": merges, "pending_events": pending}


def wait_idle(get_queue: Callable[[], dict[str, Any]], timeout: float = 1800) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        queue = get_queue()
        if not queue["queued"] and not queue["running"]:
            return time.monotonic() - started
        time.sleep(0.5)
    raise SystemExit("dreams did not finish")


# -- over HTTP -----------------------------------------------------------------------------------


def start_server(home: Path, port: int, workers: int) -> subprocess.Popen[bytes]:
    log = (home / "serve.log").open("wb")
    memfs = shutil.which("memfs", path=str(Path(sys.executable).parent)) or "memfs"
    return subprocess.Popen([memfs, "serve", "--port", str(port),
                             "--workers", str(workers)], stdout=log, stderr=log,
                            env={**os.environ, "MEMFS_HOME": str(home)})


async def http_run(base: str, key: str, pairs: list[str], turns: int,
                   clients: int) -> tuple[dict[str, list[float]], list[str]]:
    times: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    todo: asyncio.Queue[str] = asyncio.Queue()
    for name in pairs:
        todo.put_nowait(name)
    limits = httpx2.Limits(max_connections=clients)
    async with httpx2.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"},
                                  timeout=300, limits=limits) as client:
        async def call(kind: str, method: str, path: str, body: Any = None) -> None:
            started = time.perf_counter()
            response = await client.request(method, path, json=body)
            times[kind].append(time.perf_counter() - started)
            if response.status_code >= 300:
                errors.append(f"{kind} {path}: {response.status_code} {response.text[:200]}")

        async def worker() -> None:
            while not todo.empty():
                name = todo.get_nowait()
                path = f"/v1/pairs/bench/{name}"
                await call("init", "PUT", path)
                for user, reply in conversation(int(name[1:]), turns):
                    await call("context", "POST", path + "/context", {"message": user})
                    await call("messages", "POST", path + "/messages", {"messages": [
                        {"role": "user", "content": user}, {"role": "assistant", "content": reply}]})

        await asyncio.gather(*(worker() for _ in range(clients)))
    return times, errors


def bench_http(home: Path, args: argparse.Namespace, pairs: list[str]) -> dict[str, Any]:
    (home / "config.toml").write_text(f"window_budget = {args.window_budget}\n")
    key = KeyStore(home).add(None)[1]
    port = 18765 + os.getpid() % 1000
    server = start_server(home, port, args.workers)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx2.get(base + "/v1/health", timeout=2)
                break
            except httpx2.TransportError:
                time.sleep(0.2)
        headers = {"Authorization": f"Bearer {key}"}
        httpx2.put(base + "/v1/pairs/warm/up", headers=headers, timeout=300)
        httpx2.post(base + "/v1/pairs/warm/up/search", json={"query": "warm up the model"},
                    headers=headers, timeout=300)  # the model loads here, not in a turn
        started = time.monotonic()
        times, errors = asyncio.run(http_run(base, key, pairs, args.turns, args.clients))
        wall = time.monotonic() - started
        drain = wait_idle(lambda: httpx2.get(base + "/v1/health").json()["queue"])
        queue = httpx2.get(base + "/v1/health").json()["queue"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    tracebacks = (home / "serve.log").read_text(errors="replace").count("Traceback")
    return {"wall_s": round(wall, 1), "dream_drain_s": round(drain, 1),
            "turns_per_s": round(len(pairs) * args.turns / wall, 2),
            "endpoints": {kind: stats(samples) for kind, samples in times.items()},
            "errors": len(errors), "first_errors": errors[:3], "queue": queue,
            "server_tracebacks": tracebacks, **verify(home, pairs, args.turns)}


# -- in-process ------------------------------------------------------------------------------------


def bench_inprocess(home: Path, args: argparse.Namespace, pairs: list[str]) -> dict[str, Any]:
    pool = ThreadPoolQueue(args.workers)
    config = Config(window_budget=args.window_budget)
    store = MemoryStore(home, config=config, embedder=SharedEmbedder(config.embed_model),
                        queue=pool)
    store.pair("warm", "up").search("warm up the model")
    times: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    lock = threading.Lock()
    todo = list(pairs)

    def timed(kind: str, fn: Callable[..., object], *args: Any) -> None:
        started = time.perf_counter()
        try:
            fn(*args)
        except Exception as exc:  # a benchmark counts failures, it does not stop at one
            errors.append(f"{kind}: {exc}")
        with lock:
            times[kind].append(time.perf_counter() - started)

    def worker() -> None:
        while True:
            with lock:
                if not todo:
                    return
                name = todo.pop(0)
            timed("init", store.pair, "bench", name)
            pair = store.pair("bench", name, create=False)
            for user, reply in conversation(int(name[1:]), args.turns):
                timed("context", pair.context, user)
                timed("messages", pair.add_messages, [{"role": "user", "content": user},
                                                      {"role": "assistant", "content": reply}])

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started
    drain = wait_idle(pool.snapshot)
    queue = pool.snapshot()
    pool.close()
    return {"wall_s": round(wall, 1), "dream_drain_s": round(drain, 1),
            "turns_per_s": round(len(pairs) * args.turns / wall, 2),
            "endpoints": {kind: stats(samples) for kind, samples in times.items()},
            "errors": len(errors), "first_errors": errors[:3], "queue": queue,
            **verify(home, pairs, args.turns)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="dream worker threads")
    parser.add_argument("--window-budget", type=int, default=250,
                        help="tokens of window before a compaction (small: ~1 dream a pair)")
    parser.add_argument("--home", help="keep the run here (default: a temporary folder)")
    args = parser.parse_args()
    root = Path(args.home or tempfile.mkdtemp(prefix="memfs-serve-bench-"))
    pairs = [f"c{n:03d}" for n in range(args.pairs)]
    result: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "nproc": os.cpu_count(),
        "load_before": os.getloadavg(), "args": vars(args)}
    for side, run in (("http", bench_http), ("in_process", bench_inprocess)):
        home = root / side
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        result[side] = run(home, args, pairs)
        print(json.dumps({side: result[side]}), flush=True)
    result["load_after"] = os.getloadavg()
    result["http_over_in_process_p50"] = {
        kind: round(result["http"]["endpoints"][kind]["p50_ms"]
                    / max(result["in_process"]["endpoints"][kind]["p50_ms"], 0.1), 2)
        for kind in ("context", "messages")}
    print(json.dumps(result, indent=2))
    if not args.home:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
