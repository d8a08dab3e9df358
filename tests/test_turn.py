"""The companion turn: durable history, context assembly, compaction, the retrieval plan."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.compaction import pending_events
from memfs.config import Config
from memfs.store import MemoryPair
from memfs.turn import TurnOptions, add_messages, compact_now, end_session
from memfs.window import current_window
from tests.conftest import FakeEmbedder

T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)


def make_pair(home: Path, **config: object) -> MemoryPair:
    store = MemoryStore(home, embedder=FakeEmbedder(), config=Config(**config))  # type: ignore[arg-type]
    return store.pair("alex", "mira")


def exchange(n: int, words: int = 30, start: dt.datetime = T0) -> list[dict[str, str]]:
    out = []
    for i in range(n):
        ts = start + dt.timedelta(minutes=2 * i)
        out.append({"role": "user", "content": f"message {i} " + "chatter " * words,
                    "ts": ts.isoformat()})
        out.append({"role": "assistant", "content": f"reply {i} " + "answer " * words,
                    "ts": (ts + dt.timedelta(seconds=30)).isoformat()})
    return out


def test_messages_survive_byte_for_byte(isolated_env: Path) -> None:
    pair = make_pair(isolated_env)
    weird = ["emoji 🐶 and RTL עברית", "line one\nline two\r\nthree", "x" * 100_000,
             '{"json": "inside"}', "\u2028separator\u0085nel", ""]
    add_messages(pair, [{"role": "user", "content": c} for c in weird], session="s-a",
                 options=TurnOptions(dream="none"))
    from memfs.history import iter_messages

    assert [m.content for m in iter_messages(pair.root)] == weird


def test_message_is_durable_before_compaction_runs(isolated_env: Path, monkeypatch) -> None:
    pair = make_pair(isolated_env)
    from memfs import turn

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("crash after append")

    monkeypatch.setattr(turn, "maybe_compact", boom)
    with pytest.raises(RuntimeError):
        add_messages(pair, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
                     session="s-a")
    lines = (pair.root / "history" / "s-a.jsonl").read_text().splitlines()
    assert [json.loads(line)["content"] for line in lines] == ["hi", "yo"]


@pytest.mark.parametrize(("bad", "where"), [
    ('{"role": "robot", "content": "no"}', "line 3: role"),
    ('{"role": "user", "content": "x", "ts": "garbage"}', "line 3: ts"),
    ('{"role": "user", "content": "x", "session": 7}', "line 3: session"),
    ('{"role": "user", "content": "x", "session": "../evil"}', "line 3: session: invalid session id"),
])
def test_ingest_refuses_bad_line_before_appending_anything(run_cli, isolated_env: Path, tmp_path: Path,
                                                           bad: str, where: str) -> None:
    make_pair(isolated_env)
    path = tmp_path / "t.jsonl"
    path.write_text('{"role": "user", "content": "ok"}\n\n' + bad + "\n")
    result = run_cli("-u", "alex", "-c", "mira", "ingest", str(path))
    assert result.code == 2
    assert f"{path}: {where}" in result.err, result.err
    assert not list((isolated_env / "alex" / "mira" / "history").glob("*.jsonl"))


def test_ingest_of_a_directory_is_one_clear_line(run_cli, isolated_env: Path, tmp_path: Path) -> None:
    make_pair(isolated_env)
    result = run_cli("-u", "alex", "-c", "mira", "ingest", str(tmp_path))
    assert result.code == 2 and "is a directory" in result.err


def test_ingest_records_sessions_and_commits_history(run_cli, isolated_env: Path, tmp_path: Path) -> None:
    pair = make_pair(isolated_env)
    path = tmp_path / "t.jsonl"
    rows = [{"role": "user", "content": "hello", "ts": "2026-11-01T10:00:00Z", "session": "s-one"},
            {"role": "assistant", "content": "hi!", "ts": "2026-11-01T10:00:05Z", "session": "s-one"},
            {"role": "user", "content": "again", "ts": "2026-11-02T10:00:00Z", "session": "s-two"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert run_cli("-u", "alex", "-c", "mira", "ingest", str(path)).code == 0
    assert pair.repo.list_head("history") == ["history/.gitkeep", "history/s-one.jsonl",
                                              "history/s-two.jsonl"]
    assert pair.log(1)[0].subject.startswith("history:")


def test_compaction_evicts_oldest_whole_exchanges_and_records_an_event(isolated_env: Path) -> None:
    pair = make_pair(isolated_env, window_budget=400)
    add_messages(pair, exchange(12), session="s-a", options=TurnOptions(dream="none"))
    events = pending_events(pair.root)
    assert events, "the window went over budget, a compaction event must exist"
    window = current_window(pair)
    assert window[0].role == "user", "a user message and its reply are never split"
    assert sum(len(m.content) // 4 for m in window) <= 400
    evicted = {(s.session, t) for e in events for s in e.spans for t in range(s.first, s.last + 1)}
    assert all((m.session, m.turn) not in evicted for m in window)
    assert len(evicted) + len(window) == 24
    # the conversation path runs no git; the dream commits the history it reads from git
    assert "history/s-a.jsonl" not in pair.repo.list_head("history")
    assert pair.dream() and pending_events(pair.root) == []
    assert "history/s-a.jsonl" in pair.repo.list_head("history")


def test_step_count_trigger_and_off(isolated_env: Path) -> None:
    pair = make_pair(isolated_env, compaction_trigger="step-count", step_count=4)
    add_messages(pair, exchange(6, words=2), session="s-a", options=TurnOptions(dream="none"))
    assert pending_events(pair.root)
    off = MemoryStore(isolated_env / "off", embedder=FakeEmbedder(),
                      config=Config(compaction_trigger="off", window_budget=50)).pair("a", "b")
    add_messages(off, exchange(10), session="s-a", options=TurnOptions(dream="none"))
    assert pending_events(off.root) == []
    assert compact_now(off, dream="none") is not None, "/compact forces one even when off"
    assert len(current_window(off)) == 2


def test_deleting_dot_memfs_loses_nothing(isolated_env: Path) -> None:
    import shutil

    pair = make_pair(isolated_env, window_budget=400)
    add_messages(pair, exchange(12), session="s-a", options=TurnOptions(dream="none"))
    end_session(pair)
    shutil.rmtree(pair.root / ".memfs")
    window = current_window(pair)
    assert len(window) == 24, "undreamed messages rejoin the window"


def test_context_has_every_layer_and_the_json_shape(isolated_env: Path, run_cli) -> None:
    pair = make_pair(isolated_env)
    pair.pin("Allergic to peanuts")
    (pair.root / "system" / "style.md").write_text("Speak briefly.\n")
    pair.repo.commit({"system/style.md": "Speak briefly.\n", "summary.md": "Alex got a dog.\n"},
                     "edit", "style", __import__("memfs.gitio").gitio.USER)
    add_messages(pair, exchange(2, words=3), session="s-a", options=TurnOptions(dream="none"))
    doc = run_cli("-u", "alex", "-c", "mira", "context", "Any snack ideas?", "--json").json()
    assert set(doc) >= {"system", "messages", "plan", "tokens"}
    assert set(doc["tokens"]) == {"system", "summary", "retrieved", "window"}
    assert "Allergic to peanuts" in doc["system"] and "Speak briefly." in doc["system"]
    assert "Alex got a dog." in doc["system"]
    assert doc["messages"][-1] == {"role": "user", "content": "Any snack ideas?"}
    assert [m["role"] for m in doc["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert set(doc["plan"]) >= {"need_retrieval", "memory_types", "entities", "time_scope",
                                "search_query", "confidence"}


def test_pins_are_never_dropped_to_fit_and_a_warning_says_so(isolated_env: Path) -> None:
    pair = make_pair(isolated_env, context_budget=300, pins_budget=50)
    for i in range(20):
        pair.pin(f"pin number {i} about something the user cares about a lot")
    add_messages(pair, exchange(10), session="s-a", options=TurnOptions(dream="none"))
    ctx = pair.context("hello there")
    assert all(f"pin number {i} " in ctx.system[0] for i in range(20))
    assert any("pins budget" in w for w in ctx.warnings)
    assert ctx.messages[-1]["content"] == "hello there"


def test_context_is_built_from_committed_head(isolated_env: Path) -> None:
    pair = make_pair(isolated_env)
    pair.pin("committed pin")
    (pair.root / "system" / "pins.md").write_text("# Pins\n\n- half-saved edit\n")
    ctx = pair.context("hi")
    assert "committed pin" in ctx.system[0] and "half-saved" not in ctx.system[0]


def test_anthropic_kwargs_cache_the_system_block(isolated_env: Path) -> None:
    pair = make_pair(isolated_env)
    pair.pin("Allergic to peanuts")
    kwargs = pair.context("hi").anthropic_kwargs()
    assert kwargs["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "Allergic to peanuts" in kwargs["system"][0]["text"]
    assert kwargs["messages"] == [{"role": "user", "content": "hi"}]


def test_pin_add_warns_over_budget(run_cli, isolated_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMFS_PINS_BUDGET", "5")
    make_pair(isolated_env)
    result = run_cli("-u", "alex", "-c", "mira", "pin", "add", "a long pin " * 10)
    assert result.code == 0 and "pins budget" in result.err


def test_the_planner_is_the_configured_provider_or_the_rules(isolated_env: Path, run_cli, monkeypatch) -> None:
    from memfs.agent.services import planner_llm

    from tests.conftest import FakeLLM

    assert planner_llm(MemoryStore(isolated_env)) is None, "offline: rules, no provider object"
    fake = FakeLLM()
    assert planner_llm(MemoryStore(isolated_env, llm=fake)) is fake
    make_pair(isolated_env)
    monkeypatch.setenv("MEMFS_LLM_PROVIDER", "anthropic")
    result = run_cli("-u", "alex", "-c", "mira", "context", "hello")
    assert result.code == 2 and "ANTHROPIC_API_KEY" in result.err


def test_context_knows_the_names_in_long_term_memory(isolated_env: Path) -> None:
    from memfs.gitio import USER
    from tests.conftest import card_text

    pair = make_pair(isolated_env)
    pair.repo.commit({"cards/c-h.md": card_text("c-h", "Project Harbor's deadline is 12 January.",
                                                entities=["user", "Harbor"])}, "card", "harbor", USER)
    ctx = pair.context("When is the Harbor deadline?")
    assert ctx.plan.need_retrieval
    assert [h.id for h in ctx.hits][:1] == ["c-h"]


def test_hand_broken_history_lines_are_skipped_and_reported(isolated_env: Path, run_cli) -> None:
    pair = make_pair(isolated_env)
    add_messages(pair, exchange(1, words=2), session="s-a", options=TurnOptions(dream="none"))
    with (pair.root / "history" / "s-a.jsonl").open("a") as handle:
        handle.write('{"role": "user"}\n{"role": "user", "content": "x", "turn": "a"}\n[1]\nnot json\n')
    assert pair.context("hello").messages[-1]["content"] == "hello"
    result = run_cli("-u", "alex", "-c", "mira", "check", "--json")
    reasons = [p["reason"] for p in result.json()["problems"]]
    assert result.code == 1 and len(reasons) == 4
    assert reasons[1] == "line 4: turn: must be a whole number"


def test_context_of_an_empty_message_is_bad_input(isolated_env: Path, run_cli) -> None:
    make_pair(isolated_env)
    result = run_cli("-u", "alex", "-c", "mira", "context", "  ")
    assert result.code == 2 and "message" in result.err


def test_retrieval_never_spends_a_slot_on_the_window_or_the_summary(isolated_env: Path) -> None:
    """The window and the summary are in front of the model already: the k retrieved
    slots go to other records, even when the window matches the query best."""
    from memfs.gitio import USER
    from tests.conftest import card_text

    pair = make_pair(isolated_env, dream_trigger="off")
    pair.repo.commit({"cards/c-h.md": card_text("c-h", "Project Harbor's deadline is 12 January.",
                                                entities=["user", "Harbor"]),
                      "summary.md": "Deadlines came up often.\n"},
                     "card", "harbor", USER)
    older = [{"role": "user" if i % 2 == 0 else "assistant",
              "content": f"older Harbor note {i} about the deadline",
              "ts": (T0 + dt.timedelta(minutes=i)).isoformat()} for i in range(20)]
    add_messages(pair, older, options=TurnOptions(dream="none"))
    compact_now(pair, dream="none")
    recent = [{"role": "user" if i % 2 == 0 else "assistant",
               "content": f"the deadline, that deadline again {i}",
               "ts": (T0 + dt.timedelta(hours=1, minutes=i)).isoformat()} for i in range(16)]
    add_messages(pair, recent, options=TurnOptions(dream="none"))
    window = {m.id for m in current_window(pair)}
    ctx = pair.context("When is the Harbor deadline?")
    assert ctx.plan.need_retrieval
    ids = [h.id for h in ctx.hits]
    assert len(ids) == pair.config.search_k
    assert not set(ids) & window and all(h.kind != "summary" for h in ctx.hits)
    assert "c-h" in ids


def test_an_event_merged_by_another_process_mid_listing_is_simply_not_pending(
        isolated_env: Path, monkeypatch) -> None:
    """A dream in another process removes its event file after the merge; a reader that
    listed the folder just before (the demo polling, a server's health) must not crash."""
    import memfs.compaction as compaction

    pair = make_pair(isolated_env, window_budget=300, dream_trigger="off")
    add_messages(pair, exchange(12), options=TurnOptions(dream="none"))
    compact_now(pair, dream="none")
    [first, *rest] = pending_events(pair.root)
    load = compaction.load_event

    def merged_meanwhile(path: Path) -> object:
        if path.name == f"{first.id}.json":
            path.unlink()  # what remove_event does in the dreaming process
        return load(path)

    monkeypatch.setattr(compaction, "load_event", merged_meanwhile)
    assert [e.id for e in pending_events(pair.root)] == [e.id for e in rest]
    assert not list((pair.root / ".memfs" / "events").glob("*.bad"))
