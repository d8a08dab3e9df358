"""The Anthropic path end to end: our code over the real SDK, only the network replaced.

A dream with the Anthropic extractor, and a chat context planned by the model, against
recorded-shape Messages API responses served by ``httpx2.MockTransport``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import anthropic
from memfs.agent.dream.runner import dream_once
from memfs.agent.llm.anthropic_provider import AnthropicLLM

from memfs import history
from memfs.app import MemoryStore
from memfs.compaction import write_event
from memfs.turn import commit_history
from tests._fakes_llm import ScriptedServer, json_reply
from tests.conftest import FakeEmbedder

T0 = dt.datetime(2026, 11, 24, 18, 0, tzinfo=dt.timezone.utc)


def tool_use(name: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "tool_use", "id": "toolu_01", "name": name, "input": payload}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 812, "output_tokens": 140,
                      "cache_read_input_tokens": 600, "cache_creation_input_tokens": 0}}


def anthropic_llm(server: ScriptedServer) -> AnthropicLLM:
    client = anthropic.Anthropic(api_key="test", http_client=server.client(), max_retries=0)
    return AnthropicLLM("claude-haiku-4-5", client=client, sleep=lambda s: None)


def test_a_dream_with_the_anthropic_extractor(isolated_env: Path) -> None:
    pair = MemoryStore(isolated_env, embedder=FakeEmbedder()).pair("alex", "mira")
    lines = [("user", "My dentist appointment moved to Friday the 4th at 10."),
             ("assistant", "Got it, Friday the 4th at 10."),
             ("user", "Also I had pasta for lunch."), ("assistant", "Nice.")]
    msgs = [history.append(pair.root, "s-1", role, text, T0 + dt.timedelta(minutes=i))
            for i, (role, text) in enumerate(lines)]
    commit_history(pair, "test window")
    event = write_event(pair.root, msgs, "test", T0)
    server = ScriptedServer(json_reply(tool_use("record_dream", {
        "story": "Alex's dentist appointment is on Friday 2026-12-04 at 10:00.",
        "ops": [{"op": "write", "type": "plan", "body": "The user's dentist appointment is on 2026-12-04 at 10:00.",
                 "entities": ["user"], "salience": 0.6, "expires": "2026-12-04", "turns": [0]},
                {"op": "write", "type": "fact", "body": "x", "entities": ["user"], "turns": [2],
                 "salience": 3}]})))
    result = dream_once(pair, event, anthropic_llm(server), now=T0)
    assert result.status == "merged", result.error
    request = server.bodies()[0]
    assert request["tool_choice"] == {"type": "tool", "name": "record_dream"}
    assert request["max_tokens"] == 2048
    assert "[s-1:0" in json.dumps(request["messages"]), "window lines carry session:turn provenance"
    cards = pair.cards()
    assert [c.body for c in cards] == ["The user's dentist appointment is on 2026-12-04 at 10:00."]
    assert cards[0].expires == dt.date(2026, 12, 4) and cards[0].source is not None
    assert "dentist" in pair.summary()
    assert any("salience" in note for note in result.notes), "the bad op is dropped and logged"


def test_the_retrieval_plan_from_the_model(isolated_env: Path) -> None:
    server = ScriptedServer(json_reply(tool_use("retrieval_plan", {
        "need_retrieval": True, "memory_types": ["plan"], "entities": ["user", "Lin"],
        "time_scope": "most_recent", "search_query": "the user's meeting with Lin",
        "confidence": 0.93, "reason": "asks about a plan"})))
    store = MemoryStore(isolated_env, embedder=FakeEmbedder(), llm=anthropic_llm(server))
    pair = store.pair("alex", "mira")
    pair.pin("Allergic to peanuts")
    ctx = pair.context("Is my meeting with Lin still on?")
    assert ctx.plan.need_retrieval and ctx.plan.time_scope == "most_recent"
    assert ctx.plan.search_query == "the user's meeting with Lin"
    body = server.bodies()[0]
    assert body["tool_choice"] == {"type": "tool", "name": "retrieval_plan"}
    assert "Allergic to peanuts" in json.dumps(body)
