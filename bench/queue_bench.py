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
- ``1 worker x2``: one worker with ``--concurrency 2``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

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

LAYOUTS = {"inline": (0, 1), "1 worker": (1, 1), "2 workers": (2, 1), "1 worker x2": (1, 2)}


def template(folder: Path) -> Path:
    pair = MemoryStore(folder).pair("template", "mira")
    (day,) = days(1)
    add_messages(pair, day, options=TurnOptions(dream="none"))
    end_session(pair)
    return pair.root


def run(layout: str, tmpl: Path, pairs: int, redis: RedisServer, scratch: Path) -> float:
    home = scratch / f"home-{time.monotonic_ns()}"
    users = [f"u{i:03d}" for i in range(pairs)]
    for user in users:
        shutil.copytree(tmpl, home / user / "mira", symlinks=True)
    store = MemoryStore(home)
    handles = [store.pair(u, "mira", create=False) for u in users]
    events = sum(len(pending_events(p.root)) for p in handles)
    count, concurrency = LAYOUTS[layout]
    workers = [Worker(home, redis.url, scratch / f"{layout}-{n}.log", concurrency=concurrency)
               for n in range(count)]
    try:
        for worker in workers:
            worker.wait_ready()
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
    finally:
        for worker in workers:
            worker.stop()
    shutil.rmtree(home, ignore_errors=True)
    return events / elapsed * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import memfs.agent.dream.extract_offline  # noqa: F401 - the inline baseline starts warm

    scratch = Path(tempfile.mkdtemp(prefix="memfs-queue-bench-"))
    tmpl = template(scratch / "template")
    per_pair = len(pending_events(tmpl))
    redis = RedisServer(scratch / "redis").start()
    print(f"load before: {os.getloadavg()}; {args.pairs} pairs x {per_pair} event(s)")
    rates: dict[str, list[float]] = {name: [] for name in LAYOUTS}
    try:
        for _ in range(args.rounds):
            for layout in LAYOUTS:
                rates[layout].append(run(layout, tmpl, args.pairs, redis, scratch))
                print(f"  {layout}: {rates[layout][-1]:.1f} dreams/min", flush=True)
    finally:
        redis.stop()
    print(f"load after: {os.getloadavg()}")
    base = statistics.median(rates["inline"])
    print("| layout | dreams/min (median) | runs | vs inline |")
    print("|---|---|---|---|")
    for layout, values in rates.items():
        med = statistics.median(values)
        runs = ", ".join(f"{v:.0f}" for v in values)
        print(f"| {layout} | {med:.1f} | {runs} | {med / base:.2f}x |")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
