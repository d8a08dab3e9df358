"""Search latency of two code versions side by side, in one run: old (a checkout of an
earlier commit) against new (this checkout), on the same pairs, interleaved.

    python bench/search_ab.py --old /work/wt-12-base [--scales 10000,110000] [--rounds 2]

The pairs are built once by ``bench/search_bench.py`` (random-but-normalised vectors planted
in the content-hash cache; the query path is real, query embedding included), then copied so
that each version keeps its own index files (their formats differ). Each round runs
``search_bench.py --reuse --throughput 0`` once per version in a fresh process, old then new
then new then old..., so drifting machine load hits both alike; the load average is
recorded per run. The old version runs from a shadow package assembled from its checkout
(``memfs/`` with ``agent/``, ``templates/``, ``sample_memories/`` inside, as setup.py
installs them), put first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def shadow(checkout: Path, folder: Path) -> Path:
    """An importable ``memfs`` package laid out from ``checkout`` as setup.py maps it."""
    target = folder / "memfs"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(checkout / "memfs", target)
    for name in ("agent", "templates", "sample_memories"):
        shutil.copytree(checkout / name, target / name)
    # the bench script puts its checkout first on sys.path: give it this one
    (folder / "bench").mkdir(exist_ok=True)
    shutil.copy2(checkout / "bench" / "search_bench.py", folder / "bench" / "search_bench.py")
    return folder


def run(version: str, script: Path, home: Path, scale: int, queries: int,
        pythonpath: str | None) -> dict[str, object]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run([sys.executable, str(script), "--reuse", "--throughput", "0",
                          "--scales", str(scale), "--queries", str(queries), "--home", str(home)],
                         check=True, capture_output=True, text=True, env=env,
                         cwd=str(script.parent)).stdout
    # search_bench prints one line per scale, then everything indented: take the line
    row: dict[str, object] = next(json.loads(line) for line in out.splitlines()
                                  if line.startswith('{"items": '))
    row["version"] = version
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, type=Path, help="Checkout of the old commit.")
    parser.add_argument("--scales", default="10000,110000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--home", default="/tmp/memfs-bench-ab", type=Path)
    args = parser.parse_args()
    old_path = str(shadow(args.old.resolve(), args.home / "old-package"))
    versions = {"old": (Path(old_path) / "bench" / "search_bench.py", old_path),
                "new": (HERE / "search_bench.py", None)}
    results: list[dict[str, object]] = []
    for scale in (int(s) for s in args.scales.split(",")):
        base = args.home / "pairs"
        subprocess.run([sys.executable, str(HERE / "search_bench.py"), "--reuse",
                        "--throughput", "0", "--queries", "0", "--scales", str(scale),
                        "--home", str(base)], check=True, capture_output=True)
        for version in versions:
            home = args.home / version / str(scale)
            if not (home / "bench" / "mira" / ".git").exists():
                shutil.copytree(base / str(scale), home, dirs_exist_ok=True, symlinks=True)
        order = ["old", "new"]
        for n in range(args.rounds):
            for version in order if n % 2 == 0 else order[::-1]:
                script, path = versions[version]
                row = run(version, script, args.home / version, scale, args.queries, path)
                results.append(row)
                print(json.dumps(row), flush=True)
    summary = {}
    for scale in {r["items"] for r in results}:
        mine = {v: [r for r in results if r["items"] == scale and r["version"] == v]
                for v in versions}
        p95 = {v: statistics.median(float(r["p95_ms"]) for r in rows) for v, rows in mine.items()}
        p50 = {v: statistics.median(float(r["p50_ms"]) for r in rows) for v, rows in mine.items()}
        summary[str(scale)] = {"p50_ms": p50, "p95_ms": p95,
                               "p95_ratio_new_over_old": round(p95["new"] / p95["old"], 3)}
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
