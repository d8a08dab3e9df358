"""``memfs eval constraints --dream``: does the constraint reach the turn by the product's path?

The memory-only constraint eval (``constraints.py``) asks whether the constraint search finds
the one message, among all the user's messages, that states the limit. A real pair has more
than its messages: every compaction is dreamed, and the dream writes cards and the summary,
whose ``## Profile`` is in every turn's context. This mode replays the same scenario the way
the product sees it: each session through ``add_messages`` (compaction events where the window
outgrows its budget), each event dreamed with the pair's extractor (offline: the learned
extractor behind the strict rules) at the scenario's clock, and the window compacted away and
dreamed before the probes (``planted.flush_window``), so that nothing reaches the context by
the recent window. A probe passes when its constraint reaches the turn's context by any route:

- ``summary``: a line of ``summary.md`` made from it (from a card written from the message, or
  the message's own words in a story line);
- ``card``: a retrieved card written from the message (its ``source`` names the turn);
- ``message``: the retrieved message itself.

Next to the pass rate it reports what dreaming wrote: cards by type, the profile's lines, how
many of those come from a probe's constraint, how many of the others read as a limit (the
write-time limit score, ``memfs.salience.message_limit``, at the constraint search's candidate
bar): false limits a suggestion would now be bent by; and the summary's size.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from memfs.agent.evals.constraints import (
    START,
    ConstraintReport,
    Probe,
    ProbeRow,
    bank_of,
    build_history,
    groups_of,
    live_window,
    load_probes,
)
from memfs.agent.evals.planted import dream_at, flush_window
from memfs.agent.evals.report import eval_home, load_embedder

from memfs.history import format_ts

if TYPE_CHECKING:
    from memfs.cards import Card
    from memfs.embed import Embedder
    from memfs.store import MemoryPair

PROBE_DAY = START + dt.timedelta(days=60)
"""When the requests are asked (as in the memory-only eval)."""


@dataclass
class DreamStats:
    """What the dreams of every pair of one run wrote, summed over the pairs."""

    pairs: int = 0
    dreams: int = 0
    cards: dict[str, int] = field(default_factory=dict)
    """Active cards by type."""
    profile_lines: int = 0
    from_constraints: int = 0
    """Profile lines made from a probe's constraint."""
    other_lines: list[tuple[str, float]] = field(default_factory=list)
    """Every profile line from no probe's constraint, with its limit score (to recount at
    another bar)."""
    summary_chars: list[int] = field(default_factory=list)
    bar: float = 0.0
    """The limit score at or above which such a line counts as a false limit."""

    @property
    def false_limit_lines(self) -> list[str]:
        """Profile lines from no probe's constraint that read as a limit."""
        return [line for line, score in self.other_lines if score >= self.bar]

    def to_dict(self) -> dict[str, Any]:
        chars = self.summary_chars or [0]
        false = self.false_limit_lines
        return {"pairs": self.pairs, "dreams": self.dreams, "cards": dict(sorted(self.cards.items())),
                "cards_total": sum(self.cards.values()), "profile_lines": self.profile_lines,
                "profile_from_constraints": self.from_constraints, "false_limits": len(false),
                "false_limit_lines": false,
                "other_lines": [[line, round(score, 3)] for line, score in self.other_lines],
                "summary_chars_max": max(chars), "summary_chars_mean": round(sum(chars) / len(chars))}

    def line(self) -> str:
        d = self.to_dict()
        return (f"dreams {d['dreams']}, cards {d['cards_total']} {d['cards']}, profile lines "
                f"{d['profile_lines']} ({d['profile_from_constraints']} from constraints, "
                f"{d['false_limits']} false limits), summary chars max {d['summary_chars_max']} "
                f"mean {d['summary_chars_mean']}")


def run_dreamed(split: str = "dev", n_messages: int = 1600, *, together: int = 5,
                home: Path | None = None, embedder: Embedder | None = None) -> ConstraintReport:
    """Replay each pair through compaction and dreams, then ask every request."""
    from memfs.agent.services import wired_store

    probes = load_probes(split)
    bank = bank_of(split)
    report = ConstraintReport(split, n_messages, together=together)
    stats = report.dreamed = DreamStats(bar=limit_bar())
    model = load_embedder(embedder, report.timings)
    with eval_home(home) as folder:
        store = wired_store(folder, embedder=model)
        for n, group in enumerate(groups_of(probes, together)):
            pair = store.pair("eval", f"group-{n + 1}")
            with report.timings.phase("history+dreams"):
                said = replay(pair, group, n_messages, bank=bank)
            with report.timings.phase("probes"):
                report.rows += [probe_row(pair, p, said[p.id]) for p in group]
            tally(stats, pair, said, model)
    return report


def replay(pair: MemoryPair, probes: list[Probe], n_messages: int, *,
           bank: dict[str, Any] | None = None) -> dict[str, str]:
    """The scenario through ``add_messages``, each session's compactions dreamed at its last
    message's time; then the window compacted and dreamed. The message id of each constraint."""
    return replay_history(pair, build_history(probes, n_messages, bank=bank),
                          {p.id: p.constraint for p in probes})


def replay_history(pair: MemoryPair, history: list[tuple[str, list[dict[str, Any]]]],
                   lines: dict[str, str], end: dt.datetime = PROBE_DAY - dt.timedelta(days=1)) -> dict[str, str]:
    """``history`` (``constraints.history_with``) replayed as ``replay`` does; the message id
    (``<session>:<turn>``) of each user line in ``lines`` (id -> text)."""
    from memfs.turn import TurnOptions, add_messages, end_session

    said: dict[str, str] = {}
    for sid, msgs in history:
        add_messages(pair, [{"role": m["role"], "content": m["content"], "ts": format_ts(m["ts"]),
                             "session": sid} for m in msgs], options=TurnOptions(dream="none"))
        end_session(pair)
        said.update({key: f"{sid}:{turn}" for turn, m in enumerate(msgs)
                     for key, text in lines.items() if m["role"] == "user" and m["content"] == text})
        dream_at(pair, msgs[-1]["ts"])
    flush_window(pair, end)
    return said


def cards_from(cards: Sequence[Card], message_id: str) -> list[Card]:
    """The cards (any status) whose provenance names the message ``<session>:<turn>``."""
    session, _, turn = message_id.rpartition(":")
    return [c for c in cards if c.source is not None and c.source.session == session
            and int(turn) in c.source.turns]


def line_from(line: str, bodies: Sequence[str], said: str) -> bool:
    """Was summary ``line`` made from a card with one of ``bodies``, or from the message
    ``said`` itself (a story line quoting it)? A line may be condensed since, or dated."""
    from memfs.agent.dream.summary import from_card

    text = line.split(": ", 1)[1] if line[:4].isdigit() and ": " in line else line
    return any(from_card(text, body) for body in bodies) or said[:40].lower() in line.lower()


def probe_row(pair: MemoryPair, probe: Probe, message_id: str) -> ProbeRow:
    """The request's context (a new session: the window empty, or the probe's ``before``)
    and the routes by which the constraint reached it."""
    from memfs.agent.dream.summary import parse_summary

    from memfs.context import build_context

    ctx = build_context(pair, probe.request, now=PROBE_DAY, window=live_window(probe, PROBE_DAY))
    made = cards_from(pair.cards(), message_id)
    bodies = [c.body for c in made]
    summary = parse_summary(pair.summary(ctx.head))
    routes = []
    if any(line_from(line, bodies, probe.constraint) for line in [*summary.profile, *summary.story]):
        routes.append("summary")
    if {c.id for c in made} & {h.id for h in ctx.hits if h.kind == "card"}:
        routes.append("card")
    if message_id in {h.id for h in ctx.hits}:
        routes.append("message")
    return ProbeRow(probe, message_id, bool(routes), None,
                    tuple(getattr(ctx.plan, "constraint_domains", ())), ctx.plan.need_retrieval,
                    routes=tuple(routes))


def tally(stats: DreamStats, pair: MemoryPair, said: dict[str, str], embedder: Embedder) -> None:
    """Add one pair's cards, profile and summary size to ``stats``."""
    from memfs.agent.dream.summary import parse_summary

    cards = pair.cards()
    stats.pairs += 1
    stats.dreams += sum(e.is_dream for e in pair.log(n=10_000))
    for card in cards:
        if card.status == "active":
            stats.cards[card.type] = stats.cards.get(card.type, 0) + 1
    text = pair.summary()
    stats.summary_chars.append(len(text))
    profile = parse_summary(text).profile
    stats.profile_lines += len(profile)
    constraint_bodies = [c.body for m in said.values() for c in cards_from(cards, m)]
    others = [line for line in profile if not line_from(line, constraint_bodies, "\0")]
    stats.from_constraints += len(profile) - len(others)
    limits = limit_scores(others, embedder)
    stats.other_lines += [(line, float(s)) for line, s in zip(others, limits)]


def limit_bar() -> float:
    """The constraint search's candidate bar on the write-time limit score."""
    from memfs.constraints import ConstraintWeights

    return ConstraintWeights().bar


def limit_scores(lines: Sequence[str], embedder: Embedder) -> np.ndarray:
    """The write-time limit score of each line, scored as a card is in the index."""
    from memfs.salience import message_limit, message_salience

    if not lines:
        return np.zeros(0, dtype=np.float32)
    vectors = np.asarray(embedder.embed(list(lines)), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    speakers = ["card"] * len(lines)
    salience = message_salience(lines, speakers, vectors, embedder)
    return message_limit(speakers, vectors, salience, embedder)
