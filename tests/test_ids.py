"""Ids are checked before any file is touched: no pair can name another's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.errors import InvalidIdError
from memfs.ids import check_id

BAD_IDS = ["../x", "a/b", ".git", "/abs/path", "", "x" * 65, "nul\0byte", "..", ".", "-dash",
           "sp ace", "a\\b", "ünïcode"]


@pytest.mark.parametrize("bad", BAD_IDS)
@pytest.mark.parametrize("slot", ["-u", "-c"])
def test_init_refuses_bad_ids_and_creates_nothing(bad: str, slot: str, run_cli, tmp_path: Path,
                                                  isolated_env: Path) -> None:
    args = {"-u": "alex", "-c": "mira"}
    args[slot] = bad
    result = run_cli("-u", args["-u"], "-c", args["-c"], "init")
    assert result.code == 2
    assert result.err.count("\n") == 1 and "invalid" in result.err
    assert "Traceback" not in result.err
    assert not isolated_env.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_64_characters_is_the_limit() -> None:
    assert check_id("a" * 64) == "a" * 64
    with pytest.raises(InvalidIdError, match="longer than 64"):
        check_id("a" * 65)


def test_store_refuses_bad_ids_in_the_python_api(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "h")
    with pytest.raises(InvalidIdError):
        store.pair("../evil", "mira")
    assert not (tmp_path / "h").exists()


def test_card_ids_cannot_escape_cards_folder(pair) -> None:
    from memfs.errors import BadInputError
    from memfs.gitio import USER

    with pytest.raises(BadInputError):
        pair.repo.commit({"cards/../system/pins.md": "x"}, "card", "escape", USER)
    with pytest.raises(BadInputError):
        pair.repo.commit({"../outside.md": "x"}, "card", "escape", USER)
    assert not (pair.root.parent / "outside.md").exists()
