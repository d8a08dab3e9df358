"""What every pipeline eval shares: a throwaway home, timings, the machine, and how to read
a context.

The evals in this package grade *what reached the model*, not what is stored: a fact that
sits in a card nobody retrieved is a miss. So the helpers here turn a ``Context`` into the
text the model would read (system blocks and messages, minus the question being asked) and
say which layer a keyword came from — pins, summary, a retrieved card or message, or the
recent window — because "recalled" means little until you know which layer did the work.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memfs.agent.evals.planted_data import mentions

if TYPE_CHECKING:
    from rich.table import Table

    from memfs.context import Context
    from memfs.embed import Embedder


class EvalReport(Protocol):
    """What the CLI needs from an eval's result: a verdict, a table and a JSON document."""

    @property
    def passed(self) -> bool: ...

    def to_dict(self) -> dict[str, Any]: ...

    def table(self) -> Table: ...


@dataclass
class Timings:
    """Wall-clock seconds per phase, in the order the phases ran."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def to_dict(self) -> dict[str, float]:
        return {k: round(v, 2) for k, v in self.seconds.items()}

    def line(self) -> str:
        return ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())


@contextmanager
def eval_home(home: Path | None) -> Iterator[Path]:
    """``home`` as given (kept afterwards, to inspect), else a temporary one (removed)."""
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        yield home
        return
    folder = Path(tempfile.mkdtemp(prefix="memfs-eval-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def load_embedder(embedder: Embedder | None, timings: Timings) -> Embedder:
    """The given embedder, or the default model (its load time recorded as a phase)."""
    if embedder is not None:
        return embedder
    from memfs.embed import default_embedder

    with timings.phase("model load"):
        return default_embedder()


def machine() -> dict[str, Any]:
    """Where a number was measured: CPU model, cores, Python, date."""
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "date": dt.date.today().isoformat()}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# -- reading a context ----------------------------------------------------------------------


def context_text(ctx: Context, question: str | None = None) -> str:
    """Everything the model reads for this turn, without the question itself (the last
    user message), so a keyword in the question can never count as recalled."""
    messages = [m["content"] for m in ctx.messages]
    if question is not None and messages and messages[-1].endswith(question):
        messages[-1] = messages[-1][: len(messages[-1]) - len(question)]
    return "\n\n".join([ctx.system_text, *messages])


def sources(ctx: Context, keywords: Sequence[str], summary: str,
            question: str | None = None) -> list[str]:
    """Which layers of the context mention any of ``keywords``: ``pins`` (system/),
    ``summary``, ``card <id>`` / ``message <id>`` (retrieved), ``window``."""
    def has(text: str) -> bool:
        return any(mentions(text, k) for k in keywords)

    found = []
    if ctx.system and has(ctx.system[0]):
        found.append("pins")
    if summary and has(summary):
        found.append("summary")
    found += [f"{hit.kind} {hit.id}" for hit in ctx.hits if has(hit.text)]
    window = [m["content"] for m in ctx.messages]
    if question is not None and window and window[-1].endswith(question):
        window[-1] = window[-1][: len(window[-1]) - len(question)]
    if any(has(text) for text in window):
        found.append("window")
    return found


def verdict(passed: bool) -> str:
    return "[green]PASSED[/]" if passed else "[red]FAILED[/]"


# -- LongMemEval (the recall eval itself lives in agent/evals/longmemeval.py) ---------------

MIN_HYBRID_R10 = 0.90
"""Hybrid recall_any@10 floor. Measured 0.967 on all 60 questions of the shared slice and
0.917 on the first 12 (BENCHMARKS.md, "Retrieval recall"); the hybrid must also be at least
as good as plain BM25 and plain dense retrieval at R@5 and R@10."""


@dataclass
class RecallReport:
    """``run_longmemeval``'s summary, judged on the hybrid (memfs) method's R@10."""

    data: dict[str, Any]
    path: str
    limit: int | None
    timings: Timings
    min_r10: float = MIN_HYBRID_R10

    @property
    def hybrid_r10(self) -> float:
        return float(self.data["methods"].get("hybrid", {}).get("all", {}).get("R@10", 0.0))

    def recall(self, method: str, k: int) -> float:
        return float(self.data["methods"].get(method, {}).get("all", {}).get(f"R@{k}", 0.0))

    @property
    def beats_baselines(self) -> bool:
        baselines = [m for m in self.data["methods"] if m in ("bm25", "dense")]
        return all(self.recall("hybrid", k) >= self.recall(m, k) for m in baselines for k in (5, 10))

    @property
    def passed(self) -> bool:
        return (self.data.get("questions", 0) > 0 and self.hybrid_r10 >= self.min_r10
                and self.beats_baselines)

    def to_dict(self) -> dict[str, Any]:
        return {"eval": "longmemeval", "path": self.path, "limit": self.limit, **self.data,
                "thresholds": {"hybrid_R@10": self.min_r10}, "passed": self.passed,
                "timings": self.timings.to_dict(), "machine": machine()}

    def table(self) -> Table:
        from rich.table import Table

        table = Table(title=f"LongMemEval turn recall ({self.data.get('questions', 0)} questions)")
        ks = self.data["ks"]
        for column in ("group", "n", "method", *(f"R@{k}" for k in ks)):
            table.add_column(column)
        groups = sorted(next(iter(self.data["methods"].values()), {}),
                        key=lambda g: (g != "all", g.startswith("split:"), g))
        for group in groups:
            for method, rows in self.data["methods"].items():
                row = rows[group]
                table.add_row(group, str(row["n"]), method,
                              *(f"{row[f'R@{k}']:.3f}" for k in ks))
        table.caption = (f"hybrid R@10 {self.hybrid_r10:.3f} (needs >= {self.min_r10:.2f}, and "
                         f"no worse than bm25 and dense at R@5 and R@10): "
                         f"{verdict(self.passed)}\ntime: {self.timings.line()}")
        return table


def run_recall_eval(path: Path, limit: int | None = None, *,
                    embedder: Embedder | None = None,
                    cache_dir: Path | None = None) -> RecallReport:
    """Run the LongMemEval recall eval (bm25, dense, hybrid) and judge it. ``cache_dir``:
    where turn vectors are cached by content hash (default: the bench's cache)."""
    from memfs.agent.evals.longmemeval import CACHE_DIR, run_longmemeval

    timings = Timings()
    model = load_embedder(embedder, timings)
    with timings.phase("recall"):
        data = run_longmemeval(path, limit, embedder=model, cache_dir=cache_dir or CACHE_DIR)
    return RecallReport(data, str(path), limit, timings)
