"""The one interface every language-model provider implements, and the shapes it speaks.

It lives in the storage layer because ``MemoryStore(llm=...)`` accepts one and the
storage layer must not import the agent layer to name it. Chat, the retrieval decision
and dreaming only ever talk to an ``LLM``. Providers (Anthropic, an OpenAI-compatible
endpoint, offline rules) live in ``agent/llm/`` and are chosen by
``memfs.agent.llm.registry``. Tests use ``FakeLLM`` from ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]
"""``{"role": "user"|"assistant", "content": str}`` — the Anthropic messages shape."""


@dataclass(frozen=True)
class Tool:
    """A tool the model may call; ``input_schema`` is a JSON schema object."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass
class Completion:
    """What one model call returned: text, tool calls, and token usage."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``system`` is a list of text blocks; the first is the stable
    ``system/`` block that providers may cache."""

    name: str

    def complete(
        self,
        system: Sequence[str],
        messages: Sequence[Message],
        *,
        tools: Sequence[Tool] = (),
        tool_choice: str | None = None,
        max_tokens: int = 1024,
    ) -> Completion: ...

    def stream(self, system: Sequence[str], messages: Sequence[Message]) -> Iterator[str]: ...
