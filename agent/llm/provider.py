"""The skeleton both HTTP providers share: build a request, send it under our retry policy,
parse it; stream by retrying only the opening of the stream.

A provider subclass supplies the four provider-specific steps (``_build``, ``_complete_once``,
``_open_stream``, ``_deltas``) and nothing else, so the retry and streaming rules are
written once: an Anthropic 529 and a vLLM 503 are retried the same way, and a stream that
breaks after text was shown is an error rather than a repeat.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from memfs.agent.llm.base import Completion, Message, Tool
from memfs.agent.llm.retry import RetryPolicy, Sleep, call_with_retries


class RetryingProvider(ABC):
    """An ``LLM`` over an HTTP API, with ``max_retries`` retries of transient failures."""

    name = "provider"

    def __init__(self, model: str, *, max_retries: int = 4, sleep: Sleep = time.sleep,
                 stream_max_tokens: int = 1024) -> None:
        self.model = model
        self.policy = RetryPolicy(attempts=max_retries + 1)
        self._sleep = sleep
        self.stream_max_tokens = stream_max_tokens

    @property
    def what(self) -> str:
        """How retry messages name the endpoint."""
        return self.name

    def complete(self, system: Sequence[str], messages: Sequence[Message], *,
                 tools: Sequence[Tool] = (), tool_choice: str | None = None,
                 max_tokens: int = 1024) -> Completion:
        """One call; tool calls come back parsed into ``ToolCall``."""
        request = self._build(system, messages, tools, tool_choice, max_tokens)
        return call_with_retries(lambda: self._complete_once(request), policy=self.policy,
                                 sleep=self._sleep, what=self.what)

    def stream(self, system: Sequence[str], messages: Sequence[Message]) -> Iterator[str]:
        """Yield text deltas as they arrive. Only opening the stream is retried: once text
        has been shown, retrying would repeat it, so a failure mid-stream is an LLMError."""
        request = self._build(system, messages, (), None, self.stream_max_tokens)
        handle = call_with_retries(lambda: self._open_stream(request), policy=self.policy,
                                   sleep=self._sleep, what=f"{self.what} stream")
        try:
            yield from self._deltas(handle)
        finally:
            handle.close()

    @abstractmethod
    def _build(self, system: Sequence[str], messages: Sequence[Message], tools: Sequence[Tool],
               tool_choice: str | None, max_tokens: int) -> dict[str, Any]:
        """The provider's request body."""

    @abstractmethod
    def _complete_once(self, request: dict[str, Any]) -> Completion:
        """Send once; raise ``TransientLLMError`` for what a retry may fix."""

    @abstractmethod
    def _open_stream(self, request: dict[str, Any]) -> Any:
        """Open a streaming response (anything with ``close()``)."""

    @abstractmethod
    def _deltas(self, handle: Any) -> Iterator[str]:
        """The text deltas of an open stream."""
