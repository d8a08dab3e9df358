"""The model-backed dream extractor: one forced tool call, then the same gate as everything else.

The prompt (``templates/dream_prompt.md``) carries the lessons from the seed articles; the
request lists the active cards with their ids (so the model can supersede, merge, expire and
close them) and the window with ``[session:turn ts]`` prefixes (so it can cite provenance and
resolve relative dates against each message's own timestamp). The answer is forced through
``EXTRACTION_TOOL`` under a 2,048-token cap — the tool has no reasoning field, so the budget
goes to ops — and validated by ``parse_ops``; dropped ops are logged, not fatal.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import replace

from memfs.agent.dream.ops import (
    EXTRACTION_TOOL,
    CardDraft,
    Extraction,
    MessageLike,
    extraction_from_json,
)
from memfs.agent.dream.summary import compose_summary
from memfs.agent.llm.base import LLM
from memfs.agent.llm.structured import complete_json

from memfs.cards import Card

log = logging.getLogger(__name__)


def dream_prompt() -> str:
    """The extraction system prompt, ``templates/dream_prompt.md``."""
    from memfs.assets import read_template

    return read_template("dream_prompt.md")


_ENVELOPE = {"type": "object", "required": ["story", "ops"],
             "properties": {"story": {"type": "string"},
                            "ops": {"type": "array", "items": {"type": "object"}}}}
"""Only the envelope is repaired as a whole; each op is checked by ``parse_ops``, which
drops a bad op with a log line instead of throwing away its good neighbours."""


def extract_with_llm(llm: LLM, window: Sequence[MessageLike], cards: Sequence[Card], summary: str,
                     now: dt.datetime, *, max_tokens: int = 2048) -> Extraction:
    """Ask ``llm`` what of ``window`` survives, in one forced tool call (repaired once when its
    input is invalid or was cut off at ``max_tokens``). Raises ``LLMError`` if no usable answer
    came back: the dream then fails before anything is applied and the window stays pending.
    The summary is composed here, not by the model: the model's story line goes into
    ``## Recent story`` and its standing cards into ``## Profile`` (``summary.compose_summary``)."""
    active = [c for c in cards if c.status == "active"]
    request = render_request(window, active, summary, now)
    data = complete_json(llm, [dream_prompt()], [{"role": "user", "content": request}],
                         EXTRACTION_TOOL, max_tokens=max_tokens, schema=_ENVELOPE)
    extraction, dropped = extraction_from_json(data, {c.id for c in active})
    for line in dropped:
        log.warning("dream extraction (%s): %s", llm.name, line)
    sessions = {m.session for m in window}
    ops = extraction.ops
    if len(sessions) == 1:
        only = next(iter(sessions))
        ops = [replace(op, session=only) if isinstance(op, CardDraft) and op.session is None else op
               for op in ops]
    text = compose_summary(summary, window, ops, active, now.date(), story=extraction.summary)
    return Extraction(summary=text, ops=ops)


def render_request(window: Sequence[MessageLike], active: Sequence[Card], summary: str,
                   now: dt.datetime) -> str:
    """The user turn: today, the summary, the active cards by id, and the numbered window."""
    card_lines = [_card_line(c) for c in active] or ["(none)"]
    lines = [f"[{m.session}:{m.turn} {_stamp(m.ts)}] {m.role}: {' '.join(m.content.split())}"
             for m in window] or ["(empty)"]
    today = now.astimezone(dt.UTC).date()
    return (f"Today: {today.isoformat()} ({today.strftime('%A')})\n"
            f"<summary>\n{summary.strip() or '(none)'}\n</summary>\n"
            "<active_cards>\n" + "\n".join(card_lines) + "\n</active_cards>\n"
            "<window>\n" + "\n".join(lines) + "\n</window>\n"
            "Call record_dream now.")


def _stamp(ts: dt.datetime) -> str:
    ts = ts.astimezone(dt.UTC)
    return ts.strftime("%Y-%m-%dT%H:%MZ %a")


def _card_line(card: Card) -> str:
    dates = "".join(f", {name} {value.isoformat()}" for name, value in
                    (("valid_from", card.valid_from), ("expires", card.expires)) if value)
    return f"- {card.id} [{card.type}{dates}] {' '.join(card.body.split())}"
