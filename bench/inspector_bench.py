"""Inspector page latency over HTTP: the timeline of pairs with 2k and 20k commits (first
and last page), a dream's page and an undo preview, against ``git log -n 50`` run side by
side in the same loop as the baseline (the floor any timeline page pays).

    python bench/inspector_bench.py [--scales 2000,20000] [--runs 30]

The histories are built with ``git fast-import`` (tests/_ui.py ``long_history``: pin
edits, summary rewrites, a dream merge writing a card every 20th commit); the server is
the real inspector app on uvicorn at 127.0.0.1, timed from a client in the same process.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2  # noqa: E402

from memfs.app import MemoryStore  # noqa: E402
from memfs.keys import KeyStore  # noqa: E402
from memfs.runtime.host import Host  # noqa: E402
from memfs.ui import create_app  # noqa: E402
from tests._serve import live_server  # noqa: E402
from tests._ui import long_history  # noqa: E402


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def row(name: str, ms: list[float], base: list[float]) -> str:
    med, p95 = statistics.median(ms), sorted(ms)[int(0.95 * (len(ms) - 1))]
    return (f"| {name} | {med:.1f} | {p95:.1f} | {statistics.median(base):.1f} | "
            f"{med / statistics.median(base):.1f}x |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scales", default="2000,20000")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        store = MemoryStore(home)
        scales = [int(s) for s in args.scales.split(",")]
        for n in scales:
            start = time.perf_counter()
            long_history(store.pair("alex", f"p{n}"), n)
            print(f"built {n} commits in {time.perf_counter() - start:.1f} s")
        host = Host(store, keys=KeyStore(home), allow_open=True)
        print("| page | median ms | p95 ms | git log -n50 ms | ratio |\n|---|---|---|---|---|")
        with live_server(host, create_app(host, mcp=False)) as url, httpx2.Client() as client:
            for n in scales:
                pair = store.pair("alex", f"p{n}", create=False)
                dream = next(e.sha for e in pair.log(40) if e.is_dream)
                last = -(-(n + 1) // 50)

                def baseline(root: Path = pair.root) -> None:
                    subprocess.run(["git", "log", "--first-parent", "-n50", "--name-only"],
                                   cwd=root, check=True, capture_output=True)

                pages = {f"timeline p1, {n} commits": f"/ui/alex/p{n}",
                         f"timeline p{last} (last), {n}": f"/ui/alex/p{n}?p={last}",
                         f"a dream, {n}": f"/ui/alex/p{n}/commits/{dream}",
                         f"undo preview of it, {n}": f"/ui/alex/p{n}/revert/{dream}"}
                for name, path in pages.items():
                    client.get(url + path).raise_for_status()
                    base: list[float] = []
                    ms = []
                    for _ in range(args.runs):  # interleaved: the same load for both
                        base += timed(baseline, 1)
                        ms += timed(lambda p=path: client.get(url + p).raise_for_status(), 1)
                    print(row(name, ms, base))


if __name__ == "__main__":
    main()
