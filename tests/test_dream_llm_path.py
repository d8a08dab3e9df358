"""The model path of dreaming through the real anthropic SDK (only the network is mocked):
an answer cut off at the 2,048-token cap is repaired once; a second failure leaves the window
pending with its reason and nothing applied; system/ paths and unknown ids are dropped, logged."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from memfs.agent.dream.runner import LOG, dream_once

from memfs import history
from memfs.app import MemoryStore
from memfs.compaction import pending_events, write_event
from memfs.store import MemoryPair
from memfs.turn import commit_history
from tests._fakes_llm import ScriptedServer, json_reply
from tests.test_anthropic_end_to_end import anthropic_llm, tool_use

T0 = dt.datetime(2027, 9, 6, 19, 0, tzinfo=dt.UTC)
GOOD = {"story": "Jules said they work nights as a paramedic.",
        "ops": [{"op": "write", "type": "fact", "body": "The user (Jules) is a paramedic and works nights.",
                 "entities": ["user"], "salience": 0.7, "turns": [0]}]}


def truncated(payload: dict[str, Any]) -> dict[str, Any]:
    """What the API returns when the output cap cuts the tool call: stop_reason max_tokens."""
    reply = tool_use("record_dream", payload)
    reply["stop_reason"] = "max_tokens"
    reply["usage"]["output_tokens"] = 2048
    return reply


def a_window(isolated_env: Path) -> tuple[MemoryPair, Any]:
    from tests.conftest import FakeEmbedder

    pair = MemoryStore(isolated_env, embedder=FakeEmbedder()).pair("jules", "mira")
    lines = [("user", "i'm a paramedic, i work nights"), ("assistant", "That's intense.")]
    msgs = [history.append(pair.root, "s-1", role, text, T0 + dt.timedelta(minutes=i))
            for i, (role, text) in enumerate(lines)]
    commit_history(pair, "test window")
    return pair, write_event(pair.root, msgs, "test", T0)


def test_a_cut_off_answer_is_repaired_once(isolated_env: Path) -> None:
    pair, event = a_window(isolated_env)
    server = ScriptedServer(json_reply(truncated({"story": "Jules"})), json_reply(tool_use("record_dream", GOOD)))
    result = dream_once(pair, event, anthropic_llm(server), now=T0 + dt.timedelta(hours=1))
    assert result.status == "merged", result.error
    first, second = server.bodies()
    assert first["max_tokens"] == second["max_tokens"] == 2048
    assert "cut off at the output cap" in json.dumps(second["messages"])
    (card,) = pair.cards()
    assert card.body == GOOD["ops"][0]["body"] and card.created == T0  # created: when it was said
    assert "## Profile" in pair.summary() and "paramedic" in pair.summary()


def test_two_bad_answers_leave_the_window_pending_and_nothing_applied(isolated_env: Path) -> None:
    pair, event = a_window(isolated_env)
    head = pair.repo.head()
    server = ScriptedServer(json_reply(truncated({"story": "J"})), json_reply(tool_use("record_dream", {"ops": 3})))
    result = dream_once(pair, event, anthropic_llm(server), now=T0 + dt.timedelta(hours=1))
    assert result.status == "failed" and len(server.requests) == 2
    assert pair.repo.head() == head and pair.cards() == [] and pair.summary() == ""
    (pending,) = pending_events(pair.root)
    assert pending.id == event.id and pending.attempts == 1
    assert pending.last_error and "still invalid after a repair" in pending.last_error
    assert "window stays pending" in (pair.root / LOG).read_text()


def test_system_paths_and_unknown_ids_are_dropped_and_logged(isolated_env: Path) -> None:
    pair, event = a_window(isolated_env)
    answer = {"story": "Jules works nights.", "ops": [
        *GOOD["ops"],
        {"op": "write", "type": "fact", "body": "x", "entities": ["user"], "path": "system/pins.md"},
        {"op": "write", "type": "fact", "body": "Add this to system/pins.md", "entities": ["user"]},
        {"op": "supersede", "old_id": "c-nope00", "type": "fact", "body": "y", "entities": ["user"]},
        {"op": "close", "id": "../system/pins", "reason": "done"}]}
    server = ScriptedServer(json_reply(tool_use("record_dream", answer)))
    result = dream_once(pair, event, anthropic_llm(server), now=T0 + dt.timedelta(hours=1))
    assert result.status == "merged", result.error
    assert [c.body for c in pair.cards()] == [GOOD["ops"][0]["body"]]
    assert pair.repo.read_head("system/pins.md") == pair.repo.read_head("system/pins.md", "HEAD~1")
    log = (pair.root / LOG).read_text()
    for reason in ("never by path", "mentions system/", "unknown card id 'c-nope00'", "looks like a path"):
        assert reason in log, log
