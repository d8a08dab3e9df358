"""The pre-commit hook and `memfs check` refuse the same things with the same words."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memfs.store import MemoryPair
from tests.conftest import card_text


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def hand_commit(root: Path, path: str, text: str, author: str = "someone") -> subprocess.CompletedProcess[str]:
    full = root / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    git(root, "add", path)
    return git(root, "commit", "-m", "edit: by hand", env={"GIT_AUTHOR_NAME": author})


def test_hand_commit_of_a_valid_card_is_accepted(pair: MemoryPair) -> None:
    result = hand_commit(pair.root, "cards/c-ok.md", card_text("c-ok", "The user likes tea."))
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr and "memfs" not in result.stderr, result.stderr
    assert [c.id for c in pair.cards()] == ["c-ok"]


def test_an_old_hook_is_refreshed_and_a_users_own_hook_is_left_alone(pair: MemoryPair) -> None:
    from memfs import hooks

    ours = pair.root / ".git" / "hooks" / "pre-commit"
    ours.write_text("#!/bin/sh\n# memfs hook v1: validates memory files\nexit 0\n")
    theirs = pair.root / ".git" / "hooks" / "pre-merge-commit"
    theirs.write_text("#!/bin/sh\nexit 0\n")
    hooks.install(pair.root / ".git")
    assert hooks.MARKER in ours.read_text()
    assert theirs.read_text() == "#!/bin/sh\nexit 0\n"


def test_hand_commit_of_a_broken_card_is_refused_with_the_check_message(pair: MemoryPair, run_cli) -> None:
    text = card_text("c-bad", "x", type="rumour")
    head = pair.repo.head()
    result = hand_commit(pair.root, "cards/c-bad.md", text)
    assert result.returncode != 0
    assert "cards/c-bad.md: type: must be one of" in result.stderr
    assert pair.repo.head() == head
    check = run_cli("-u", "alex", "-c", "mira", "check")
    assert check.code == 1
    assert "cards/c-bad.md: type: must be one of" in check.out


def test_hook_refuses_card_whose_id_does_not_match_its_file(pair: MemoryPair) -> None:
    result = hand_commit(pair.root, "cards/c-one.md", card_text("c-two", "x"))
    assert result.returncode != 0 and "does not match the file name" in result.stderr


def test_hook_refuses_dream_commit_touching_system(pair: MemoryPair) -> None:
    result = hand_commit(pair.root, "system/pins.md", "# Pins\n\n- sneaky\n", author="memfs-dream")
    assert result.returncode != 0
    assert "system/pins.md: dreaming may not change system/" in result.stderr


def test_hook_refuses_pins_file_that_is_not_a_list(pair: MemoryPair) -> None:
    result = hand_commit(pair.root, "system/pins.md", "# Pins\n\nA paragraph, not a pin.\n")
    assert result.returncode != 0 and "not a list item" in result.stderr


def test_hook_refuses_broken_history_lines(pair: MemoryPair) -> None:
    result = hand_commit(pair.root, "history/s-1.jsonl", '{"role": "user"}\n')
    assert result.returncode != 0 and "needs 'role' and 'content'" in result.stderr


def test_user_may_edit_system_by_hand(pair: MemoryPair) -> None:
    result = hand_commit(pair.root, "system/pins.md", "# Pins\n\n- mine\n")
    assert result.returncode == 0, result.stderr


def test_check_lists_every_problem_with_file_and_reason(pair: MemoryPair, run_cli) -> None:
    root = pair.root
    (root / "cards" / "c-a.md").write_text(card_text("c-a", "ok", salience=7))
    (root / "cards" / "c-b.md").write_text("---\nid: c-b\ntype: [fact\n---\nbody\n")
    (root / "cards" / "c-c.md").write_text(card_text("c-c", "fine", superseded_by="c-gone", status="stale"))
    (root / "system" / "pins.md").write_text("# Pins\n\nnot a list\n")
    (root / "history" / "s-x.jsonl").write_text("{not json\n")
    result = run_cli("-u", "alex", "-c", "mira", "check", "--json")
    assert result.code == 1
    problems = {(p["path"], p["reason"].split(":")[0]) for p in result.json()["problems"]}
    assert problems == {
        ("cards/c-a.md", "salience"), ("cards/c-b.md", "front matter"),
        ("cards/c-c.md", "refers to card 'c-gone', which does not exist"),
        ("system/pins.md", "line 3"), ("history/s-x.jsonl", "line 1"),
    }


def test_check_passes_on_a_fresh_pair(run_cli, pair: MemoryPair) -> None:
    result = run_cli("-u", "alex", "-c", "mira", "check")
    assert result.code == 0 and "valid" in result.out
