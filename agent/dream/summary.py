"""Rewriting the rolling summary after a dream, without a model.

The summary is extractive: the previous lines, a few lines for this window (the new cards'
bodies, or a note that it was small talk), then every open plan. Open plans are kept even
when the summary is over its length limit, because a plan is exactly what a summary rewrite
tends to drop; small-talk notes go before any fact does, and a fact whose card this dream
superseded leaves the summary with it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from memfs.agent.dream.ops import MergeOp, MessageLike, Op, SupersedeOp, WriteOp, op_targets

from memfs.cards import Card

SUMMARY_MAX_CHARS = 1200
_SMALL_TALK = ": small talk (\""
"""Marks a line that only says a window was small talk: the first to go when over the limit."""


def rewrite_summary(previous: str, window: Sequence[MessageLike], ops: Sequence[Op],
                    active: Sequence[Card], today: dt.date, limit: int = SUMMARY_MAX_CHARS) -> str:
    """Previous summary + a few extractive lines for this window, then every open plan.

    Small-talk lines go first when over ``limit``, then the oldest; open plans are never dropped (they are what a
    summary rewrite must not lose), so the result exceeds ``limit`` only if they alone do.
    """
    history = _without_replaced(_history_lines(previous), ops, active)
    bodies = [op.body for op in ops if isinstance(op, (WriteOp, SupersedeOp, MergeOp))]
    if window:
        day = window[0].ts.date().isoformat()
        if bodies:
            history += [f"- {day}: {_clip(b)}" for b in bodies[:4]]
        elif (said := next((m.content for m in window if m.role == "user"), "")):
            history.append(f"- {day}{_SMALL_TALK}{_clip(said, 80)}\")")
    plans = _open_plans(ops, active, today)
    tail = ["Open plans:", *plans] if plans else []
    while history and len("\n".join(history + tail)) > limit:
        history.pop(next((i for i, line in enumerate(history) if _SMALL_TALK in line), 0))
    return "\n".join(history + tail)



def _clip(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _without_replaced(lines: list[str], ops: Sequence[Op], active: Sequence[Card]) -> list[str]:
    """Drop the lines an earlier dream wrote from a card this dream supersedes or merges: the
    summary must not keep asserting "lives in Leeds" once the card saying so is stale."""
    replaced = {t for op in ops if isinstance(op, (SupersedeOp, MergeOp)) for t in op_targets(op)}
    old = {_clip(c.body) for c in active if c.id in replaced}
    return [line for line in lines if line.split(": ", 1)[-1] not in old]


def _history_lines(previous: str) -> list[str]:
    lines, in_plans = [], False
    for line in previous.splitlines():
        if line.strip() == "Open plans:":
            in_plans = True
            continue
        if in_plans and line.startswith("- "):
            continue
        in_plans = False
        if line.strip():
            lines.append(line.rstrip())
    return lines


def _open_plans(ops: Sequence[Op], active: Sequence[Card], today: dt.date) -> list[str]:
    gone = {t for op in ops for t in op_targets(op)}
    plans = [(c.body, c.expires) for c in active
             if c.id not in gone and c.type == "plan" and (c.expires is None or c.expires >= today)]
    plans += [(op.body, op.expires) for op in ops
              if isinstance(op, (WriteOp, SupersedeOp)) and op.type == "plan"
              and (op.expires is None or op.expires >= today)]
    return [f"- {_clip(body)}" + (f" (until {exp.isoformat()})" if exp else "") for body, exp in plans]
