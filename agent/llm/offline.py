"""The provider used when no model is configured: deterministic, no network, honest.

It does not pretend to converse. Its reply says it is offline and shows what memory was
in front of it (pins, summary, retrieved cards), which is what ``memfs chat`` and the demo
need to show that memory works without a model. It never returns tool calls: callers that
need structure (the retrieval plan, dreaming) check ``llm.name == "offline"`` and use their
rule-based paths instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from memfs.agent.llm.base import Completion, Message, Tool, Usage

from memfs.history import OFFLINE_PLACEHOLDER

PREFIX = OFFLINE_PLACEHOLDER
"""Shared with the index, which never indexes these replies as memory."""
MAX_ITEMS = 5
MAX_ITEM_CHARS = 120

_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<text>.+)$")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


class OfflineLLM:
    """An ``LLM`` that answers from the context it was given, without a model."""

    name = "offline"

    def complete(
        self,
        system: Sequence[str],
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        tool_choice: str | None = None,
        max_tokens: int = 1024,
    ) -> Completion:
        """The offline reply; ``tools`` are ignored (see the module docstring)."""
        text = offline_reply(system)
        return Completion(
            text=text, usage=Usage(output_tokens=len(text.split())), stop_reason="end_turn"
        )

    def stream(self, system: Sequence[str], messages: Sequence[Message]) -> Iterator[str]:
        """The same text as ``complete``, word by word, so streaming UIs behave as usual."""
        yield from re.findall(r"\S+\s*", offline_reply(system))


def offline_reply(system: Sequence[str]) -> str:
    """``PREFIX`` plus up to ``MAX_ITEMS`` remembered items found in the system blocks."""
    items = remembered_items(system)
    if not items:
        return f"{PREFIX} No memories are in context for this turn."
    return f"{PREFIX} I remember: " + "; ".join(items) + "."


def remembered_items(system: Sequence[str]) -> list[str]:
    """List items first (pins, cards), then other prose lines of later blocks (summary).

    The persona (prose in block 0) is not memory about the user, so block 0 contributes
    only its list items.
    """
    bullets: list[str] = []
    prose: list[str] = []
    for index, block in enumerate(system):
        for line in _COMMENT.sub("", block).splitlines():
            stripped = line.strip()
            if not stripped or stripped.startswith(("#", "---", "```")):
                continue
            match = _BULLET.match(stripped)
            if match:
                bullets.append(match.group("text").strip())
            elif index > 0:
                prose.append(stripped)
    unique = list(dict.fromkeys(item.rstrip(".") for item in bullets + prose))
    return [_shorten(item) for item in unique[:MAX_ITEMS]]


def _shorten(text: str) -> str:
    if len(text) <= MAX_ITEM_CHARS:
        return text
    return text[: MAX_ITEM_CHARS - 1].rstrip() + "…"
