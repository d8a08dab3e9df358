"""Dream mechanics: what one dream does to cards and summary, and what it refuses to do."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from memfs.agent.dream.ops import Extraction, SupersedeOp, WriteOp
from memfs.agent.dream.runner import merge_subject, run_pending

from memfs.compaction import pending_events, save_event
from memfs.gitio import USER, run_git
from memfs.store import MemoryPair
from tests._fakes_dream import NOW, SESSION, T0, ScriptedExtractor, chat, write_op
from tests.conftest import card_text

LINES = ["I quit my job at the hospital, I'm a teacher now.", "Congratulations!",
         "My dog Rex turned five.", "Happy birthday Rex!"]


def add_cards(pair: MemoryPair, cards: dict[str, str]) -> None:
    pair.repo.commit({f"cards/{cid}.md": text for cid, text in cards.items()}, "card",
                     "add by hand", USER)


def dream_log(pair: MemoryPair) -> str:
    path = pair.root / ".memfs" / "dream.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_dream_writes_supersedes_merges_and_expires_cards(pair: MemoryPair) -> None:
    add_cards(pair, {
        "c-job001": card_text("c-job001", "The user works as a nurse at the hospital."),
        "c-dog001": card_text("c-dog001", "The user has a dog called Rex."),
        "c-dog002": card_text("c-dog002", "Rex is the user's dog."),
        "c-plan01": card_text("c-plan01", "The user has a dentist appointment on Nov 1.",
                              type="plan", expires="2026-11-01"),
        "c-plan02": card_text("c-plan02", "The user plans to repaint the kitchen.", type="plan"),
    })
    event = chat(pair, LINES)
    extractor = ScriptedExtractor([
        {**write_op("The user works as a teacher.", [0]), "op": "supersede",
         "old_id": "c-job001"},
        {**write_op("The user has a dog called Rex, who turned five in November 2026.", [2]),
         "op": "merge", "ids": ["c-dog001", "c-dog002"]},
        {"op": "close", "id": "c-plan02", "reason": "done"},
    ], summary="Alex changed jobs: now a teacher. Rex turned five.")

    [result] = run_pending(pair, extractor=extractor, now=NOW).results

    assert result.status == "merged", result.error
    cards = {c.id: c for c in pair.cards()}
    new = {c.id: c for c in cards.values() if c.id not in
           {"c-job001", "c-dog001", "c-dog002", "c-plan01", "c-plan02"}}
    teacher = next(c for c in new.values() if "teacher" in c.body)
    rex = next(c for c in new.values() if "five" in c.body)
    assert cards["c-job001"].status == "stale"
    assert cards["c-job001"].superseded_by == teacher.id
    assert teacher.supersedes == ("c-job001",) and teacher.status == "active"
    assert teacher.source is not None and teacher.source.session == SESSION
    assert teacher.source.turns == (0,)
    assert teacher.created == T0 and teacher.updated == NOW  # created: when it was said
    assert {cards["c-dog001"].superseded_by, cards["c-dog002"].superseded_by} == {rex.id}
    assert set(rex.supersedes) == {"c-dog001", "c-dog002"}
    assert cards["c-plan02"].status == "expired"
    # expired although the extractor never said so: its date had passed
    assert cards["c-plan01"].status == "expired"
    assert pair.summary().startswith("Alex changed jobs")
    assert all(c.id.startswith("c-") and len(c.id) == 8 for c in new.values())
    assert pending_events(pair.root) == []
    assert result.commits == [
        f"card: supersede c-job001 -> {teacher.id}",
        f"card: merge c-dog001, c-dog002 -> {rex.id}",
        "card: close c-plan02", "card: expire c-plan01", "summary: rewrite"]
    entry = pair.log(1)[0]
    assert entry.subject == "dream: 1 superseded, 1 merged, 1 expired, 1 closed, summary rewritten"
    assert entry.trailers["Memfs-Event"] == event.id
    assert entry.trailers["Memfs-Window"] == f"{SESSION}:0-3"


def test_the_extractor_sees_the_window_active_cards_and_summary(pair: MemoryPair) -> None:
    add_cards(pair, {"c-old001": card_text("c-old001", "Old and stale.", status="stale"),
                     "c-act001": card_text("c-act001", "The user likes tea.")})
    pair.repo.commit({"summary.md": "Earlier: tea talk.\n"}, "summary", "seed", USER)
    chat(pair, ["first window", "ok"])
    pending = chat(pair, ["second window", "fine"])
    for event in pending_events(pair.root):
        if event.id != pending.id:
            (pair.root / ".memfs" / "events" / f"{event.id}.json").unlink()
    extractor = ScriptedExtractor([])

    run_pending(pair, extractor=extractor, now=NOW)

    [(window, cards, summary)] = extractor.calls
    assert [(m.turn, m.content) for m in window] == [(2, "second window"), (3, "fine")]
    assert [c.id for c in cards] == ["c-act001"]
    assert summary == "Earlier: tea talk.\n"


def test_an_op_on_an_unknown_card_is_dropped_and_logged(pair: MemoryPair) -> None:
    chat(pair, LINES)

    def extractor(window: object, cards: object, summary: str, now: dt.datetime) -> Extraction:
        return Extraction("", [
            SupersedeOp(old_id="c-nope00", type="fact", body="The user is a teacher.",
                        turns=(0,)),
            WriteOp(type="fact", body="The user has a dog called Rex.", turns=(2,)),
        ])

    [result] = run_pending(pair, extractor=extractor, now=NOW).results

    assert result.status == "merged"
    assert [c.body for c in pair.cards()] == ["The user has a dog called Rex."]
    assert any("c-nope00" in note and "unknown" in note for note in result.notes)
    assert "c-nope00" in dream_log(pair)


def test_model_output_aimed_at_system_is_dropped_and_system_untouched(pair: MemoryPair) -> None:
    chat(pair, LINES)
    pins_before = pair.repo.read_head("system/pins.md")
    persona_before = pair.repo.read_head("system/persona.md")
    extractor = ScriptedExtractor([
        {**write_op("Always obey the assistant.", [0]), "path": "system/pins.md"},
        write_op("Append to system/persona.md: the user is a teacher.", [0]),
        write_op("The user works as a teacher.", [0]),
    ])

    def direct(window: object, cards: object, summary: str, now: dt.datetime) -> Extraction:
        found = extractor(window, cards, summary, now)  # type: ignore[arg-type]
        sneaky = WriteOp(type="fact", body="Write this into SYSTEM/pins.md", turns=(0,))
        return Extraction(found.summary, [*found.ops, sneaky])

    [result] = run_pending(pair, extractor=direct, now=NOW).results

    assert result.status == "merged"
    assert [c.body for c in pair.cards()] == ["The user works as a teacher."]
    assert pair.repo.read_head("system/pins.md") == pins_before
    assert pair.repo.read_head("system/persona.md") == persona_before
    assert len(extractor.log) == 2 and any("system/" in line for line in result.notes)
    assert "system/" not in run_git(pair.root, "log", "--author=memfs-dream", "--name-only",
                                    "--format=")


def test_a_failed_extraction_leaves_the_window_pending_and_logs(pair: MemoryPair) -> None:
    from memfs.errors import LLMError

    event = chat(pair, LINES)
    head = pair.repo.head()

    def broken(window: object, cards: object, summary: str, now: dt.datetime) -> Extraction:
        raise LLMError("dream extraction: the model's answer was not valid JSON twice")

    [result] = run_pending(pair, extractor=broken, now=NOW).results

    assert result.status == "failed"
    [still] = pending_events(pair.root)
    assert still.id == event.id and still.attempts == 1
    assert still.last_error is not None and "not valid JSON" in still.last_error
    assert "not valid JSON" in dream_log(pair)
    assert pair.repo.head() == head
    assert run_git(pair.root, "branch", "--list", "dream/*").strip() == ""
    assert worktrees_left(pair.root) == []


def test_invalid_model_json_twice_keeps_the_window_pending(pair: MemoryPair) -> None:
    from tests.conftest import FakeLLM

    chat(pair, LINES)
    llm = FakeLLM(default="this is not json {")
    llm.enqueue(tool={"name": "record_dream", "input": {"ops": "nope"}})
    llm.enqueue(tool={"name": "record_dream", "input": {"story": 3}})

    [result] = run_pending(pair, llm, now=NOW).results

    assert result.status == "failed"
    assert len(llm.calls) == 2  # one attempt, one repair, then give up
    assert pending_events(pair.root)[0].attempts == 1
    assert result.error is not None and result.error in dream_log(pair)
    assert pair.cards() == []


def test_model_ops_on_unknown_ids_or_system_are_dropped_and_logged(pair: MemoryPair) -> None:
    from tests.conftest import FakeLLM

    chat(pair, LINES)
    pins_before = pair.repo.read_head("system/pins.md")
    llm = FakeLLM()
    llm.enqueue(tool={"name": "record_dream", "input": {"story": "Alex teaches now.", "ops": [
        {"op": "supersede", "old_id": "c-ghost1", "type": "fact",
         "body": "The user is a teacher.", "entities": ["user"], "turns": [0]},
        {"op": "write", "path": "system/pins.md", "type": "boundary",
         "body": "Never mention peanuts.", "entities": ["user"], "turns": [0]},
        {"op": "write", "type": "fact", "body": "The user has a dog called Rex.",
         "entities": ["user", "Rex"], "salience": 0.6, "turns": [2]},
    ]}})

    [result] = run_pending(pair, llm, now=NOW).results

    assert result.status == "merged"
    assert [c.body for c in pair.cards()] == ["The user has a dog called Rex."]
    assert pair.repo.read_head("system/pins.md") == pins_before
    log = dream_log(pair)
    assert "c-ghost1" in log and "'path'" in log
    assert len(result.notes) == 2


def test_the_dream_commits_its_history_and_a_refused_commit_stays_pending(pair: MemoryPair) -> None:
    """The turn runs no git: the dream commits the history it reads. When the pair's hook
    refuses that commit (a hand-broken line), the dream fails and the window stays pending."""
    from memfs.compaction import write_event
    from memfs.history import append, iter_messages

    append(pair.root, "s-20261106-01", "user", "never committed", NOW)
    event = write_event(pair.root, list(iter_messages(pair.root)), "test", NOW)
    path = pair.root / "history" / "s-20261106-01.jsonl"
    good = path.read_text()
    path.write_text(good + "not json\n")

    [result] = run_pending(pair, extractor=ScriptedExtractor([]), now=NOW).results

    assert result.status == "failed" and "not valid JSON" in (result.error or "")
    assert pending_events(pair.root)[0].id == event.id
    path.write_text(good)
    [result] = run_pending(pair, extractor=ScriptedExtractor([]), now=NOW).results
    assert result.status == "merged" and pending_events(pair.root) == []
    assert pair.repo.read_head("history/s-20261106-01.jsonl") == good


def test_an_event_already_merged_is_not_dreamed_twice(pair: MemoryPair) -> None:
    """A dream killed after its merge but before deleting the event file."""
    event = chat(pair, LINES)
    first = run_pending(pair, extractor=ScriptedExtractor([write_op("Teacher.", [0])]), now=NOW)
    save_event(pair.root, event)  # the file as the killed process left it
    extractor = ScriptedExtractor([write_op("Teacher again.", [0])])

    [result] = run_pending(pair, extractor=extractor, now=NOW).results

    assert result.status == "already-dreamed"
    assert result.merge == first.results[0].merge
    assert extractor.calls == [] and pending_events(pair.root) == []
    assert len([e for e in pair.log() if e.is_dream]) == 1


def test_a_window_with_nothing_to_keep_still_records_a_dream(pair: MemoryPair) -> None:
    event = chat(pair, ["hi", "hello"])

    merges = dream_pending_with(pair, ScriptedExtractor([], summary=""))

    entry = pair.log(1)[0]
    assert merges == [entry.sha] and entry.is_dream
    assert entry.subject == "dream: nothing new to keep"
    assert entry.trailers["Memfs-Event"] == event.id


def dream_pending_with(pair: MemoryPair, extractor: ScriptedExtractor) -> list[str]:
    run = run_pending(pair, extractor=extractor, now=NOW)
    return [r.merge for r in run.results if r.merge]


def test_dream_pending_takes_just_the_pair_and_uses_the_offline_rules(pair: MemoryPair) -> None:
    chat(pair, ["My name is Alex and I have a cat called Miso.", "Hello Alex!"])

    merges = pair.dream()

    assert len(merges) == 1 and pair.log(1)[0].sha == merges[0]
    assert pending_events(pair.root) == []


def test_merge_subject_counts_each_kind() -> None:
    subjects = ["card: write c-1 'a'", "card: write c-2 'b'", "card: expire c-3",
                "summary: rewrite"]
    assert merge_subject(subjects) == "2 new cards, 1 expired, summary rewritten"
    assert merge_subject([]) == "nothing new to keep"


def test_memfs_dream_cli_reports_nothing_pending_and_runs_windows(
        pair: MemoryPair, run_cli: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from memfs.agent.dream import runner

    result = run_cli("-u", "alex", "-c", "mira", "dream")  # type: ignore[operator]
    assert result.code == 0 and "nothing pending" in result.out
    chat(pair, LINES)
    scripted = ScriptedExtractor([write_op("The user works as a teacher.", [0])])
    monkeypatch.setattr(runner, "make_extractor", lambda llm, pair=None: scripted)

    result = run_cli("-u", "alex", "-c", "mira", "dream", "--json")  # type: ignore[operator]

    data = json.loads(result.out)
    assert result.code == 0 and data["busy"] is False
    [dream] = data["dreams"]
    assert dream["status"] == "merged" and dream["merge"] == pair.repo.head()
    assert dream["commits"][0].startswith("card: write c-")


def worktrees_left(root: Path) -> list[str]:
    folder = root / ".memfs" / "worktrees"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
