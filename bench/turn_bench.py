"""What one turn costs as history grows, through the public API, in a warm process.

A turn is ``add_messages([user])`` + ``context(user)`` (with search whenever the plan
retrieves) + ``add_messages([reply])``, dreaming off. The pair is grown through
``add_messages`` to each stage (1k, 10k, 100k messages: sessions of 100 messages, the
history committed every 10k, as ``memfs ingest`` would), and at each stage a fresh
process warms up and then times ``--turns`` turns; ingest speed is measured on the way.

Old and new side by side: ``--baseline DIR`` names an install of another memfs (for
example ``pip install --no-deps --target DIR`` of a checkout of main's commit); at each
stage a copy of the same pair is timed with it in its own process (``PYTHONPATH=DIR``).
The baseline's 100k stage is given fewer turns: each of its turns re-reads history.

    python bench/turn_bench.py --out /tmp/turns.json --baseline /tmp/memfs-c28-pkgs

Messages are drawn from a fixed vocabulary of ~4,000 distinct texts (so the embedding
cache, not the bench, decides how much is embedded: the index holds every message).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

T0 = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC)
NAMES = ["Lin", "Sam", "Priya", "Jonas", "Mara", "Theo", "Ada", "Kofi", "Rosa", "Ivan"]
TOPICS = ["the garden", "the new job", "my sister's wedding", "the marathon", "the flat",
          "the dentist", "our trip to Lisbon", "the book club", "the band", "the puppy",
          "the exam", "the kitchen", "grandad's birthday", "the allotment", "the move"]
USER = ["I talked to {n} about {t} today.", "{n} thinks {t} will take another month.",
        "Honestly {t} is stressing me out a bit.", "Good news about {t}: it went well!",
        "Can you remind me to call {n} about {t}?", "I keep thinking about {t} and {n}."]
REPLY = ["That sounds like a lot. How do you feel about {t}?", "I'm glad {n} was there.",
         "Want to plan the next step for {t} together?", "Noted. I'll keep {t} in mind."]
ASKS = ["What did I tell you about {t}?", "When did {n} last mention {t}?",
        "thanks, that helps", "ok", "Do you remember what {n} said about {t}?",
        "lol yes", "I'm off to bed, night!", "good morning!"]
SUGGEST_ASKS = ["What should I cook for {n} tonight?", "{n} is over on saturday, what could we do?",
                "Any gift ideas for {n}'s birthday?", "long drive with {n} tomorrow, what's good to sip?",
                "where should we go for a weekend away?", "thanks, that helps", "ok", "lol yes"]
"""``--suggest``: turns whose questions are suggestion requests, explicit and implied (the
plan classifies them and the constraint search runs), with the same share of small talk."""


SUGGEST = os.environ.get("MEMFS_BENCH_SUGGEST") == "1"
FRESH = os.environ.get("MEMFS_BENCH_FRESH") == "1"
DISTINCT = os.environ.get("MEMFS_BENCH_DISTINCT") == "1"
"""``--distinct``: no two history messages share a text (the default history repeats ~4,000
texts, which the distinct-row similarity product exploits); the first search embeds them all."""


def message_text(rng: random.Random, templates: list[str]) -> str:
    return rng.choice(templates).format(n=rng.choice(NAMES), t=rng.choice(TOPICS))


def transcript(start: int, count: int, seed: int = 7) -> list[dict[str, str]]:
    rng = random.Random(seed * 1_000_003 + start)
    out = []
    for i in range(start, start + count):
        ts = T0 + dt.timedelta(minutes=3 * i)
        text = message_text(rng, USER if i % 2 == 0 else REPLY)
        if DISTINCT:  # every message its own text, so its own row in the similarity product
            text += f" (note {i})"
        out.append({"role": "user" if i % 2 == 0 else "assistant", "content": text,
                    "ts": ts.isoformat(), "session": f"s-{i // 100:06d}"})
    return out


def store(home: Path) -> Any:
    from memfs import MemoryStore
    from memfs.config import Config

    return MemoryStore(home, config=Config(dream_trigger="off"))


def build(home: Path, size: int) -> dict[str, Any]:
    """Grow the pair to ``size`` messages through add_messages; msgs/s of this stage."""
    from memfs.turn import TurnOptions, add_messages, end_session

    pair = store(home).pair("alex", "mira")
    have = sum(1 for p in (pair.root / "history").glob("*.jsonl") for _ in p.open("rb"))
    started, added = time.perf_counter(), 0
    while have < size:
        n = min(1000, size - have)
        add_messages(pair, transcript(have, n), options=TurnOptions(dream="none"))
        have, added = have + n, added + n
        if have % 10_000 == 0 or have == size:
            end_session(pair)
    elapsed = time.perf_counter() - started
    return {"messages": have, "added": added, "seconds": elapsed,
            "msgs_per_s": added / elapsed if elapsed else None}


def ingest(home: Path, count: int) -> dict[str, Any]:
    """msgs/s of one add_messages call of ``count`` messages (nothing committed)."""
    from memfs.turn import TurnOptions, add_messages

    pair = store(home).pair("alex", "mira")
    have = sum(1 for p in (pair.root / "history").glob("*.jsonl") for _ in p.open("rb"))
    add_messages(pair, transcript(have, 1, seed=11), options=TurnOptions(dream="none"))
    started = time.perf_counter()  # after one message: the process has loaded the window
    add_messages(pair, transcript(have + 1, count, seed=11), options=TurnOptions(dream="none"))
    elapsed = time.perf_counter() - started
    return {"added": count, "seconds": elapsed, "msgs_per_s": count / elapsed}


def turns(home: Path, count: int, warmup: int) -> dict[str, Any]:
    """Time ``count`` turns after ``warmup`` ones, in this (fresh) process."""
    pair = store(home).pair("alex", "mira")
    rng = random.Random(3)
    times, cpus, retrieving = [], [], []
    started = time.perf_counter()
    pair.search("warm up")  # the model and the index load once per process, not per turn
    warm = time.perf_counter() - started
    for i in range(warmup + count):
        now = dt.datetime.now(dt.UTC)
        text = message_text(rng, SUGGEST_ASKS if SUGGEST else ASKS)
        if FRESH:  # a new text each turn, as in a real chat: the process has not embedded it
            text = f"{text} ({i + 1})"
        user = {"role": "user", "content": text, "ts": now.isoformat()}
        reply = {"role": "assistant", "content": message_text(rng, REPLY),
                 "ts": now.isoformat()}
        t, c = time.perf_counter(), time.process_time()
        pair.add_messages([user])
        ctx = pair.context(user["content"])
        pair.add_messages([reply])
        took, cpu = time.perf_counter() - t, time.process_time() - c
        if i == 0:
            first = took
        if i >= warmup:
            times.append(took)
            cpus.append(cpu)
            retrieving.append(bool(ctx.plan.need_retrieval))
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    hit = [t for t, r in zip(times, retrieving) if r]
    miss = [t for t, r in zip(times, retrieving) if not r]
    return {"turns": count, "warm_s": warm, "first_ms": first * 1e3, "p50_ms": _pct(times, 50),
            "p95_ms": _pct(times, 95), "max_ms": max(times) * 1e3,
            "retrieving": len(hit), "p50_retrieving_ms": _pct(hit, 50),
            "p95_retrieving_ms": _pct(hit, 95), "p50_plain_ms": _pct(miss, 50),
            "p95_plain_ms": _pct(miss, 95), "cpu_p50_ms": _pct(cpus, 50),
            "cpu_p95_ms": _pct(cpus, 95),
            "cpu_p95_plain_ms": _pct([c for c, r in zip(cpus, retrieving) if not r], 95),
            "peak_rss_mb": peak_kb / 1024,
            "wall_s": time.perf_counter() - started}


def _pct(values: list[float], q: int) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))] * 1e3


# -- orchestration: one process per measurement, old and new side by side ------------------------


def child(command: list[str], code: Path | None) -> dict[str, Any]:
    env = dict(os.environ)
    env["MEMFS_EMBED_BACKEND"] = env.get("MEMFS_EMBED_BACKEND", "onnx")
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, __file__, *command], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    home = Path(args.home)
    sizes = [int(s) for s in args.sizes.split(",")]
    baseline = Path(args.baseline) if args.baseline else None
    report: dict[str, Any] = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                              "nproc": os.cpu_count(), "load_before": os.getloadavg(),
                              "stages": []}
    for size in sizes:
        stage: dict[str, Any] = {"size": size}
        stage["build"] = child(["build", str(home), str(size)], None)
        copy = home.with_name(home.name + f"-old-{size}")
        if baseline is not None:  # copied before either runs: both start from the same
            shutil.rmtree(copy, ignore_errors=True)  # state (no vectors of the other's turns)
            shutil.copytree(home, copy, symlinks=True)
            (copy / "alex" / "mira" / ".memfs" / "window.json").unlink(missing_ok=True)
        stage["new"] = child(["turns", str(home), str(args.turns), str(args.warmup)], None)
        if baseline is not None:
            few = args.turns if size < 100_000 else args.baseline_turns_100k
            stage["old"] = child(["turns", str(copy), str(few), str(args.warmup)], baseline)
            if size <= 10_000:
                stage["old_ingest"] = child(["ingest", str(copy), str(min(300, size))], baseline)
            shutil.rmtree(copy, ignore_errors=True)
        # on the pair itself: a copy has new inodes, which the window state rightly takes
        # for rewritten files (one rebuild), and that is not what ingest costs
        stage["new_ingest"] = child(["ingest", str(home), "2000"], None)
        report["stages"].append(stage)
        print(json.dumps(stage), file=sys.stderr, flush=True)
    report["load_after"] = os.getloadavg()
    return report


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("build", "turns", "ingest"):
        command, home = sys.argv[1], Path(sys.argv[2])
        numbers = [int(x) for x in sys.argv[3:]]
        out = {"build": build, "turns": turns, "ingest": ingest}[command](home, *numbers)
        print(json.dumps(out))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", default="/tmp/memfs-turn-bench/home")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--baseline", help="an install of the memfs to compare with")
    parser.add_argument("--baseline-turns-100k", type=int, default=8)
    parser.add_argument("--out")
    parser.add_argument("--keep", action="store_true", help="grow an existing pair")
    parser.add_argument("--distinct", action="store_true",
                        help="every history message a different text (slow first search)")
    parser.add_argument("--fresh", action="store_true",
                        help="each timed user message a text the process has not seen (the "
                             "templates repeat, so without this most turns embed nothing)")
    parser.add_argument("--suggest", action="store_true",
                        help="the timed turns ask for suggestions (SUGGEST_ASKS)")
    args = parser.parse_args()
    if args.suggest:
        os.environ["MEMFS_BENCH_SUGGEST"] = "1"
    if args.fresh:
        os.environ["MEMFS_BENCH_FRESH"] = "1"
    if args.distinct:
        os.environ["MEMFS_BENCH_DISTINCT"] = "1"  # read by the child processes
    if not args.keep:
        shutil.rmtree(Path(args.home), ignore_errors=True)
    report = run(args)
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
