"""What one pair costs on disk and in memory after N days of chat (docs/SCALING.md's inputs).

    python bench/pair_footprint.py [--days 30] [--per-day 50] [--pairs 4] [--out DIR]

Builds one pair the way production does: ``per_day`` messages a day through
``add_messages`` with the default window budget, every compaction dreamed (offline rules),
the session committed at the end of each day. Then measures, on that real repository:

- disk: ``.git`` as left (loose objects) and after ``git gc``, the working tree
  (history/, cards/, summary.md), and the search index in ``.memfs/index/`` once the real
  model (all-MiniLM-L6-v2) has indexed the pair;
- memory: in a fresh process that has loaded the model and searched an empty pair once
  (the one-time imports), the resident-set growth per pair whose index is opened
  (``pairs`` copies of the pair, each searched once): what a server keeping pairs warm pays;
- CPU: seconds per dream and per compaction, as measured while building.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from companion_text import days  # noqa: E402

from memfs.app import MemoryStore  # noqa: E402
from memfs.turn import TurnOptions, TurnReport, add_messages, end_session  # noqa: E402


def build(home: Path, n_days: int, per_day: int) -> dict[str, float]:
    pair = MemoryStore(home).pair("alex", "mira")
    dreams = 0
    started = time.perf_counter()
    cpu = _cpu()
    for day in days(n_days, per_day):
        report = TurnReport()
        add_messages(pair, day, options=TurnOptions(dream="inline", report=report))
        dreams += len(report.events)
        end_session(pair)
    return {"messages": n_days * per_day, "dreams": dreams,
            "build_s": round(time.perf_counter() - started, 1),
            "build_cpu_s": round(_cpu() - cpu, 1),
            "cards": len(pair.cards()), "active_cards": len(pair.cards("active"))}


def _cpu() -> float:
    """CPU seconds of this process and its children (git, the hooks) so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def turn_costs(root: Path, home: Path) -> dict[str, float]:
    """At the end of the month: what one more exchange and the derived window cost (both
    read the pair's whole first-parent history), medians of 5."""
    from memfs.window import current_window

    pair = MemoryStore(home).pair(root.parent.name, root.name, create=False)
    window, turn = [], []
    for i in range(5):
        started = time.perf_counter()
        current_window(pair)
        window.append(time.perf_counter() - started)
        started = time.perf_counter()
        add_messages(pair, [{"role": "user", "content": f"one more {i}"},
                            {"role": "assistant", "content": f"noted {i}"}],
                     options=TurnOptions(dream="none"))
        turn.append(time.perf_counter() - started)
    commits = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, check=True,
                             capture_output=True, text=True).stdout.strip()
    loose = subprocess.run(["git", "count-objects", "-v"], cwd=root, check=True,
                           capture_output=True, text=True).stdout
    counts = dict(line.split(": ") for line in loose.splitlines())
    return {"commits": int(commits), "loose_objects": int(counts["count"]),
            "window_ms": round(1000 * statistics.median(window), 1),
            "exchange_ms": round(1000 * statistics.median(turn), 1)}


def du(path: Path) -> int:
    if not path.exists():
        return 0
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def disk(root: Path) -> dict[str, int]:
    out = {"git_loose": du(root / ".git"), "history": du(root / "history"),
           "card_files": du(root / "cards"), "summary": du(root / "summary.md")}
    subprocess.run(["git", "gc", "-q"], cwd=root, check=True)
    out["git_after_gc"] = du(root / ".git")
    out["index"] = du(root / ".memfs" / "index")
    return out


MEMORY = """
import json, sys, time
from pathlib import Path
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) * 1024
from memfs.app import MemoryStore
from memfs.embed import SentenceTransformerEmbedder
embedder = SentenceTransformerEmbedder()
embedder.embed(["warm up"])
store = MemoryStore(sys.argv[1], embedder=embedder)
store.pair("warm-up", "mira").search("what did I say about my sister", k=5)
rows = [rss()]
for user in sys.argv[2:]:
    store.pair(user, "mira", create=False).search("what did I say about my sister", k=5)
    rows.append(rss())
print(json.dumps(rows))
"""


def memory(home: Path, users: list[str]) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", MEMORY, str(home), *users], check=True,
                         capture_output=True, text=True, env={"HF_HUB_OFFLINE": "1",
                                                              "PATH": "/usr/bin:/bin"})
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    return {"rss_model_loaded_and_warm": rows[0],
            "rss_per_open_pair": (rows[-1] - rows[0]) / (len(rows) - 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--per-day", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--reuse", action="store_true",
                        help="measure the pair already built in --out (skip building it)")
    args = parser.parse_args()
    home = args.out or Path(tempfile.mkdtemp(prefix="memfs-footprint-"))
    root = home / "alex" / "mira"
    built = {} if args.reuse else build(home, args.days, args.per_day)
    users = ["alex"] + [f"copy{i}" for i in range(1, args.pairs)]
    for user in users[1:]:
        if not (home / user / "mira").exists():
            shutil.copytree(root, home / user / "mira", symlinks=True)
    mem = memory(home, users)
    sizes = disk(root)  # after the memory run: the index exists now
    costs = turn_costs(home / "copy1" / "mira", home) if args.pairs > 1 else {}
    print(json.dumps({**built, **sizes, **mem, **costs}, indent=2))


if __name__ == "__main__":
    main()
