"""Pins and the history of memory, through the CLI as a person uses them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memfs.store import MemoryPair


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def test_pin_add_ls_rm_each_one_user_commit_with_trailers(run_cli, isolated_env: Path) -> None:
    base = ("-u", "alex", "-c", "mira")
    assert run_cli(*base, "init").code == 0
    assert run_cli(*base, "pin", "add", "Allergic to peanuts").code == 0
    assert run_cli(*base, "pin", "add", "Never call me Al").code == 0
    listed = run_cli(*base, "pin", "ls")
    assert "1. Allergic to peanuts" in listed.out and "2. Never call me Al" in listed.out
    assert run_cli(*base, "pin", "rm", "1").code == 0
    assert run_cli(*base, "pin", "ls", "--json").json() == {"pins": [{"n": 1, "text": "Never call me Al"}]}
    root = isolated_env / "alex" / "mira"
    authors = git(root, "log", "--format=%an|%s").splitlines()
    assert authors[:3] == ["user|pin: remove 'Allergic to peanuts'", "user|pin: add 'Never call me Al'",
                           "user|pin: add 'Allergic to peanuts'"]
    assert "Memfs-Actor: user" in git(root, "log", "-1", "--format=%B")
    assert git(root, "status", "--porcelain") == ""


def test_pin_rm_out_of_range_is_bad_input(run_cli) -> None:
    run_cli("-u", "alex", "-c", "mira", "init")
    result = run_cli("-u", "alex", "-c", "mira", "pin", "rm", "3")
    assert result.code == 2 and "there is no pin 3" in result.err


def test_commands_on_a_missing_pair_say_run_init(run_cli) -> None:
    result = run_cli("-u", "nobody", "-c", "mira", "pin", "ls")
    assert result.code == 2 and "memfs init" in result.err


def _editor(tmp_path: Path, script: str) -> str:
    path = tmp_path / "editor.py"
    path.write_text(f"import sys, pathlib\np = pathlib.Path(sys.argv[1])\n{script}\n")
    return f"{sys.executable} {path}"


def test_pin_edit_commits_a_valid_edit(run_cli, tmp_path: Path, monkeypatch, pair: MemoryPair) -> None:
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "p.write_text(p.read_text() + '- Lives in Leeds\\n')"))
    result = run_cli("-u", "alex", "-c", "mira", "pin", "edit")
    assert result.code == 0, result.err
    assert pair.pins() == ["Lives in Leeds"]
    assert pair.log(1)[0].subject == "pin: edit pins"


def test_pin_edit_keeps_an_invalid_file_as_saved_and_commits_nothing(
        run_cli, tmp_path: Path, monkeypatch, pair: MemoryPair) -> None:
    before = pair.repo.head()
    monkeypatch.setenv("EDITOR", _editor(tmp_path, "p.write_text('# Pins\\n\\njust a paragraph\\n')"))
    result = run_cli("-u", "alex", "-c", "mira", "pin", "edit")
    assert result.code == 2
    assert "system/pins.md" in result.err and "not a list item" in result.err
    assert (pair.root / "system/pins.md").read_text() == "# Pins\n\njust a paragraph\n"
    assert pair.repo.head() == before


def test_log_diff_show_and_revert_of_a_revert(run_cli, pair: MemoryPair) -> None:
    base = ("-u", "alex", "-c", "mira")
    pair.pin("Allergic to peanuts")
    added = pair.repo.head()
    assert "+- Allergic to peanuts" in run_cli(*base, "diff", added).out
    assert "pin: add 'Allergic to peanuts'" in run_cli(*base, "show", added).out
    log = run_cli(*base, "log", "--json").json()["commits"]
    assert log[0]["sha"] == added and log[0]["author"] == "user" and log[0]["kind"] == "pin"
    assert run_cli(*base, "revert", added).code == 0
    assert pair.pins() == []
    assert run_cli(*base, "revert", "HEAD").code == 0
    assert pair.pins() == ["Allergic to peanuts"]
    subjects = [e.subject for e in pair.log(3)]
    assert subjects[0].startswith("revert: revert: pin: add")


def test_conflicting_revert_exits_1_and_leaves_repo_clean(run_cli, pair: MemoryPair) -> None:
    from memfs.gitio import USER
    from tests.conftest import card_text

    first = pair.repo.commit({"cards/c-x.md": card_text("c-x", "The user likes tea.")},
                             "card", "write c-x", USER)
    pair.repo.commit({"cards/c-x.md": card_text("c-x", "The user likes green tea.")},
                     "edit", "update cards/c-x.md", USER)
    head = pair.repo.head()
    result = run_cli("-u", "alex", "-c", "mira", "revert", first)
    assert result.code == 1 and "conflicts" in result.err
    assert pair.repo.head() == head
    assert git(pair.root, "status", "--porcelain") == ""
    assert not (pair.root / ".git" / "REVERT_HEAD").exists()


def test_unknown_revision_is_bad_input(run_cli, pair: MemoryPair) -> None:
    result = run_cli("-u", "alex", "-c", "mira", "revert", "no-such-rev")
    assert result.code == 2 and "no such revision" in result.err


@pytest.mark.parametrize("args", [["log"], ["pin", "ls"], ["card", "ls"], ["check"], ["diff"],
                                   ["init"], ["show", "HEAD"], ["revert", "HEAD"]])
def test_commands_that_do_not_search_never_import_torch(args: list[str], isolated_env: Path) -> None:
    from memfs.app import MemoryStore

    pair = MemoryStore(isolated_env).pair("alex", "mira")
    pair.pin("x")
    argv = ["-u", "alex", "-c", "mira", *args]
    code = (f"import sys; from memfs.cli import main; rc = main({argv!r}); "
            "bad = [m for m in ('torch', 'sentence_transformers') if m in sys.modules]; "
            "print(rc, bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith("[]")


def test_revert_refuses_to_sweep_in_staged_changes(run_cli, pair: MemoryPair) -> None:
    pair.pin("one")
    head = pair.repo.head()
    (pair.root / "summary.md").write_text("my own staged text\n")
    subprocess.run(["git", "add", "summary.md"], cwd=pair.root, check=True)
    result = run_cli("-u", "alex", "-c", "mira", "revert", "HEAD")
    assert result.code == 1 and "staged changes in summary.md" in result.err
    assert pair.repo.head() == head
    assert git(pair.root, "diff", "--cached", "--name-only") == "summary.md\n", "the user's staging is kept"


def test_pin_add_refuses_to_build_on_an_invalid_hand_edit(run_cli, pair: MemoryPair) -> None:
    pair.pin("A")
    head = pair.repo.head()
    (pair.root / "system" / "pins.md").write_text("# Pins\n\nnot a list\n\n- A\n")
    result = run_cli("-u", "alex", "-c", "mira", "pin", "add", "B")
    assert result.code == 2
    assert result.err.count("\n") == 1 and "system/pins.md: line 3: not a list item" in result.err
    assert (pair.root / "system" / "pins.md").read_text() == "# Pins\n\nnot a list\n\n- A\n"
    assert pair.repo.head() == head
    assert git(pair.root, "diff", "--cached", "--name-only") == ""


def test_a_hook_refusal_is_one_line_and_leaves_nothing_staged(pair: MemoryPair) -> None:
    from memfs.errors import BadInputError
    from memfs.gitio import USER

    with pytest.raises(BadInputError) as info:
        pair.repo.commit({"cards/c-bad.md": "---\nid: c-bad\ntype: nope\nstatus: active\n"
                          "created: 2026-01-01\n---\nx\n"}, "card", "bad", USER)
    assert "\n" not in str(info.value) and "cards/c-bad.md: type: must be one of" in str(info.value)
    assert git(pair.root, "diff", "--cached", "--name-only") == ""


def test_an_unusable_home_is_one_clear_line(run_cli, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run_cli("--home", str(blocker / "home"), "-u", "a", "-c", "b", "init")
    assert result.code == 2 and result.err.count("\n") == 1 and "cannot create" in result.err


def test_diff_without_a_revision_shows_new_hand_written_cards(run_cli, pair: MemoryPair) -> None:
    from tests.conftest import card_text

    (pair.root / "cards" / "c-new.md").write_text(card_text("c-new", "The user likes tea."))
    out = run_cli("-u", "alex", "-c", "mira", "diff").out
    assert "b/cards/c-new.md" in out and "+The user likes tea." in out
