"""AnthropicLLM against the real ``anthropic`` SDK, with only the network replaced."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from memfs.agent.llm.anthropic_provider import AnthropicLLM
from memfs.agent.llm.base import Tool

from memfs.errors import LLMError, NeedsKeyError
from tests._fakes_llm import Reply, ScriptedServer, SleepRecorder, json_reply, sse_reply

SYSTEM = ["# Persona\nMira.\n\n# Pins\n- Allergic to peanuts", "Summary: talked about work."]
MESSAGES = [{"role": "user", "content": "Any snack ideas?"}]
TOOL = Tool(
    name="record_ops",
    description="Record memory operations.",
    input_schema={"type": "object", "properties": {"ops": {"type": "array"}}, "required": ["ops"]},
)


def message(content: Any, **usage: int) -> dict[str, Any]:
    counts = {"input_tokens": 120, "output_tokens": 14, **usage}
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": counts,
    }


TEXT_REPLY = json_reply(message([{"type": "text", "text": "How about apple slices?"}]))
OVERLOADED = json_reply(
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, status=529
)


def make_llm(server: ScriptedServer, *, retries: int = 3) -> tuple[AnthropicLLM, SleepRecorder]:
    client = anthropic.Anthropic(api_key="test", http_client=server.client(), max_retries=0)
    sleep = SleepRecorder()
    return AnthropicLLM(client=client, max_retries=retries, sleep=sleep), sleep


def test_request_caches_only_the_first_system_block() -> None:
    server = ScriptedServer(TEXT_REPLY)
    llm, _ = make_llm(server)
    llm.complete(SYSTEM, MESSAGES, max_tokens=300)
    (body,) = server.bodies()
    assert body["model"] == "claude-sonnet-4-6"
    assert body["max_tokens"] == 300
    assert body["messages"] == MESSAGES
    assert body["system"] == [
        {"type": "text", "text": SYSTEM[0], "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": SYSTEM[1]},
    ]
    assert "tools" not in body and "tool_choice" not in body


def test_empty_system_blocks_are_not_sent() -> None:
    server = ScriptedServer(TEXT_REPLY)
    llm, _ = make_llm(server)
    llm.complete([SYSTEM[0], "  ", "Card: likes tea"], MESSAGES)
    texts = [block["text"] for block in server.bodies()[0]["system"]]
    assert texts == [SYSTEM[0], "Card: likes tea"]


def test_text_reply_and_usage_with_cache_counts() -> None:
    reply = message(
        [{"type": "text", "text": "How about "}, {"type": "text", "text": "apple slices?"}],
        cache_read_input_tokens=900,
        cache_creation_input_tokens=0,
    )
    llm, _ = make_llm(ScriptedServer(json_reply(reply)))
    completion = llm.complete(SYSTEM, MESSAGES)
    assert completion.text == "How about apple slices?"
    assert completion.tool_calls == []
    assert completion.stop_reason == "end_turn"
    assert completion.usage.input_tokens == 120
    assert completion.usage.output_tokens == 14
    assert completion.usage.cache_read_input_tokens == 900
    assert completion.usage.cache_creation_input_tokens == 0


def test_forced_tool_call_request_and_parsing() -> None:
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "record_ops", "input": {"ops": []}}
    reply = message([tool_use], cache_creation_input_tokens=850)
    reply["stop_reason"] = "tool_use"
    server = ScriptedServer(json_reply(reply))
    llm, _ = make_llm(server)
    completion = llm.complete(SYSTEM, MESSAGES, tools=[TOOL], tool_choice="record_ops")
    body = server.bodies()[0]
    assert body["tools"] == [
        {"name": TOOL.name, "description": TOOL.description, "input_schema": TOOL.input_schema}
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "record_ops"}
    (call,) = completion.tool_calls
    assert (call.id, call.name, call.input) == ("toolu_1", "record_ops", {"ops": []})
    assert completion.stop_reason == "tool_use"
    assert completion.usage.cache_creation_input_tokens == 850


def test_overloaded_then_ok_is_retried_with_growing_backoff() -> None:
    server = ScriptedServer(OVERLOADED, OVERLOADED, TEXT_REPLY)
    llm, sleep = make_llm(server)
    assert llm.complete(SYSTEM, MESSAGES).text == "How about apple slices?"
    assert len(server.requests) == 3
    assert len(sleep.delays) == 2
    assert sleep.delays[1] > sleep.delays[0] > 0


def test_rate_limit_honours_retry_after() -> None:
    limited = json_reply(
        {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        status=429,
        headers={"retry-after": "7"},
    )
    server = ScriptedServer(limited, TEXT_REPLY)
    llm, sleep = make_llm(server)
    llm.complete(SYSTEM, MESSAGES)
    assert len(server.requests) == 2
    assert sleep.delays == [7.0]


def test_persistent_overload_gives_up_after_all_attempts() -> None:
    server = ScriptedServer(OVERLOADED)
    llm, sleep = make_llm(server, retries=2)
    with pytest.raises(LLMError, match="after 3 attempts.*529.*Overloaded"):
        llm.complete(SYSTEM, MESSAGES)
    assert len(server.requests) == 3
    assert len(sleep.delays) == 2


def test_bad_request_is_not_retried() -> None:
    bad = json_reply(
        {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: bad"}},
        status=400,
    )
    server = ScriptedServer(bad)
    llm, sleep = make_llm(server)
    with pytest.raises(LLMError, match="400: max_tokens: bad"):
        llm.complete(SYSTEM, MESSAGES)
    assert len(server.requests) == 1 and sleep.delays == []


def test_rejected_key_names_the_variable() -> None:
    denied = json_reply(
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        },
        status=401,
    )
    llm, _ = make_llm(ScriptedServer(denied))
    with pytest.raises(NeedsKeyError, match="ANTHROPIC_API_KEY"):
        llm.complete(SYSTEM, MESSAGES)


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(NeedsKeyError, match="ANTHROPIC_API_KEY"):
        AnthropicLLM(env={})


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, b"<html>gateway hiccup</html>", {"content-type": "application/json"}),
        Reply(200, b"<html>gateway hiccup</html>", {"content-type": "text/html"}),
        json_reply({k: v for k, v in message([]).items() if k != "content"}),
        json_reply(message([{"type": "tool_use", "id": "t", "name": "record_ops", "input": "x"}])),
        json_reply(message([{"type": "tool_use", "id": "t", "input": {}}])),
    ],
    ids=["not-json", "html", "no-content", "tool-input-not-object", "tool-without-name"],
)
def test_malformed_responses_are_llm_errors(reply: Reply) -> None:
    llm, _ = make_llm(ScriptedServer(reply))
    with pytest.raises(LLMError, match="Anthropic"):
        llm.complete(SYSTEM, MESSAGES)


def stream_events(*texts: str) -> Reply:
    start = message([], output_tokens=1)
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    for text in texts:
        delta = {"type": "content_block_delta", "index": 0}
        events.append(
            ("content_block_delta", {**delta, "delta": {"type": "text_delta", "text": text}})
        )
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 9},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse_reply(events)


def test_stream_yields_text_deltas_in_order() -> None:
    server = ScriptedServer(stream_events("Apple ", "slices, ", "maybe?"))
    llm, _ = make_llm(server)
    chunks = list(llm.stream(SYSTEM, MESSAGES))
    assert chunks == ["Apple ", "slices, ", "maybe?"]
    body = server.bodies()[0]
    assert body["stream"] is True
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}


def test_stream_retries_opening_on_overload() -> None:
    server = ScriptedServer(OVERLOADED, stream_events("Hi"))
    llm, sleep = make_llm(server)
    assert "".join(llm.stream(SYSTEM, MESSAGES)) == "Hi"
    assert len(server.requests) == 2 and len(sleep.delays) == 1


def test_error_event_mid_stream_is_llm_error() -> None:
    good = stream_events("Half an ans")
    error = b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    cut = good.body.split(b"event: content_block_stop")[0] + error
    llm, _ = make_llm(ScriptedServer(Reply(200, cut, good.headers)))
    received: list[str] = []
    with pytest.raises(LLMError, match="Overloaded"):
        received.extend(llm.stream(SYSTEM, MESSAGES))
    assert received == ["Half an ans"]


def test_built_client_leaves_retrying_to_us() -> None:
    llm = AnthropicLLM("claude-haiku-4-5", api_key="k", env={})
    assert llm.model == "claude-haiku-4-5"
    assert llm._client.max_retries == 0
    assert llm._client.api_key == "k"
