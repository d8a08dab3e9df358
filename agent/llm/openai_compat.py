"""Any server that speaks OpenAI's ``/chat/completions``: Ollama, llama.cpp, vLLM, LM Studio.

This is the path for people who keep their companion on their own machine. We speak the
wire format directly with ``httpx2`` (the HTTP client the ``anthropic`` SDK already brings)
instead of pulling in another SDK, which keeps the mapping visible:

- system blocks → one ``system`` message (local servers rarely cache; order is kept);
- ``Tool`` → ``{"type": "function", "function": {name, description, parameters}}``, and a
  forced ``tool_choice`` → ``{"type": "function", "function": {"name": ...}}``;
- ``tool_calls[].function.arguments`` is a JSON *string*; it is parsed back into a dict;
- streaming is Server-Sent Events: ``data: {...}`` lines, ended by ``data: [DONE]``.

Retries follow ``retry.py`` (429 and 5xx). Everything else that goes wrong is an ``LLMError``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

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
    import httpx2


class OpenAICompatLLM(RetryingProvider):
    """An ``LLM`` backed by an OpenAI-compatible HTTP endpoint such as ``http://localhost:11434/v1``."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        http_client: httpx2.Client | None = None,
        max_retries: int = 4,
        sleep: Sleep = time.sleep,
        stream_max_tokens: int = 1024,
        timeout: float = 300.0,
    ) -> None:
        import httpx2

        super().__init__(model, max_retries=max_retries, sleep=sleep,
                         stream_max_tokens=stream_max_tokens)
        self._httpx = httpx2
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = http_client or httpx2.Client(timeout=timeout)

    @property
    def what(self) -> str:
        return self.url

    def _build(self, system: Sequence[str], messages: Sequence[Message], tools: Sequence[Tool],
               tool_choice: str | None, max_tokens: int) -> dict[str, Any]:
        return build_request(self.model, system, messages, tools, tool_choice, max_tokens)

    def _complete_once(self, request: dict[str, Any]) -> Completion:
        return parse_response(_json_body(self._send(request, stream=False)))

    def _open_stream(self, request: dict[str, Any]) -> httpx2.Response:
        return self._send({**request, "stream": True}, stream=True)

    def _deltas(self, handle: httpx2.Response) -> Iterator[str]:
        return sse_text_deltas(self._lines(handle))

    def _lines(self, response: httpx2.Response) -> Iterator[str]:
        try:
            yield from response.iter_lines()
        except self._httpx.HTTPError as exc:
            raise LLMError(f"{self.url}: the stream broke off: {exc}") from exc

    def _send(self, body: dict[str, Any], *, stream: bool) -> httpx2.Response:
        """POST once; a non-2xx status becomes TransientLLMError or LLMError."""
        httpx = self._httpx
        try:
            request = self._client.build_request("POST", self.url, json=body, headers=self._headers)
            response = self._client.send(request, stream=stream)
        except httpx.TimeoutException as exc:
            raise TransientLLMError(f"{self.url} timed out: {exc}") from exc
        except httpx.HTTPError as exc:
            raise LLMError(f"could not reach {self.url}: {exc}") from exc
        if response.is_success:
            return response
        try:
            detail = response.read().decode("utf-8", "replace")[:300]
        finally:
            response.close()
        message = f"{self.url} answered {response.status_code}: {detail}"
        if response.status_code in (401, 403):
            raise NeedsKeyError(f"{message} (set MEMFS_OPENAI_API_KEY if the server needs a key)")
        if is_retryable_status(response.status_code):
            hint = retry_after_seconds(response.headers)
            raise TransientLLMError(message, status=response.status_code, retry_after=hint)
        raise LLMError(message)


def build_request(
    model: str,
    system: Sequence[str],
    messages: Sequence[Message],
    tools: Sequence[Tool],
    tool_choice: str | None,
    max_tokens: int,
) -> dict[str, Any]:
    """The JSON body of a ``/chat/completions`` request."""
    wire: list[dict[str, Any]] = []
    system_text = "\n\n".join(block for block in system if block.strip())
    if system_text:
        wire.append({"role": "system", "content": system_text})
    wire += [{"role": m["role"], "content": _flatten(m.get("content"))} for m in messages]
    body: dict[str, Any] = {"model": model, "messages": wire, "max_tokens": max_tokens}
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in tools
        ]
    if tool_choice is not None:
        if tool_choice not in {t.name for t in tools}:
            raise ValueError(f"tool_choice {tool_choice!r} names none of the tools given")
        body["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
    return body


def _flatten(content: object) -> str:
    """Anthropic-style content block lists become plain text; strings pass through."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return "" if content is None else str(content)


def _json_body(response: httpx2.Response) -> dict[str, Any]:
    try:
        data = json.loads(response.content)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LLMError(f"{response.request.url} returned a body that is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise LLMError(f"{response.request.url} returned JSON that is not an object")
    return data


def parse_response(data: dict[str, Any]) -> Completion:
    """Turn a chat-completion JSON object into a ``Completion``."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LLMError("the chat completion has no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise LLMError("the chat completion's first choice has no message")
    content = message.get("content")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise LLMError("the chat completion's tool_calls is not a list")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Completion(
        text=content if isinstance(content, str) else "",
        tool_calls=[_tool_call(raw) for raw in raw_calls],
        usage=_usage(usage or {}),
        stop_reason=choices[0].get("finish_reason"),
    )


def _tool_call(raw: object) -> ToolCall:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise LLMError(f"a tool call without a function name: {str(raw)[:200]}")
    name = function["name"]
    arguments = function.get("arguments")
    try:
        payload = json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError as exc:
        raise LLMError(f"tool call {name!r}: arguments are not valid JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise LLMError(f"tool call {name!r}: arguments are not a JSON object")
    call_id = raw.get("id") if isinstance(raw, dict) else None
    return ToolCall(id=str(call_id or ""), name=name, input=payload)


def _usage(usage: dict[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None

    def count(value: object) -> int:
        return value if isinstance(value, int) else 0

    return Usage(
        input_tokens=count(usage.get("prompt_tokens")),
        output_tokens=count(usage.get("completion_tokens")),
        cache_read_input_tokens=count(cached),
    )


def sse_text_deltas(lines: Iterator[str]) -> Iterator[str]:
    """Text from ``data: {...}`` lines until ``data: [DONE]``; comments and blanks are skipped."""
    for line in lines:
        if not line.startswith("data:"):
            continue
        payload = line[len("data:") :].strip()
        if payload == "[DONE]":
            return
        try:
            event = json.loads(payload)
        except json.JSONDecodeError as exc:
            raise LLMError(f"a stream event is not JSON: {payload[:200]!r}") from exc
        if isinstance(event, dict) and "error" in event:
            raise LLMError(f"the server reported an error mid-stream: {event['error']}")
        choices = event.get("choices") if isinstance(event, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            continue
        delta = choices[0].get("delta")
        text = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(text, str) and text:
            yield text
