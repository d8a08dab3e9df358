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
(JSON, uvicorn, the per-request key check and pair lock) costs. The two sides alternate
in ``--rounds`` (a slice of the pairs each, the order flipped every round, dreams drained
between), so a busy machine's background load falls on both alike.
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


# -- the two sides -----------------------------------------------------------------------------


class HttpSide:
    """A real ``memfs serve`` process and a client of ``clients`` concurrent conversations."""

    name = "http"

    def __init__(self, home: Path, args: argparse.Namespace) -> None:
        self.home, self.args = home, args
        (home / "config.toml").write_text(f"window_budget = {args.window_budget}\n")
        self.key = KeyStore(home).add(None)[1]
        self.base = f"http://127.0.0.1:{18765 + os.getpid() % 1000}"
        memfs = shutil.which("memfs", path=str(Path(sys.executable).parent)) or "memfs"
        log = (home / "serve.log").open("wb")
        self.server = subprocess.Popen(
            [memfs, "serve", "--port", self.base.rsplit(":", 1)[1], "--workers",
             str(args.workers)], stdout=log, stderr=log, env={**os.environ, "MEMFS_HOME": str(home)})
        self.headers = {"Authorization": f"Bearer {self.key}"}
        for _ in range(600):
            try:
                httpx2.get(self.base + "/v1/health", timeout=2)
                break
            except httpx2.TransportError:
                time.sleep(0.2)
        httpx2.put(self.base + "/v1/pairs/warm/up", headers=self.headers, timeout=300)
        httpx2.post(self.base + "/v1/pairs/warm/up/search", json={"query": "warm up the model"},
                    headers=self.headers, timeout=300)  # the model loads here, not in a turn

    def queue(self) -> dict[str, Any]:
        queue: dict[str, Any] = httpx2.get(self.base + "/v1/health", timeout=60).json()["queue"]
        return queue

    def run(self, pairs: list[str], times: dict[str, list[float]], errors: list[str]) -> None:
        asyncio.run(self._run(pairs, times, errors))

    async def _run(self, pairs: list[str], times: dict[str, list[float]],
                   errors: list[str]) -> None:
        todo = list(pairs)
        limits = httpx2.Limits(max_connections=self.args.clients)
        async with httpx2.AsyncClient(base_url=self.base, headers=self.headers, timeout=300,
                                      limits=limits) as client:
            async def call(kind: str, method: str, path: str, body: Any = None) -> None:
                started = time.perf_counter()
                response = await client.request(method, path, json=body)
                times[kind].append(time.perf_counter() - started)
                if response.status_code >= 300:
                    errors.append(f"{kind} {path}: {response.status_code} {response.text[:200]}")

            async def worker() -> None:
                while todo:
                    name = todo.pop(0)
                    path = f"/v1/pairs/bench/{name}"
                    await call("init", "PUT", path)
                    for user, reply in conversation(int(name[1:]), self.args.turns):
                        await call("context", "POST", path + "/context", {"message": user})
                        await call("messages", "POST", path + "/messages", {"messages": [
                            {"role": "user", "content": user},
                            {"role": "assistant", "content": reply}]})

            await asyncio.gather(*(worker() for _ in range(self.args.clients)))

    def stop(self) -> dict[str, Any]:
        self.server.send_signal(signal.SIGTERM)
        self.server.wait(timeout=120)
        log = (self.home / "serve.log").read_text(errors="replace")
        return {"server_tracebacks": log.count("Traceback")}


class InProcessSide:
    """The same conversations on ``clients`` threads against one ``MemoryStore``."""

    name = "in_process"

    def __init__(self, home: Path, args: argparse.Namespace) -> None:
        self.args = args
        self.pool = ThreadPoolQueue(args.workers)
        config = Config(window_budget=args.window_budget)
        self.store = MemoryStore(home, config=config, queue=self.pool,
                                 embedder=SharedEmbedder(config.embed_model))
        self.store.pair("warm", "up").search("warm up the model")

    def queue(self) -> dict[str, Any]:
        return dict(self.pool.snapshot())

    def run(self, pairs: list[str], times: dict[str, list[float]], errors: list[str]) -> None:
        todo, lock = list(pairs), threading.Lock()

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
                timed("init", self.store.pair, "bench", name)
                pair = self.store.pair("bench", name, create=False)
                for user, reply in conversation(int(name[1:]), self.args.turns):
                    timed("context", pair.context, user)
                    timed("messages", pair.add_messages, [
                        {"role": "user", "content": user}, {"role": "assistant", "content": reply}])

        threads = [threading.Thread(target=worker) for _ in range(self.args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def stop(self) -> dict[str, Any]:
        self.pool.close()
        return {}


Side = HttpSide | InProcessSide


def run_rounds(sides: list[Side], pairs: list[str], rounds: int) -> dict[str, Any]:
    """Each round: a slice of the pairs through each side in turn (the order alternates, so
    the machine's background load falls on both alike), then its dreams drained."""
    times: dict[str, dict[str, list[float]]] = {s.name: defaultdict(list) for s in sides}
    errors: dict[str, list[str]] = {s.name: [] for s in sides}
    walls, drains = dict.fromkeys(times, 0.0), dict.fromkeys(times, 0.0)
    loads = []
    for number in range(rounds):
        chunk = pairs[number::rounds]
        for side in sides if number % 2 == 0 else sides[::-1]:
            started = time.monotonic()
            side.run(chunk, times[side.name], errors[side.name])
            walls[side.name] += time.monotonic() - started
            drains[side.name] += wait_idle(side.queue)
            loads.append(round(os.getloadavg()[0], 1))
        print(json.dumps({"round": number + 1, "load": loads[-2:]}), flush=True)
    return {name: {"wall_s": round(walls[name], 1), "dream_drain_s": round(drains[name], 1),
                   "turns_per_s": 0.0, "endpoints": {k: stats(v) for k, v in times[name].items()},
                   "errors": len(errors[name]), "first_errors": errors[name][:3]}
            for name in times} | {"loads": loads}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5, help="alternations of the two sides")
    parser.add_argument("--workers", type=int, default=2, help="dream worker threads")
    parser.add_argument("--window-budget", type=int, default=250,
                        help="tokens of window before a compaction (small: ~2 dreams a pair)")
    parser.add_argument("--home", help="keep the run here (default: a temporary folder)")
    args = parser.parse_args()
    root = Path(args.home or tempfile.mkdtemp(prefix="memfs-serve-bench-"))
    pairs = [f"c{n:03d}" for n in range(args.pairs)]
    result: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "nproc": os.cpu_count(),
        "load_before": os.getloadavg(), "args": vars(args)}
    homes = {name: root / name for name in ("http", "in_process")}
    for home in homes.values():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
    sides: list[Side] = [HttpSide(homes["http"], args), InProcessSide(homes["in_process"], args)]
    try:
        result |= run_rounds(sides, pairs, args.rounds)
        for side in sides:
            result[side.name]["queue"] = side.queue()
            result[side.name]["turns_per_s"] = round(
                len(pairs) * args.turns / result[side.name]["wall_s"], 2)
    finally:
        for side in sides:
            result.setdefault(side.name, {}).update(side.stop())
    for name, home in homes.items():
        result[name] |= verify(home, pairs, args.turns)
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
