"""``memfs eval pins``: a pin set at message 1 is in every context that follows.

Pins are the one guarantee retrieval cannot give ("the fact existed, but nothing fetched
it"), and compaction is where such guarantees usually break. So the conversation is
replayed through the real pipeline with a small window budget — many compaction events,
each dreamed (summary rewritten, cards written) at the scenario's clock — and the context
is built, as for the next turn, at 50, 200 and 1,000 messages after the pin, right after
every dream, and every ``stride`` messages in between. Every one of them must carry the
pin verbatim in the ``system/`` block. One miss fails the eval.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs.agent.evals.planted import dream_at, planted_scenario
from memfs.agent.evals.report import Timings, eval_home, load_embedder, machine, verdict
from memfs.agent.services import wired_store
from rich.table import Table

from memfs.config import Config
from memfs.store import MemoryPair

if TYPE_CHECKING:
    from memfs.embed import Embedder

PIN = "I go by Sasha, never by my legal name Alexandra; please never use it."
USER, CHARACTER = "pins-user", "companion"
CHECKPOINTS = (50, 200, 1000)
WINDOW_BUDGET = 600
"""Tokens: small enough that about every 40 messages leave the window in a compaction."""
MIN_SCENARIO = 52
"""The smallest planted scenario (one exchange per session); a shorter run stops early."""
Tamper = Callable[[MemoryPair, int], None]
"""``tamper(pair, after)``: called after each message; tests use it to break the pipeline."""


@dataclass
class Check:
    """One context, built for the user message that follows message ``after``."""

    after: int
    why: str
    present: bool
    system_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {"after_pin": self.after, "why": self.why, "present": self.present,
                "system_tokens": self.system_tokens}


@dataclass
class PinsReport:
    messages: int
    checks: list[Check]
    pipeline: dict[str, int]
    timings: Timings
    pin: str = PIN
    notes: list[str] = field(default_factory=list)

    @property
    def misses(self) -> list[Check]:
        return [c for c in self.checks if not c.present]

    @property
    def passed(self) -> bool:
        named = {c.after for c in self.checks if c.why.startswith("checkpoint")}
        wanted = {n for n in CHECKPOINTS if n <= self.messages}
        return bool(self.checks) and not self.misses and wanted <= named

    def to_dict(self) -> dict[str, Any]:
        return {"eval": "pins", "pin": self.pin, "messages_after_pin": self.messages,
                "contexts": len(self.checks), "missed": len(self.misses),
                "passed": self.passed, "pipeline": self.pipeline,
                "timings": self.timings.to_dict(), "machine": machine(),
                "checks": [c.to_dict() for c in self.checks]}

    def table(self) -> Table:
        table = Table(title=f"Pin in context ({self.messages} messages after the pin)")
        for column in ("messages after pin", "why", "pin in context"):
            table.add_column(column)
        shown = [c for c in self.checks if c.why.startswith("checkpoint") or not c.present]
        for c in shown:
            table.add_row(str(c.after), c.why, "[green]yes[/]" if c.present else "[red]NO[/]")
        p = self.pipeline
        table.caption = "\n".join([
            f"{len(self.checks) - len(self.misses)}/{len(self.checks)} contexts carried the pin "
            f"(checkpoints, every {p['stride']} messages, the first turn after each dream): "
            f"{verdict(self.passed)}",
            f"pipeline: window budget {p['window_budget']} tokens, {p['compactions']} "
            f"compactions, {p['dreams']} dreams, {p['cards']} cards written",
            f"time: {self.timings.line()}"])
        return table


def run_pins(n_messages: int = 1000, *, seed: int = 7, stride: int = 20,
             home: Path | None = None, embedder: Embedder | None = None,
             config: Config | None = None, tamper: Tamper | None = None) -> PinsReport:
    """Pin after the first message, replay ``n_messages`` more, check every context."""
    scenario = planted_scenario(seed, max(n_messages + 2, MIN_SCENARIO))
    timings = Timings()
    model = load_embedder(embedder, timings)
    config = (config or Config()).with_(window_budget=WINDOW_BUDGET)
    with eval_home(home) as folder:
        pair = wired_store(folder, embedder=model, config=config).pair(USER, CHARACTER)
        with timings.phase("replay with checks"):
            checks = list(_replay(pair, scenario.sessions, n_messages, stride, tamper))
        stats = _stats(pair, stride)
    return PinsReport(n_messages, checks, stats, timings)


def _replay(pair: MemoryPair, sessions: list[list[dict[str, str]]], n_messages: int,
            stride: int, tamper: Tamper | None) -> Iterator[Check]:
    """Feed exchange by exchange; yield a check wherever one is due. Message 1 (index 0)
    carries the pin; the turn of message index ``k`` is "``k`` messages later"."""
    from memfs.turn import TurnOptions, add_messages, end_session

    index, dreamed = 0, False
    for session in sessions:
        for start in range(0, len(session), 2):
            user, reply = session[start], session[start + 1]
            why = _due(index, stride) or ("after a dream" if dreamed else "")
            if why:
                yield _check(pair, user, index, why)
            if index >= n_messages:
                end_session(pair)
                return
            add_messages(pair, [user], options=TurnOptions(dream="none"))
            if index == 0:
                pair.pin(PIN)
            add_messages(pair, [reply], options=TurnOptions(dream="none"))
            index += 2
            if tamper is not None:
                tamper(pair, index)
            dreamed = dream_at(pair, _ts(reply)) > 0
        end_session(pair)


def _due(index: int, stride: int) -> str:
    if index in CHECKPOINTS:
        return f"checkpoint {index}"
    return "stride" if index > 0 and index % stride == 0 else ""


def _check(pair: MemoryPair, next_user: dict[str, str], after: int, why: str) -> Check:
    ctx = pair.context(next_user["content"], now=_ts(next_user))
    return Check(after, why, PIN in ctx.system[0], ctx.tokens.get("system", 0))


def _ts(message: dict[str, str]) -> dt.datetime:
    return dt.datetime.fromisoformat(message["ts"].replace("Z", "+00:00"))


def _stats(pair: MemoryPair, stride: int) -> dict[str, int]:
    from memfs.compaction import pending_events

    dreams = sum(e.is_dream for e in pair.log())
    return {"window_budget": pair.config.window_budget, "stride": stride,
            "compactions": dreams + len(pending_events(pair.root)), "dreams": dreams,
            "cards": len(pair.cards())}
