"""Claude through the official ``anthropic`` SDK (the Messages API).

Three things matter here beyond "send the request":

- Prompt caching. System block 0 is the ``system/`` folder (persona and pins); it is the
  same on every turn, so it carries ``cache_control: ephemeral`` and later turns read it
  from the cache. The other blocks (summary, retrieved memory) change per turn and do not.
- Our retry policy, not the SDK's (``max_retries=0`` on the client; see ``retry.py``).
- Translation at the edge: every SDK exception, and every body we cannot read, becomes an
  ``LLMError`` (or ``NeedsKeyError`` for a missing or rejected key) raised ``from`` it.

The SDK is imported inside the constructor so that ``import memfs.agent.llm`` stays cheap.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memfs.agent.llm.base import Completion, Message, Tool, ToolCall, Usage
from memfs.agent.llm.provider import RetryingProvider
from memfs.agent.llm.retry import (
    Sleep,
    TransientLLMError,
    is_retryable_status,
    retry_after_seconds,
)

from memfs.errors import LLMError, NeedsKeyError

if TYPE_CHECKING:
    import anthropic

DEFAULT_MODEL = "claude-sonnet-4-6"
"""Chat and retrieval decisions."""
DREAM_MODEL = "claude-haiku-4-5"
"""A cheaper model that is good enough for background extraction."""

KEY_HINT = "set ANTHROPIC_API_KEY to use the Anthropic provider (or MEMFS_LLM_PROVIDER=offline)"

T = TypeVar("T")


class AnthropicLLM(RetryingProvider):
    """An ``LLM`` backed by Claude. Pass ``client`` to inject a configured SDK client."""

    name = "anthropic"

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        api_key: str | None = None,
        client: anthropic.Anthropic | None = None,
        max_retries: int = 4,
        sleep: Sleep = time.sleep,
        stream_max_tokens: int = 1024,
        timeout: float = 120.0,
        env: Mapping[str, str] = os.environ,
    ) -> None:
        import anthropic

        super().__init__(model, max_retries=max_retries, sleep=sleep,
                         stream_max_tokens=stream_max_tokens)
        self._sdk = anthropic
        if client is None:
            key = api_key or env.get("ANTHROPIC_API_KEY")
            if not key:
                raise NeedsKeyError(KEY_HINT)
            client = anthropic.Anthropic(api_key=key, max_retries=0, timeout=timeout)
        self._client = client

    @property
    def what(self) -> str:
        return "Anthropic"

    def _build(self, system: Sequence[str], messages: Sequence[Message], tools: Sequence[Tool],
               tool_choice: str | None, max_tokens: int) -> dict[str, Any]:
        return build_request(self.model, system, messages, tools, tool_choice, max_tokens)

    def _complete_once(self, request: dict[str, Any]) -> Completion:
        return parse_message(self._guarded(lambda: self._client.messages.create(**request)))

    def _open_stream(self, request: dict[str, Any]) -> Any:
        return self._guarded(lambda: self._client.messages.create(stream=True, **request))

    def _deltas(self, handle: Any) -> Iterator[str]:
        return self._text_deltas(iter(handle))

    def _text_deltas(self, events: Iterator[Any]) -> Iterator[str]:
        while True:
            event = self._guarded(lambda: next(events, None))
            if event is None:
                return
            if getattr(event, "type", None) != "content_block_delta":
                continue
            delta = getattr(event, "delta", None)
            if getattr(delta, "type", None) == "text_delta":
                text = getattr(delta, "text", "")
                if isinstance(text, str) and text:
                    yield text

    def _guarded(self, call: Callable[[], T]) -> T:
        """Run one SDK call, translating its exceptions into ours."""
        sdk = self._sdk
        try:
            return call()
        except sdk.AuthenticationError as exc:
            raise NeedsKeyError(f"Anthropic rejected the API key (401); {KEY_HINT}") from exc
        except sdk.APIStatusError as exc:
            detail = (
                f"Anthropic API error {exc.status_code}: {_error_detail(exc.body, exc.message)}"
            )
            if is_retryable_status(exc.status_code):
                hint = retry_after_seconds(exc.response.headers)
                raise TransientLLMError(detail, status=exc.status_code, retry_after=hint) from exc
            raise LLMError(detail) from exc
        except sdk.APITimeoutError as exc:
            raise TransientLLMError(f"Anthropic API timed out: {exc}") from exc
        except sdk.APIConnectionError as exc:
            raise LLMError(f"could not reach the Anthropic API: {exc}") from exc
        except sdk.APIError as exc:
            raise LLMError(f"Anthropic API error: {exc.message}") from exc
        except json.JSONDecodeError as exc:
            raise LLMError(f"Anthropic returned a body that is not JSON: {exc}") from exc


def build_request(
    model: str,
    system: Sequence[str],
    messages: Sequence[Message],
    tools: Sequence[Tool],
    tool_choice: str | None,
    max_tokens: int,
) -> dict[str, Any]:
    """The keyword arguments of ``messages.create``; block 0 of ``system`` is cached."""
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": [dict(m) for m in messages],
    }
    blocks = [_system_block(text, cached=index == 0) for index, text in enumerate(system)]
    # The API refuses empty text blocks; a pair without pins still has a persona.
    blocks = [block for block in blocks if block["text"].strip()]
    if blocks:
        params["system"] = blocks
    if tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ]
    if tool_choice is not None:
        if tool_choice not in {t.name for t in tools}:
            raise ValueError(f"tool_choice {tool_choice!r} names none of the tools given")
        params["tool_choice"] = {"type": "tool", "name": tool_choice}
    return params


def _system_block(text: str, *, cached: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if cached:
        block["cache_control"] = {"type": "ephemeral"}
    return block


def parse_message(message: object) -> Completion:
    """Turn an SDK ``Message`` into a ``Completion``; anything malformed is an LLMError."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        shown = repr(message)[:200]
        raise LLMError(f"Anthropic returned a response without a content list: {shown}")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(str(getattr(block, "text", "")))
        elif kind == "tool_use":
            calls.append(_tool_call(block))
    return Completion(
        text="".join(texts),
        tool_calls=calls,
        usage=_usage(getattr(message, "usage", None)),
        stop_reason=getattr(message, "stop_reason", None),
    )


def _tool_call(block: object) -> ToolCall:
    name = getattr(block, "name", None)
    payload = getattr(block, "input", None)
    if not isinstance(name, str) or not name:
        raise LLMError("Anthropic returned a tool_use block without a tool name")
    if not isinstance(payload, dict):
        kind = type(payload).__name__
        raise LLMError(
            f"Anthropic returned tool_use {name!r} whose input is a {kind}, not an object"
        )
    return ToolCall(id=str(getattr(block, "id", "")), name=name, input=dict(payload))


def _usage(usage: object) -> Usage:
    def count(field: str) -> int:
        value = getattr(usage, field, None)
        return value if isinstance(value, int) else 0

    return Usage(
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        cache_read_input_tokens=count("cache_read_input_tokens"),
        cache_creation_input_tokens=count("cache_creation_input_tokens"),
    )


def _error_detail(body: object, fallback: str) -> str:
    """The API's own ``error.message`` when the body has one."""
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return fallback
