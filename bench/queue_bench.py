"""Dreams per minute through the Celery queue: 1 worker vs 2 workers, on this machine.

    python bench/queue_bench.py [--pairs 24] [--rounds 3]

Each run gets fresh copies of ``pairs`` pairs, each holding one day of companion chat
(``companion_text``) and the compaction events it left pending; the workers (real
``memfs worker`` processes on a real ``redis-server``) are started and ready before the
clock starts; the clock runs from publishing the first job to the last merge. Layouts
(run interleaved, ``rounds`` times each, so machine noise hits all of them alike):

- ``inline``: the baseline, no queue: one process dreaming the same events in a loop;
- ``1 worker``: ``memfs worker --concurrency 1``;
- ``2 workers``: two such workers (two machines' worth of workers, here on one);
- ``1 worker, rules only``: one worker with ``offline_extractor = "rules"`` (no model).

All but the last dream with the shipped offline extractor (the embedding extractor
fronting the rules). Each pool process dreams one warm-up job before the clock starts
(its first dream loads the model, once for its life).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from companion_text import days  # noqa: E402
from memfs.agent.dream.runner import run_pending  # noqa: E402
from memfs.agent.jobs.publisher import CeleryQueue  # noqa: E402

from memfs.app import MemoryStore  # noqa: E402
from memfs.compaction import pending_events  # noqa: E402
from memfs.turn import TurnOptions, add_messages, end_session  # noqa: E402
from tests.queue_support import RedisServer, Worker, wait_for  # noqa: E402

MEMORY: list[tuple[str, dict[str, int]]] = []
"""PSS of each worker's processes after a run (main and pool)."""
LAYOUTS = {"inline": (0, 1, "embedding"), "1 worker": (1, 1, "embedding"),
           "2 workers": (2, 1, "embedding"), "1 worker, rules only": (1, 1, "rules")}
"""layout: (workers, --concurrency, offline_extractor)."""


def warm_up(home: Path, redis: RedisServer, jobs: int) -> None:
    """One dream per pool process before the clock: a pool process loads what its first
    dream needs (the embedding model) once for its whole life."""
    pairs = []
    for n in range(jobs):
        root = home / f"warm{n}" / "mira"
        shutil.copytree(TEMPLATE, root, symlinks=True)
        pairs.append(MemoryStore(home).pair(f"warm{n}", "mira", create=False))
    queue = CeleryQueue(redis.url)
    for pair in pairs:
        queue.submit(pair)
    wait_for(lambda: all(not pending_events(p.root) for p in pairs), 600, "the warm-up dreams")


TEMPLATE = Path()
INLINE_EMBEDDER: list[Any] = []
"""The bench process's own model, loaded once, for the inline baseline."""


def template(folder: Path) -> Path:
    pair = MemoryStore(folder).pair("template", "mira")
    (day,) = days(1)
    add_messages(pair, day, options=TurnOptions(dream="none"))
    end_session(pair)
    return pair.root


def _own_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run(layout: str, tmpl: Path, pairs: int, redis: RedisServer,
        scratch: Path) -> tuple[float, float]:
    """(dreams per minute of wall time, CPU seconds per dream) for one run."""
    home = scratch / f"home-{time.monotonic_ns()}"
    users = [f"u{i:03d}" for i in range(pairs)]
    for user in users:
        shutil.copytree(tmpl, home / user / "mira", symlinks=True)
    store = MemoryStore(home, embedder=INLINE_EMBEDDER[0] if INLINE_EMBEDDER else None)
    handles = [store.pair(u, "mira", create=False) for u in users]
    events = sum(len(pending_events(p.root)) for p in handles)
    count, concurrency, extractor = LAYOUTS[layout]
    workers = [Worker(home, redis.url, scratch / f"{layout}-{n}.log", concurrency=concurrency,
                      env={"MEMFS_OFFLINE_EXTRACTOR": extractor}) for n in range(count)]
    try:
        for worker in workers:
            worker.wait_ready()
        if count:
            warm_up(home, redis, count * concurrency)
        cpu = sum(w.cpu_seconds() for w in workers) + (_own_cpu() if count == 0 else 0.0)
        started = time.perf_counter()
        if count == 0:
            for pair in handles:
                run_pending(pair)
        else:
            queue = CeleryQueue(redis.url)
            for pair in handles:
                queue.submit(pair)
            wait_for(lambda: all(not pending_events(p.root) for p in handles), 1800,
                     "the queue to drain", step=0.05)
        elapsed = time.perf_counter() - started
        cpu = sum(w.cpu_seconds() for w in workers) + (_own_cpu() if count == 0 else 0.0) - cpu
        for worker in workers:
            MEMORY.append((layout, worker.memory()))
    finally:
        for worker in workers:
            worker.stop()
    shutil.rmtree(home, ignore_errors=True)
    return events / elapsed * 60, cpu / events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import memfs.agent.dream.extract_offline  # noqa: F401 - the inline baseline starts warm

    scratch = Path(tempfile.mkdtemp(prefix="memfs-queue-bench-"))
    global TEMPLATE
    tmpl = TEMPLATE = template(scratch / "template")
    INLINE_EMBEDDER.append(MemoryStore(scratch).embedder)  # the inline baseline starts warm
    INLINE_EMBEDDER[0].embed(["warm up"])
    per_pair = len(pending_events(tmpl))
    redis = RedisServer(scratch / "redis").start()
    print(f"load before: {os.getloadavg()}; {args.pairs} pairs x {per_pair} event(s)")
    rates: dict[str, list[float]] = {name: [] for name in LAYOUTS}
    cpus: dict[str, list[float]] = {name: [] for name in LAYOUTS}
    try:
        for _ in range(args.rounds):
            for layout in LAYOUTS:
                rate, cpu = run(layout, tmpl, args.pairs, redis, scratch)
                rates[layout].append(rate)
                cpus[layout].append(cpu)
                print(f"  {layout}: {rate:.1f} dreams/min, {cpu:.2f} CPU-s per dream, "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        redis.stop()
    print(f"load after: {os.getloadavg()}")
    base = statistics.median(rates["inline"])
    print("| layout | dreams/min (median) | runs | vs inline | CPU-s per dream (median) |")
    print("|---|---|---|---|---|")
    for layout, values in rates.items():
        med = statistics.median(values)
        runs = ", ".join(f"{v:.0f}" for v in values)
        print(f"| {layout} | {med:.1f} | {runs} | {med / base:.2f}x | "
              f"{statistics.median(cpus[layout]):.2f} |")
    mib = 1024 * 1024
    for name in LAYOUTS:
        rows = [dict(m) for layout, m in MEMORY if layout == name]
        if not rows:
            continue
        mains = [m.pop("main") for m in rows if "main" in m]
        pool = [v for m in rows for v in m.values()]
        print(f"worker memory after a run (PSS), {name}: main process "
              f"{statistics.median(mains) / mib:.0f} MiB, each pool process "
              f"{statistics.median(pool) / mib:.0f} MiB (max {max(pool) / mib:.0f})")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
