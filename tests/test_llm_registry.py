"""Provider choice (registry), the offline provider, and structured output with one repair."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from memfs.agent.llm.anthropic_provider import AnthropicLLM
from memfs.agent.llm.base import LLM, Tool
from memfs.agent.llm.offline import OfflineLLM
from memfs.agent.llm.openai_compat import OpenAICompatLLM
from memfs.agent.llm.registry import choose_provider, describe_configuration, get_llm
from memfs.agent.llm.structured import complete_json, validate

from memfs.errors import BadInputError, LLMError, NeedsKeyError
from tests._fakes_llm import Reply, ScriptedServer, SleepRecorder, json_reply

OLLAMA = {"MEMFS_OPENAI_BASE_URL": "http://localhost:11434/v1", "MEMFS_LLM_MODEL": "llama3.1"}


# --- registry ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "env", "expected"),
    [
        (None, {}, "offline"),
        (None, {"ANTHROPIC_API_KEY": "k"}, "anthropic"),
        (None, {"OPENAI_BASE_URL": "http://x/v1"}, "openai"),
        (None, {"ANTHROPIC_API_KEY": "k", **OLLAMA}, "anthropic"),
        (None, {"MEMFS_LLM_PROVIDER": "Offline", "ANTHROPIC_API_KEY": "k"}, "offline"),
        (None, {"MEMFS_LLM_PROVIDER": "openai", "ANTHROPIC_API_KEY": "k"}, "openai"),
        ("anthropic", {"MEMFS_LLM_PROVIDER": "offline"}, "anthropic"),
    ],
)
def test_choice_order(provider: str | None, env: dict[str, str], expected: str) -> None:
    assert choose_provider(provider, env) == expected


def test_get_llm_builds_each_provider() -> None:
    assert isinstance(get_llm(env={}), OfflineLLM)
    claude = get_llm(env={"ANTHROPIC_API_KEY": "k", "MEMFS_LLM_MODEL": "claude-haiku-4-5"})
    assert isinstance(claude, AnthropicLLM) and claude.model == "claude-haiku-4-5"
    assert isinstance(get_llm("anthropic", env={"ANTHROPIC_API_KEY": "k"}), AnthropicLLM)
    local = get_llm(env=OLLAMA)
    assert isinstance(local, OpenAICompatLLM)
    assert local.url == "http://localhost:11434/v1/chat/completions"
    assert local.model == "llama3.1"
    assert isinstance(get_llm(model="qwen3", env=OLLAMA), OpenAICompatLLM)


def test_explicit_model_argument_wins_over_env() -> None:
    llm = get_llm("anthropic", "claude-opus-4-8", env={"ANTHROPIC_API_KEY": "k", **OLLAMA})
    assert isinstance(llm, AnthropicLLM) and llm.model == "claude-opus-4-8"


def test_explicit_provider_without_its_configuration_names_the_variable() -> None:
    with pytest.raises(NeedsKeyError, match="ANTHROPIC_API_KEY"):
        get_llm("anthropic", env={})
    with pytest.raises(NeedsKeyError, match="ANTHROPIC_API_KEY"):
        get_llm(env={"MEMFS_LLM_PROVIDER": "anthropic"})
    with pytest.raises(NeedsKeyError, match="MEMFS_OPENAI_BASE_URL"):
        get_llm("openai", env={"MEMFS_LLM_MODEL": "m"})
    with pytest.raises(NeedsKeyError, match="MEMFS_LLM_MODEL"):
        get_llm("openai", env={"MEMFS_OPENAI_BASE_URL": "http://x/v1"})


def test_unknown_provider_is_bad_input() -> None:
    with pytest.raises(BadInputError, match="MEMFS_LLM_PROVIDER: unknown LLM provider 'gpt'"):
        get_llm(env={"MEMFS_LLM_PROVIDER": "gpt"})


def test_describe_configuration_says_what_is_used_and_how_to_change_it() -> None:
    text = describe_configuration({})
    assert "LLM provider: offline" in text
    assert "ANTHROPIC_API_KEY" in text and "MEMFS_OPENAI_BASE_URL" in text
    assert "LLM provider: anthropic" in describe_configuration({"ANTHROPIC_API_KEY": "k"})
    assert "unknown LLM provider" in describe_configuration({"MEMFS_LLM_PROVIDER": "gpt"})


def test_importing_the_package_loads_no_sdk() -> None:
    code = "import sys, memfs.agent.llm; print(sorted({'anthropic', 'httpx2'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


# --- offline ----------------------------------------------------------------------------

SYSTEM = [
    (
        "# Mira\n\nYou are Mira, a warm companion.\n\n# Pins\n<!-- One pin per list item. -->\n"
        "- Allergic to peanuts\n- Sister is called Ana"
    ),
    "Summary: Alex started a new job at the library.",
    "Retrieved memory:\n- [c-7f3a2b] Meeting with Lin moved to Friday 3 pm.",
]


def test_offline_reply_is_honest_and_shows_memory_in_context() -> None:
    llm: LLM = OfflineLLM()
    completion = llm.complete(SYSTEM, [{"role": "user", "content": "snack ideas?"}])
    text = completion.text
    assert text.startswith("(offline)")
    for fact in ("Allergic to peanuts", "Sister is called Ana", "new job at the library", "Lin"):
        assert fact in text
    assert "warm companion" not in text and "One pin per list item" not in text
    assert completion.tool_calls == []


def test_offline_never_calls_tools_and_streams_the_same_text() -> None:
    llm = OfflineLLM()
    tool = Tool("plan", "", {"type": "object"})
    messages = [{"role": "user", "content": "hi"}]
    completion = llm.complete(SYSTEM, messages, tools=[tool], tool_choice="plan")
    assert completion.tool_calls == []
    chunks = list(llm.stream(SYSTEM, messages))
    assert len(chunks) > 3 and "".join(chunks) == completion.text


def test_offline_without_memory_says_so() -> None:
    text = OfflineLLM().complete(["# Mira\n\nYou are Mira.\n\n# Pins\n"], []).text
    assert text.startswith("(offline)") and "No memories are in context" in text


# --- structured output ------------------------------------------------------------------

TOOL = Tool(
    name="plan",
    description="Decide whether this turn needs long-term memory.",
    input_schema={
        "type": "object",
        "properties": {
            "need_retrieval": {"type": "boolean"},
            "time_scope": {"enum": ["any", "most_recent", "past"]},
            "entities": {"type": "array", "items": {"type": "string"}},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["need_retrieval", "time_scope"],
        "additionalProperties": False,
    },
)
GOOD = {"need_retrieval": True, "time_scope": "past", "entities": ["Lin"], "confidence": 0.8}


def tool_reply(arguments: dict[str, Any]) -> Reply:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "plan", "arguments": json.dumps(arguments)},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return json_reply(
        {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
    )


def prose_reply(text: str) -> Reply:
    message = {"role": "assistant", "content": text}
    return json_reply({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})


def local_llm(server: ScriptedServer) -> OpenAICompatLLM:
    return OpenAICompatLLM("http://x/v1", "m", http_client=server.client(), sleep=SleepRecorder())


def test_complete_json_returns_valid_input_in_one_call() -> None:
    server = ScriptedServer(tool_reply(GOOD))
    assert (
        complete_json(local_llm(server), ["sys"], [{"role": "user", "content": "q"}], TOOL) == GOOD
    )
    assert len(server.requests) == 1
    assert server.bodies()[0]["tool_choice"] == {"type": "function", "function": {"name": "plan"}}


def test_complete_json_repairs_invalid_input_once() -> None:
    bad = {"need_retrieval": "yes", "entities": ["Lin", 3]}
    server = ScriptedServer(tool_reply(bad), tool_reply(GOOD))
    result = complete_json(local_llm(server), ["sys"], [{"role": "user", "content": "q"}], TOOL)
    assert result == GOOD
    repair = server.bodies()[1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert '"need_retrieval": "yes"' in repair[2]["content"]
    complaint = repair[3]["content"]
    assert "input.need_retrieval: expected boolean, got string" in complaint
    assert "input.time_scope: required but missing" in complaint
    assert "input.entities[1]: expected string, got integer" in complaint


def test_complete_json_repairs_a_prose_answer() -> None:
    server = ScriptedServer(prose_reply("I think we should search."), tool_reply(GOOD))
    assert complete_json(local_llm(server), [], [{"role": "user", "content": "q"}], TOOL) == GOOD
    assert "instead of calling plan" in server.bodies()[1]["messages"][-1]["content"]


def test_complete_json_gives_up_after_two_bad_replies() -> None:
    server = ScriptedServer(prose_reply("no"), tool_reply({"need_retrieval": True}))
    with pytest.raises(LLMError, match="still invalid after a repair.*time_scope: required"):
        complete_json(local_llm(server), [], [{"role": "user", "content": "q"}], TOOL)
    assert len(server.requests) == 2


def test_complete_json_refuses_offline() -> None:
    with pytest.raises(LLMError, match="offline"):
        complete_json(OfflineLLM(), [], [{"role": "user", "content": "q"}], TOOL)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({**GOOD, "confidence": 1.5}, "input.confidence: 1.5 is above the maximum 1"),
        ({**GOOD, "time_scope": "future"}, "input.time_scope: 'future' is not one of"),
        ({**GOOD, "path": "/etc"}, "input.path: not an allowed field"),
        ({**GOOD, "confidence": True}, "input.confidence: expected number, got boolean"),
        ([GOOD], "input: expected object, got array"),
    ],
)
def test_validate_names_the_problem(value: Any, problem: str) -> None:
    assert any(p.startswith(problem) for p in validate(value, TOOL.input_schema))


def test_validate_accepts_good_input() -> None:
    assert validate(GOOD, TOOL.input_schema) == []
    assert validate({"need_retrieval": False, "time_scope": "any"}, TOOL.input_schema) == []
