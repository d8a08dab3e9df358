"""What a new user tripped over, each fixed: pins edited in an editor, pin reverts,
usage errors, listings that hid uncommitted edits, dreams that returned while another ran,
compactions nobody reported, a persona that named the user id."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.store import MemoryPair
from tests.conftest import FakeLLM

ALEX = ("-u", "alex", "-c", "mira")


def _editor_writing(tmp_path: Path, text: str) -> str:
    script = tmp_path / "editor.py"
    script.write_text(f"import sys\nopen(sys.argv[1], 'w').write({text!r})\n")
    return f"{sys.executable} {script}"


def test_pin_edit_refuses_a_plain_line_under_a_pin(pair: MemoryPair, run_cli, tmp_path: Path,
                                                   monkeypatch) -> None:
    pair.pin("Allergic to peanuts")
    head = pair.repo.head()
    saved = "- Allergic to peanuts\nVegetarian since 2019\n"
    monkeypatch.setenv("EDITOR", _editor_writing(tmp_path, saved))
    result = run_cli(*ALEX, "pin", "edit")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "line 2: not a list item" in result.err
    assert pair.repo.head() == head, "nothing committed"
    assert (pair.root / "system" / "pins.md").read_text() == saved, "the edit is kept as saved"


def test_pin_edit_accepts_an_indented_continuation(pair: MemoryPair, run_cli, tmp_path: Path,
                                                   monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", _editor_writing(tmp_path, "- Allergic to peanuts,\n  carries an EpiPen\n"))
    assert run_cli(*ALEX, "pin", "edit").code == 0
    assert pair.pins() == ["Allergic to peanuts, carries an EpiPen"]


def test_reverting_an_older_pin_commit_removes_that_pin_only(pair: MemoryPair, run_cli) -> None:
    first = pair.pin("Allergic to peanuts")
    pair.pin("Sister is called Maya")
    pair.pin("Prefers tea to coffee")
    result = run_cli(*ALEX, "revert", first[:10])
    assert result.code == 0, result.err
    assert pair.pins() == ["Sister is called Maya", "Prefers tea to coffee"]
    entry = pair.log(1)[0]
    assert entry.subject.startswith("revert: pin: add") and entry.author == "user"
    assert run_cli(*ALEX, "revert", entry.sha[:10]).code == 0, "a revert can be reverted"
    assert sorted(pair.pins()) == ["Allergic to peanuts", "Prefers tea to coffee",
                                   "Sister is called Maya"]


def test_reverting_a_pin_removal_puts_the_pin_back(pair: MemoryPair, run_cli) -> None:
    pair.pin("Allergic to peanuts")
    pair.pin("Sister is called Maya")
    pair.unpin(1)
    removal = pair.log(1)[0].sha
    pair.pin("Prefers tea to coffee")
    assert run_cli(*ALEX, "revert", removal[:10]).code == 0
    assert sorted(pair.pins()) == ["Allergic to peanuts", "Prefers tea to coffee",
                                   "Sister is called Maya"]


@pytest.mark.parametrize("args", [
    ("pin", "rm", "x"), ("nope",), ("pin", "add"), ("log", "-n", "abc"),
    ("card", "ls", "--status", "wrong"), ("search",),
])
def test_usage_errors_are_one_line_and_exit_2(pair: MemoryPair, run_cli, args) -> None:
    result = run_cli(*ALEX, *args)
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memfs: error: "), result.err


def test_listings_say_when_the_working_tree_differs(pair: MemoryPair, run_cli) -> None:
    pair.pin("Allergic to peanuts")
    assert "uncommitted" not in run_cli(*ALEX, "pin", "ls").err
    assert "uncommitted" not in run_cli(*ALEX, "card", "ls").err
    (pair.root / "system" / "pins.md").write_text("- Allergic to peanuts\n- Likes jazz\n")
    (pair.root / "cards" / "c-new.md").write_text("not a card\n")
    pins = run_cli(*ALEX, "pin", "ls")
    assert "Likes jazz" not in pins.out, "shown is committed HEAD, what the model sees"
    assert len(pins.err.strip().splitlines()) == 1 and "system/pins.md" in pins.err
    cards = run_cli(*ALEX, "card", "ls")
    assert "cards/c-new.md" in cards.err and cards.code == 0


def test_ingest_reports_compactions_and_the_dream(pair: MemoryPair, run_cli, tmp_path: Path,
                                                  monkeypatch) -> None:
    monkeypatch.setenv("MEMFS_WINDOW_BUDGET", "60")
    monkeypatch.setenv("MEMFS_DREAM_TRIGGER", "off")
    lines = [f'{{"role": "{"user" if i % 2 == 0 else "assistant"}", "content": "message number {i} '
             f'with a handful of words in it"}}' for i in range(12)]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    result = run_cli(*ALEX, "ingest", str(transcript))
    assert result.code == 0
    assert "compacted:" in result.out and "over its budget of 60" in result.out
    assert "dream: not started: dream_trigger is off" in result.out


def test_dream_says_why_nothing_is_pending_and_compact_evicts_now(pair: MemoryPair, run_cli,
                                                                   monkeypatch) -> None:
    from memfs.turn import TurnOptions, add_messages

    add_messages(pair, [{"role": "user", "content": "my dog is called Rex"},
                        {"role": "assistant", "content": "Rex is a great name"},
                        {"role": "user", "content": "he is a beagle"},
                        {"role": "assistant", "content": "beagles are lovely"}],
                 options=TurnOptions(dream="none"))
    nothing = run_cli(*ALEX, "dream")
    assert "nothing pending" in nothing.out and "4 message(s)" in nothing.out
    assert "2500-token budget" in nothing.out and "memfs compact" in nothing.out
    monkeypatch.setenv("MEMFS_DREAM_TRIGGER", "off")
    compacted = run_cli(*ALEX, "compact")
    assert compacted.code == 0 and "compacted: 2 messages left the window" in compacted.out
    dreamed = run_cli(*ALEX, "dream", "--json")
    assert [d["status"] for d in dreamed.json()["dreams"]] == ["merged"]


def _paused_dream(pair: MemoryPair, seconds: float) -> subprocess.Popen[bytes]:
    from memfs.turn import TurnOptions, add_messages, compact_now

    add_messages(pair, [{"role": "user", "content": "I started a pottery class on Tuesdays"},
                        {"role": "assistant", "content": "Pottery sounds fun"},
                        {"role": "user", "content": "thanks"},
                        {"role": "assistant", "content": "any time"}],
                 options=TurnOptions(dream="none"))
    compact_now(pair, dream="none")
    env = {**os.environ, "MEMFS_DREAM_PAUSE_AT": "apply", "MEMFS_DREAM_PAUSE_SECONDS": str(seconds)}
    proc = subprocess.Popen([sys.executable, "-m", "memfs.agent.dream", "--home",
                             str(pair.store.home), "--user", pair.user, "--character",
                             pair.character], env=env)
    deadline = time.monotonic() + 20
    while not (pair.root / ".memfs" / "dream-status.json").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the dream did not start"
        time.sleep(0.05)
    return proc


def test_dream_waits_for_a_running_dream_and_reports_its_merge(pair: MemoryPair) -> None:
    proc = _paused_dream(pair, 1.5)
    try:
        merges = pair.dream(wait=30)
    finally:
        proc.wait(timeout=30)
    assert len(merges) == 1 and pair.log(1)[0].sha == merges[0]
    assert pair.log(1)[0].author == "memfs-dream"


def test_dream_no_wait_returns_at_once_while_another_runs(pair: MemoryPair, run_cli) -> None:
    proc = _paused_dream(pair, 3)
    try:
        started = time.monotonic()
        result = run_cli(*ALEX, "dream", "--no-wait")
        assert time.monotonic() - started < 2
        assert "another dream is still running" in result.out
    finally:
        proc.wait(timeout=30)


def test_the_persona_names_the_user_only_by_a_display_name(isolated_env: Path, run_cli) -> None:
    assert run_cli("-u", "you", "-c", "mira", "init").code == 0
    plain = (isolated_env / "you" / "mira" / "system" / "persona.md").read_text()
    assert "You remember what You" not in plain and "companion to You" not in plain
    assert "You are Mira, a warm, attentive companion." in plain
    assert run_cli("-u", "u-4821", "-c", "mira", "init", "--name", "Alex",
                   "--character-name", "Mira Ray").code == 0
    named = (isolated_env / "u-4821" / "mira" / "system" / "persona.md").read_text()
    assert "You are Mira Ray, a warm, attentive companion to Alex." in named
    store = MemoryStore(isolated_env, llm=FakeLLM())
    api = store.pair("sam", "atlas", user_name="Sam")
    assert "companion to Sam" in (api.root / "system" / "persona.md").read_text()
    bad = run_cli("-u", "kim", "-c", "mira", "init", "--name", " ")
    assert bad.code == 2 and not (isolated_env / "kim" / "mira").exists()
