"""OpenAICompatLLM against a scripted ``/chat/completions`` server (httpx2.MockTransport)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from memfs.agent.llm.base import Tool
from memfs.agent.llm.openai_compat import OpenAICompatLLM

from memfs.errors import LLMError, NeedsKeyError
from tests._fakes_llm import Reply, ScriptedServer, SleepRecorder, json_reply, sse_reply

SYSTEM = ["# Pins\n- Allergic to peanuts", "", "Summary: talked about work."]
MESSAGES = [{"role": "user", "content": "Any snack ideas?"}]
TOOL = Tool(
    name="plan",
    description="Decide whether to search memory.",
    input_schema={"type": "object", "properties": {"need": {"type": "boolean"}}},
)


def chat(message: dict[str, Any], finish: str = "stop") -> Reply:
    return json_reply(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "llama3.1",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": 80,
                "completion_tokens": 9,
                "prompt_tokens_details": {"cached_tokens": 64},
            },
        }
    )


TEXT = chat({"role": "assistant", "content": "Apple slices?"})
BUSY = Reply(503, b'{"error": "model is loading"}', {"content-type": "application/json"})


def make_llm(server: ScriptedServer, **kwargs: Any) -> tuple[OpenAICompatLLM, SleepRecorder]:
    sleep = SleepRecorder()
    llm = OpenAICompatLLM(
        "http://localhost:11434/v1/", "llama3.1", http_client=server.client(), sleep=sleep, **kwargs
    )
    return llm, sleep


def test_request_shape_joins_system_blocks_and_maps_tools() -> None:
    server = ScriptedServer(TEXT)
    llm, _ = make_llm(server, api_key="sk-local")
    llm.complete(SYSTEM, MESSAGES, tools=[TOOL], tool_choice="plan", max_tokens=200)
    (request,) = server.requests
    assert str(request.url) == "http://localhost:11434/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-local"
    body = json.loads(request.content)
    assert body["model"] == "llama3.1" and body["max_tokens"] == 200
    assert body["messages"] == [
        {"role": "system", "content": f"{SYSTEM[0]}\n\n{SYSTEM[2]}"},
        *MESSAGES,
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "plan",
                "description": TOOL.description,
                "parameters": TOOL.input_schema,
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "plan"}}


def test_no_key_no_authorization_header() -> None:
    server = ScriptedServer(TEXT)
    llm, _ = make_llm(server)
    llm.complete(SYSTEM, MESSAGES)
    assert "authorization" not in server.requests[0].headers


def test_text_and_usage_are_parsed() -> None:
    llm, _ = make_llm(ScriptedServer(TEXT))
    completion = llm.complete(SYSTEM, MESSAGES)
    assert completion.text == "Apple slices?"
    assert completion.tool_calls == []
    assert completion.stop_reason == "stop"
    usage = completion.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (80, 9, 64)


def test_tool_call_arguments_string_is_parsed() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "plan", "arguments": '{"need": true}'},
    }
    reply = chat({"role": "assistant", "content": None, "tool_calls": [call]}, finish="tool_calls")
    llm, _ = make_llm(ScriptedServer(reply))
    completion = llm.complete(SYSTEM, MESSAGES, tools=[TOOL], tool_choice="plan")
    (tool_call,) = completion.tool_calls
    assert (tool_call.id, tool_call.name, tool_call.input) == ("call_1", "plan", {"need": True})
    assert completion.text == ""


def test_busy_server_is_retried_with_growing_backoff() -> None:
    server = ScriptedServer(BUSY, BUSY, TEXT)
    llm, sleep = make_llm(server)
    assert llm.complete(SYSTEM, MESSAGES).text == "Apple slices?"
    assert len(server.requests) == 3
    assert sleep.delays[1] > sleep.delays[0] > 0


def test_rate_limit_honours_retry_after() -> None:
    limited = Reply(429, b"{}", {"retry-after": "5"})
    llm, sleep = make_llm(ScriptedServer(limited, TEXT))
    llm.complete(SYSTEM, MESSAGES)
    assert sleep.delays == [5.0]


def test_persistent_failure_gives_up() -> None:
    server = ScriptedServer(BUSY)
    llm, _ = make_llm(server, max_retries=1)
    with pytest.raises(LLMError, match="after 2 attempts.*503.*model is loading"):
        llm.complete(SYSTEM, MESSAGES)
    assert len(server.requests) == 2


def test_client_error_is_not_retried() -> None:
    server = ScriptedServer(Reply(404, b'{"error": "model llama3.1 not found"}'))
    llm, sleep = make_llm(server)
    with pytest.raises(LLMError, match="404.*not found"):
        llm.complete(SYSTEM, MESSAGES)
    assert len(server.requests) == 1 and sleep.delays == []


def test_rejected_key_is_needs_key_error() -> None:
    llm, _ = make_llm(ScriptedServer(Reply(401, b"unauthorized")))
    with pytest.raises(NeedsKeyError, match="MEMFS_OPENAI_API_KEY"):
        llm.complete(SYSTEM, MESSAGES)


def test_unreachable_server_is_llm_error() -> None:
    import httpx2

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    client = httpx2.Client(transport=httpx2.MockTransport(refuse))
    llm = OpenAICompatLLM("http://localhost:9/v1", "m", http_client=client, sleep=SleepRecorder())
    with pytest.raises(LLMError, match="could not reach http://localhost:9/v1/chat/completions"):
        llm.complete(SYSTEM, MESSAGES)


BAD_ARGS = {"id": "c", "type": "function", "function": {"name": "plan", "arguments": "{need: yes"}}


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, b"<html>proxy error</html>"),
        json_reply([1, 2]),
        json_reply({"choices": []}),
        json_reply({"choices": [{"index": 0}]}),
        chat({"role": "assistant", "content": None, "tool_calls": [BAD_ARGS]}),
        chat({"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}),
    ],
    ids=["html", "json-list", "no-choices", "no-message", "args-not-json", "call-without-name"],
)
def test_malformed_responses_are_llm_errors(reply: Reply) -> None:
    llm, _ = make_llm(ScriptedServer(reply))
    with pytest.raises(LLMError):
        llm.complete(SYSTEM, MESSAGES)


def deltas(*texts: str) -> list[tuple[str | None, Any]]:
    return [(None, {"choices": [{"index": 0, "delta": {"content": t}}]}) for t in texts]


def test_stream_yields_sse_deltas_until_done() -> None:
    events = [
        (None, {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}),
        *deltas("Apple ", "slices?"),
        (None, "[DONE]"),
        *deltas("after done"),
    ]
    server = ScriptedServer(sse_reply(events))
    llm, _ = make_llm(server)
    assert list(llm.stream(SYSTEM, MESSAGES)) == ["Apple ", "slices?"]
    assert server.bodies()[0]["stream"] is True


def test_stream_retries_opening_then_streams() -> None:
    server = ScriptedServer(BUSY, sse_reply([*deltas("Hi"), (None, "[DONE]")]))
    llm, sleep = make_llm(server)
    assert "".join(llm.stream(SYSTEM, MESSAGES)) == "Hi"
    assert len(sleep.delays) == 1


def test_stream_with_garbage_event_is_llm_error() -> None:
    reply = sse_reply([*deltas("Half"), (None, "{not json")])
    llm, _ = make_llm(ScriptedServer(reply))
    received: list[str] = []
    with pytest.raises(LLMError, match="not JSON"):
        received.extend(llm.stream(SYSTEM, MESSAGES))
    assert received == ["Half"]
