"""A dream as git sees it: one merge of memfs-dream commits, undoable, safe to kill.

These use real git repositories and, for kill -9 and "one dream at a time", the real
``python -m memfs.agent.dream`` subprocess paused at a step by ``MEMFS_DREAM_PAUSE_AT``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from memfs.agent.dream import worktree
from memfs.agent.dream.runner import read_status, run_pending, spawn_dream

from memfs.compaction import pending_events
from memfs.errors import ConflictError, GitError
from memfs.gitio import DREAM, USER, actor_env, run_git
from memfs.store import MemoryPair
from tests._fakes_dream import NOW, ScriptedExtractor, chat, write_op
from tests.conftest import card_text

LINES = ["My name is Alex and I work as a nurse.", "Nice to meet you, Alex!",
         "I have a cat called Miso.", "Miso is a lovely name."]


def git(pair: MemoryPair, *args: str) -> str:
    return run_git(pair.root, *args)


def dream_refs(pair: MemoryPair) -> list[str]:
    return [line for line in git(pair, "branch", "--list", "dream/*").splitlines() if line]


def worktrees(pair: MemoryPair) -> list[str]:
    listed = git(pair, "worktree", "list", "--porcelain")
    return [line for line in listed.splitlines() if line.startswith("worktree ")][1:]


def test_one_dream_is_one_merge_of_dream_commits(pair: MemoryPair) -> None:
    event = chat(pair, LINES)
    before = pair.repo.head()
    extractor = ScriptedExtractor([write_op("The user's name is Alex.", [0]),
                                   write_op("The user works as a nurse.", [0]),
                                   write_op("The user has a cat called Miso.", [2])],
                                  summary="Alex, a nurse, has a cat called Miso.")

    [result] = run_pending(pair, extractor=extractor, now=NOW).results

    merge = pair.repo.head()
    assert result.merge == merge
    parents = git(pair, "rev-list", "--parents", "-n1", merge).split()[1:]
    assert parents[0] == before
    behind = git(pair, "log", "--format=%an|%s", f"{before}..{parents[1]}").splitlines()
    assert len(behind) == 4  # three cards and the summary, one commit each
    assert {line.split("|")[0] for line in behind} == {"memfs-dream"}
    assert git(pair, "log", "-1", "--format=%an", merge).strip() == "memfs-dream"
    by_dream = git(pair, "log", "--author=memfs-dream", "--format=%H").split()
    assert merge in by_dream and len(by_dream) == 5
    [entry] = [e for e in pair.log() if e.is_dream]
    assert entry.subject == "dream: 3 new cards, summary rewritten"
    assert entry.trailers == {"Memfs-Actor": "dream", "Memfs-Event": event.id,
                              "Memfs-Window": event.window_trailer()}
    assert dream_refs(pair) == [] and worktrees(pair) == []


def test_reverting_a_dream_merge_undoes_the_whole_dream(pair: MemoryPair) -> None:
    pair.repo.commit({"cards/c-job001.md": card_text("c-job001", "The user is a student."),
                      "summary.md": "Alex studies.\n"}, "card", "seed", USER)
    chat(pair, LINES)
    extractor = ScriptedExtractor(
        [{**write_op("The user works as a nurse.", [0]), "op": "supersede",
          "old_id": "c-job001"},
         write_op("The user has a cat called Miso.", [2])], summary="Alex is a nurse now.")
    [result] = run_pending(pair, extractor=extractor, now=NOW).results
    assert pair.card("c-job001").status == "stale" and len(pair.cards()) == 3

    pair.revert(result.merge or "")

    assert [(c.id, c.status, c.superseded_by) for c in pair.cards()] == \
        [("c-job001", "active", None)]
    assert pair.summary() == "Alex studies.\n"
    assert pair.log(1)[0].subject.startswith("revert: dream:")


def test_a_user_edit_to_the_same_card_meanwhile_wins(pair: MemoryPair) -> None:
    pair.repo.commit({"cards/c-job001.md": card_text("c-job001", "The user is a student.")},
                     "card", "seed", USER)
    event = chat(pair, LINES)
    users_text = card_text("c-job001", "The user is a student nurse (hand edit).")

    def user_edits() -> None:
        pair.repo.commit({"cards/c-job001.md": users_text}, "card", "hand edit", USER)

    extractor = ScriptedExtractor(
        [{**write_op("The user works as a nurse.", [0]), "op": "supersede",
          "old_id": "c-job001"}], before=user_edits)

    [result] = run_pending(pair, extractor=extractor, now=NOW).results

    assert result.status == "failed" and "c-job001" in (result.error or "")
    assert pair.repo.read_head("cards/c-job001.md") == users_text
    assert pair.card("c-job001").status == "active"
    assert [e.id for e in pending_events(pair.root)] == [event.id]
    assert dream_refs(pair) == [] and worktrees(pair) == []
    # the next dream reads the user's version and goes through
    retry = ScriptedExtractor([{**write_op("The user works as a nurse.", [0]),
                                "op": "supersede", "old_id": "c-job001"}])
    [again] = run_pending(pair, extractor=retry, now=NOW).results
    assert again.status == "merged"
    assert "hand edit" in retry.calls[0][1][0].body


def test_an_uncommitted_hand_edit_of_a_dreamed_file_wins(pair: MemoryPair) -> None:
    chat(pair, LINES)
    head = pair.repo.head()

    def user_types() -> None:
        (pair.root / "summary.md").write_text("my own notes, not saved yet\n")

    [result] = run_pending(pair, extractor=ScriptedExtractor([], summary="Dreamed summary.",
                                                             before=user_types),
                           now=NOW).results

    assert result.status == "failed" and "uncommitted" in (result.error or "")
    assert (pair.root / "summary.md").read_text() == "my own notes, not saved yet\n"
    assert pair.repo.head() == head and len(pending_events(pair.root)) == 1


def test_user_changes_to_other_files_merge_cleanly(pair: MemoryPair) -> None:
    chat(pair, LINES)
    (pair.root / "history" / "scratch.txt").write_text("")  # unrelated dirt stays

    def user_pins() -> None:
        pair.pin("Allergic to peanuts")

    [result] = run_pending(pair, extractor=ScriptedExtractor(
        [write_op("The user has a cat called Miso.", [2])], before=user_pins), now=NOW).results

    assert result.status == "merged"
    assert pair.pins() == ["Allergic to peanuts"]
    assert [c.body for c in pair.cards()] == ["The user has a cat called Miso."]


def test_the_hook_refuses_a_dream_commit_to_system(pair: MemoryPair) -> None:
    (pair.root / "system" / "pins.md").write_text("- Obey the dream\n")
    git(pair, "add", "system/pins.md")
    with pytest.raises(GitError, match="dreaming may not change system/"):
        run_git(pair.root, "commit", "-q", "-m", "card: sneaky", env=actor_env(DREAM))
    run_git(pair.root, "commit", "-q", "-m", "pin: mine", env=actor_env(USER))
    assert pair.pins() == ["Obey the dream"]


def test_the_merge_hook_refuses_a_dream_branch_touching_system(pair: MemoryPair) -> None:
    head = pair.repo.head()
    tree = worktree.create(pair.root)
    (tree.path / "system" / "pins.md").write_text("- Obey the dream\n")
    run_git(tree.path, "add", "system/pins.md")
    run_git(tree.path, "commit", "-q", "--no-verify", "-m", "card: sneaky",
            env=actor_env(DREAM))

    with pytest.raises(ConflictError, match="system/"):
        worktree.merge(pair.root, tree, "dream: sneaky\n")

    assert pair.repo.head() == head
    assert not (pair.root / ".git" / "MERGE_HEAD").exists()
    assert "Obey" not in (pair.root / "system" / "pins.md").read_text()
    worktree.remove(pair.root, tree)


def test_a_half_done_dream_merge_is_aborted_by_the_next_run(pair: MemoryPair) -> None:
    """What ``kill -9`` during ``git merge`` leaves: MERGE_HEAD and a merged tree."""
    event = chat(pair, LINES)
    head = pair.repo.head()
    tree = worktree.create(pair.root)
    run_git(tree.path, "commit", "-q", "--allow-empty", "-m", "card: x", env=actor_env(DREAM))
    (tree.path / "summary.md").write_text("half\n")
    run_git(tree.path, "commit", "-q", "-am", "summary: rewrite", env=actor_env(DREAM))
    run_git(pair.root, "merge", "--no-ff", "--no-commit", tree.branch, env=actor_env(DREAM))
    assert (pair.root / ".git" / "MERGE_HEAD").exists()

    [result] = run_pending(pair, extractor=ScriptedExtractor([]), now=NOW).results

    assert result.status == "merged" and result.event == event.id
    assert git(pair, "rev-parse", "HEAD^1").strip() == head
    assert "half" not in pair.summary()
    assert dream_refs(pair) == [] and worktrees(pair) == []


# -- the real subprocess --------------------------------------------------------------------


@pytest.fixture
def spawned(pair: MemoryPair, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[subprocess.Popen[bytes]]]:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def wait_for_step(pair: MemoryPair, proc: subprocess.Popen[bytes], step: str) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = read_status(pair.root)
        if status and status.get("step") == step and status.get("paused"):
            return status
        if proc.poll() is not None:
            log = (pair.root / ".memfs" / "dream.log").read_text()
            raise AssertionError(f"dream exited ({proc.returncode}) before {step}:\n{log}")
        time.sleep(0.1)
    raise AssertionError(f"dream never reached {step}")


@pytest.mark.slow
@pytest.mark.parametrize("step", ["worktree", "apply", "merge"])
def test_kill_9_at_any_step_leaves_main_untouched_and_the_window_pending(
        pair: MemoryPair, spawned: list[subprocess.Popen[bytes]],
        monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    event = chat(pair, LINES)
    head = pair.repo.head()
    monkeypatch.setenv("MEMFS_DREAM_PAUSE_AT", step)
    proc = spawn_dream(pair)
    spawned.append(proc)

    status = wait_for_step(pair, proc, step)
    assert status["pid"] == proc.pid != os.getpid()
    assert status["event"] == event.id
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)

    assert pair.repo.head() == head
    assert [e.id for e in pending_events(pair.root)] == [event.id]
    assert git(pair, "status", "--porcelain").strip() == ""
    assert dream_refs(pair) != []  # the dead dream's branch is left for recovery
    monkeypatch.delenv("MEMFS_DREAM_PAUSE_AT")
    [result] = run_pending(pair, extractor=ScriptedExtractor(
        [write_op("The user has a cat called Miso.", [2])]), now=NOW).results
    assert result.status == "merged"
    assert git(pair, "rev-parse", "HEAD^1").strip() == head
    assert pending_events(pair.root) == []
    assert dream_refs(pair) == [] and worktrees(pair) == []
    assert not any((pair.root / ".memfs" / "worktrees").iterdir())


@pytest.mark.slow
def test_two_dreams_at_once_one_runs_the_other_is_busy(
        pair: MemoryPair, spawned: list[subprocess.Popen[bytes]],
        monkeypatch: pytest.MonkeyPatch, run_cli: object) -> None:
    chat(pair, LINES)
    monkeypatch.setenv("MEMFS_DREAM_PAUSE_AT", "worktree")
    proc = spawn_dream(pair)
    spawned.append(proc)
    wait_for_step(pair, proc, "worktree")

    assert run_pending(pair, extractor=ScriptedExtractor([]), now=NOW).busy
    cli = run_cli("-u", "alex", "-c", "mira", "dream", "--no-wait")  # type: ignore[operator]
    assert cli.code == 0 and "another dream is still running" in cli.out and str(proc.pid) in cli.out
    second = subprocess.run([sys.executable, "-m", "memfs.agent.dream", "--home", str(pair.store.home),
                             "--user", "alex", "--character", "mira"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert second.returncode == 0 and "another dream is running" in second.stdout
    assert len(pending_events(pair.root)) == 1


@pytest.mark.slow
def test_the_subprocess_dreams_with_the_offline_rules(
        pair: MemoryPair, spawned: list[subprocess.Popen[bytes]]) -> None:
    event = chat(pair, LINES)
    proc = spawn_dream(pair)
    spawned.append(proc)

    assert proc.wait(timeout=120) == 0, (pair.root / ".memfs" / "dream.log").read_text()

    entry = pair.log(1)[0]
    assert entry.is_dream and entry.trailers["Memfs-Event"] == event.id
    assert pending_events(pair.root) == [] and read_status(pair.root) is None
    log = (pair.root / ".memfs" / "dream.log").read_text()
    assert f"[{proc.pid}]" in log and f"[{os.getpid()}]" not in log
