"""`memfs chat` and the character's own memory edits (author `agent`, never system/)."""

from __future__ import annotations

import io
from pathlib import Path

from memfs.agent.chat import ChatSession
from memfs.agent.llm.base import ToolCall
from memfs.agent.tools import run_tool
from rich.console import Console

from memfs.app import MemoryStore
from memfs.store import MemoryPair
from tests.conftest import FakeEmbedder, FakeLLM


def chat_pair(home: Path, llm: FakeLLM) -> MemoryPair:
    return MemoryStore(home, embedder=FakeEmbedder(), llm=llm).pair("alex", "mira")


def test_chat_turn_appends_both_messages_and_streams_the_reply(isolated_env: Path) -> None:
    llm = FakeLLM(default="Hello Alex, how was the vet?")
    pair = chat_pair(isolated_env, llm)
    pair.pin("Allergic to peanuts")
    out = io.StringIO()
    session = ChatSession(pair)
    assert session.handle("hi Mira", Console(file=out))
    session.close()
    assert "Hello Alex, how was the vet?" in out.getvalue()
    call = llm.calls[-1]  # earlier calls are the retrieval planner's
    assert "Allergic to peanuts" in call["system"][0]
    assert call["messages"][-1] == {"role": "user", "content": "hi Mira"}
    from memfs.history import iter_messages

    assert [(m.role, m.content) for m in iter_messages(pair.root)] == [
        ("user", "hi Mira"), ("assistant", "Hello Alex, how was the vet?")]
    assert pair.log(1)[0].subject.startswith("history:"), "session end commits the history"


def test_chat_slash_commands(isolated_env: Path) -> None:
    pair = chat_pair(isolated_env, FakeLLM())
    session = ChatSession(pair)
    console = Console(file=io.StringIO())
    assert session.handle("/pin Never call me Al", console)
    assert pair.pins() == ["Never call me Al"]
    assert session.handle("/context", console)
    assert session.handle("/compact", console)
    assert not session.handle("/quit", console)


def test_chat_command_without_provider_says_how_to_configure(run_cli, isolated_env: Path, monkeypatch) -> None:
    MemoryStore(isolated_env).pair("alex", "mira")
    monkeypatch.setattr("sys.stdin", io.StringIO("/quit\n"))
    result = run_cli("-u", "alex", "-c", "mira", "chat")
    assert result.code == 0
    assert "ANTHROPIC_API_KEY" in result.err


def test_agent_tools_commit_as_agent_and_validate(isolated_env: Path) -> None:
    pair = chat_pair(isolated_env, FakeLLM())
    saved = run_tool(pair, ToolCall("t1", "write_card", {"type": "fact", "body": "The user has a corgi called Biscuit.",
                                                          "entities": ["user", "Biscuit"]}), "s-1")
    assert saved.startswith("saved as c-")
    card_id = saved.split()[-1]
    entry = pair.log(1)[0]
    assert entry.author == "agent" and entry.trailers["Memfs-Actor"] == "agent"
    assert run_tool(pair, ToolCall("t2", "mark_stale", {"id": card_id}), "s-1") == f"{card_id} marked stale"
    assert pair.card(card_id).status == "stale"
    bad = run_tool(pair, ToolCall("t3", "write_card", {"type": "gossip", "body": "x"}), "s-1")
    assert bad.startswith("error:") and "type" in bad
    unknown = run_tool(pair, ToolCall("t4", "mark_stale", {"id": "../system/pins"}), "s-1")
    assert unknown.startswith("error:")


def test_agent_can_never_write_system(isolated_env: Path) -> None:
    import pytest

    from memfs.errors import BadInputError
    from memfs.gitio import AGENT

    pair = chat_pair(isolated_env, FakeLLM())
    with pytest.raises(BadInputError, match="only the user writes system/"):
        pair.repo.commit({"system/pins.md": "- hijack\n"}, "card", "x", AGENT)
    assert "hijack" not in (pair.root / "system" / "pins.md").read_text()


def test_tool_loop_with_a_tool_capable_provider(isolated_env: Path) -> None:
    llm = FakeLLM()
    llm.name = "anthropic"
    llm.enqueue(tool={"name": "retrieval_plan", "input": {
        "need_retrieval": False, "memory_types": [], "entities": ["user", "Lin"], "time_scope": "any",
        "search_query": "", "confidence": 0.9, "reason": "new information"}})
    llm.enqueue(tool={"name": "write_card", "input": {"type": "plan", "body": "The user visits Lin on 2026-12-05.",
                                                      "expires": "2026-12-05"}})
    llm.enqueue("I'll remember your visit to Lin.")
    pair = chat_pair(isolated_env, llm)
    out = io.StringIO()
    session = ChatSession(pair)
    session.handle("I'm visiting Lin on December 5th", Console(file=out))
    assert "I'll remember your visit to Lin." in out.getvalue()
    assert "memory: saved as c-" in out.getvalue()
    assert [c.type for c in pair.cards()] == ["plan"]
    turn_calls = [c for c in llm.calls if c["tools"] == ["search_memory", "write_card", "mark_stale"]]
    assert len(turn_calls) == 2
    assert "Tool results" in turn_calls[1]["messages"][-1]["content"]


def test_agent_tools_survive_odd_model_arguments(isolated_env: Path) -> None:
    pair = chat_pair(isolated_env, FakeLLM())
    assert run_tool(pair, ToolCall("t1", "search_memory", {"query": "dog", "k": "lots"})).startswith("error:")
    saved = run_tool(pair, ToolCall("t2", "write_card", {"type": "fact", "body": "The user knows Lin.",
                                                          "entities": "Lin"}))
    assert pair.card(saved.split()[-1]).entities == ("Lin",)
