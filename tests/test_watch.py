"""Hand edits: `memfs watch` commits what people save in their editor.

The first half drives a real watchdog observer over real files in a real pair repository;
the second half calls ``handle_changes`` directly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.errors import ConflictError
from memfs.gitio import run_git
from memfs.repo import PairRepo
from memfs.store import MemoryPair
from memfs.watch import Watcher, WatchReport, handle_changes, watched_path

SETTLE = 0.15

CARD = """---
id: {id}
type: fact
status: active
entities: [user]
created: 2026-11-02T18:04:00Z
salience: 0.5
---
{body}
"""


def wait_until(cond: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met within the timeout")
        time.sleep(0.02)


def git(root: Path, *args: str) -> str:
    return run_git(root, *args)


def subjects(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


def head_text(root: Path, path: str) -> str | None:
    return PairRepo(root).read_head(path)


class Recorder:
    """What the watcher told us, in order."""

    def __init__(self) -> None:
        self.reports: list[WatchReport] = []
        self.errors: list[Exception] = []

    def __call__(self, root: Path, report: WatchReport) -> None:
        self.reports.append(report)

    @property
    def commits(self) -> list[WatchReport]:
        return [r for r in self.reports if r.commit]

    @property
    def problems(self) -> list[str]:
        return [str(p) for r in self.reports for p in r.problems]


@pytest.fixture
def watching(pair: MemoryPair) -> Iterator[tuple[Watcher, Recorder]]:
    recorder = Recorder()
    watcher = Watcher([pair.root], settle=SETTLE, recheck=0.02, on_report=recorder,
                      on_error=lambda root, exc: recorder.errors.append(exc))
    watcher.start()
    assert watcher.wait_idle(5)
    yield watcher, recorder
    watcher.stop()
    watcher.check()
    assert recorder.errors == []


def settle_down(watcher: Watcher) -> None:
    """Let events in flight arrive, then wait for the watcher to finish with them."""
    time.sleep(SETTLE * 2)
    assert watcher.wait_idle(5)


PINS = "# Pins\n\n- Allergic to peanuts\n"


# -- a real watcher over real files ---------------------------------------------------------------

def test_a_save_becomes_one_edit_commit_by_user(pair: MemoryPair, watching) -> None:
    watcher, seen = watching
    before = subjects(pair.root)
    (pair.root / "system/pins.md").write_text(PINS)
    wait_until(lambda: seen.commits)
    settle_down(watcher)
    new = subjects(pair.root)[: len(subjects(pair.root)) - len(before)]
    assert new == ["edit: update system/pins.md"]
    assert git(pair.root, "log", "-1", "--format=%an|%(trailers:key=Memfs-Actor,valueonly)").strip() == "user|user"
    assert head_text(pair.root, "system/pins.md") == PINS
    assert pair.pins() == ["Allergic to peanuts"]
    assert git(pair.root, "status", "--porcelain").strip() == ""


def test_rapid_double_save_commits_the_final_content_never_a_half(pair: MemoryPair,
                                                                  watching) -> None:
    watcher, _ = watching
    pins = pair.root / "system/pins.md"
    first = "# Pins\n\n- Allergic to peanuts\n"
    final = "# Pins\n\n- Allergic to peanuts\n- Sister is called Lin\n"
    pins.write_text(first)
    with pins.open("w") as handle:  # an in-place save, written in two pieces
        handle.write(final[:20])
        handle.flush()
        time.sleep(SETTLE / 3)
        handle.write(final[20:])
    wait_until(lambda: head_text(pair.root, "system/pins.md") == final)
    settle_down(watcher)
    edits = git(pair.root, "log", "--format=%H", "--grep=^edit: update system/pins.md").split()
    assert 1 <= len(edits) <= 2
    assert {pair.repo.read_head("system/pins.md", sha) for sha in edits} <= {first, final}


def test_atomic_rename_save_commits_the_target_and_never_the_temp_file(pair: MemoryPair,
                                                                      watching) -> None:
    watcher, seen = watching
    card = CARD.format(id="c-tea", body="The user drinks green tea every morning.")
    temp = pair.root / "cards" / ".c-tea.md.12345.tmp"
    temp.write_text(card)
    os.replace(temp, pair.root / "cards/c-tea.md")
    wait_until(lambda: seen.commits)
    settle_down(watcher)
    assert subjects(pair.root)[0] == "edit: add cards/c-tea.md"
    everything = git(pair.root, "log", "--format=", "--name-only").split()
    assert not [name for name in everything if name.endswith(".tmp")]
    assert [c.id for c in pair.cards()] == ["c-tea"]


def test_invalid_front_matter_is_not_committed_reported_once_then_the_fix_commits(
        pair: MemoryPair, watching) -> None:
    watcher, seen = watching
    path = pair.root / "cards/c-lin.md"
    broken = CARD.format(id="c-lin", body="Lin is the user's sister.").replace("type: fact",
                                                                                "type: gossip")
    path.write_text(broken)
    wait_until(lambda: seen.problems)
    head = subjects(pair.root)[0]
    path.write_text(broken)  # saved again unchanged: no second complaint
    settle_down(watcher)
    assert seen.problems == [seen.problems[0]]
    assert seen.problems[0].startswith("cards/c-lin.md: type:")
    assert "gossip" in seen.problems[0]
    assert subjects(pair.root)[0] == head
    assert path.read_text() == broken

    path.write_text(broken.replace("type: gossip", "type: relationship"))
    wait_until(lambda: seen.commits)
    assert subjects(pair.root)[0] == "edit: add cards/c-lin.md"
    assert pair.card("c-lin").type == "relationship"


def memfs_cli(pair: MemoryPair, *args: str) -> str:
    """Run ``memfs`` in another process, as a person would in another terminal."""
    done = subprocess.run(
        [sys.executable, "-c", "from memfs.cli import entry; entry()",
         "--home", str(pair.store.home), "-u", pair.user, "-c", pair.character, *args],
        check=False, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_memfs_own_commits_are_not_committed_again(pair: MemoryPair, watching) -> None:
    watcher, seen = watching
    memfs_cli(pair, "pin", "add", "Allergic to peanuts")
    settle_down(watcher)
    assert seen.reports == []
    assert subjects(pair.root)[0] == "pin: add 'Allergic to peanuts'"


def test_a_delete_is_committed(pair: MemoryPair, watching) -> None:
    _, seen = watching
    (pair.root / "cards/c-old.md").write_text(CARD.format(id="c-old", body="Lived in Leeds."))
    wait_until(lambda: seen.commits)
    (pair.root / "cards/c-old.md").unlink()
    wait_until(lambda: len(seen.commits) == 2)
    assert subjects(pair.root)[:2] == ["edit: delete cards/c-old.md", "edit: add cards/c-old.md"]
    assert head_text(pair.root, "cards/c-old.md") is None


def test_a_revert_while_watching_is_not_committed_again(pair: MemoryPair, watching) -> None:
    watcher, seen = watching
    (pair.root / "system/pins.md").write_text(PINS)
    wait_until(lambda: seen.commits)
    settle_down(watcher)
    edit = pair.repo.head()
    # `memfs revert` from another terminal: another process, so the pair lock really excludes.
    memfs_cli(pair, "revert", edit)
    settle_down(watcher)
    assert subjects(pair.root)[:2] == ["revert: edit: update system/pins.md",
                                       "edit: update system/pins.md"]
    assert len(seen.commits) == 1
    assert pair.pins() == []
    # and it keeps working afterwards
    (pair.root / "system/pins.md").write_text(PINS)
    wait_until(lambda: len(seen.commits) == 2)
    assert subjects(pair.root)[0] == "edit: update system/pins.md"


def test_git_checkout_of_an_unsaved_mistake_makes_no_commit(pair: MemoryPair, watching) -> None:
    watcher, seen = watching
    pins = pair.root / "system/pins.md"
    pins.write_text("# Pins\n\nthis is not a list item\n")
    wait_until(lambda: seen.problems)
    head = pair.repo.head()
    git(pair.root, "checkout", "--", "system/pins.md")
    settle_down(watcher)
    assert pair.repo.head() == head
    pins.write_text(PINS)
    wait_until(lambda: seen.commits)
    assert pair.pins() == ["Allergic to peanuts"]


def test_swap_backup_and_probe_files_are_ignored(pair: MemoryPair, watching) -> None:
    watcher, seen = watching
    head = pair.repo.head()
    for name in ("system/.pins.md.swp", "system/pins.md~", "system/4913", "cards/.#c-x.md",
                 ".memfs/scratch.md", "history/s-1.jsonl"):
        (pair.root / name).write_text("junk\n")
    settle_down(watcher)
    assert pair.repo.head() == head
    assert seen.reports == []


def test_all_pairs_includes_a_pair_created_while_watching(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home")
    store.pair("alex", "mira")
    seen = Recorder()
    with Watcher(home=store.home, settle=SETTLE, recheck=0.02, on_report=seen) as watcher:
        late = store.pair("sam", "atlas")
        settle_down(watcher)
        (late.root / "summary.md").write_text("Sam is learning Spanish.\n")
        wait_until(lambda: seen.commits)
        watcher.check()
    assert late.summary() == "Sam is learning Spanish.\n"


def test_cli_watch_commits_then_stops_cleanly_on_ctrl_c(pair: MemoryPair) -> None:
    status = pair.root / ".memfs/watch-status.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from memfs.cli import entry; entry()", "--home",
         str(pair.store.home), "-u", "alex", "-c", "mira", "watch", "--settle", str(SETTLE)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(status.exists)
        (pair.root / "system/pins.md").write_text(PINS)
        wait_until(lambda: head_text(pair.root, "system/pins.md") == PINS)
        (pair.root / "system/pins.md").write_text("# Pins\n\nnot a pin\n")
        wait_until(lambda: "last_commit" in status.read_text())
        time.sleep(SETTLE * 4)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "committed" in out and "system/pins.md" in out
    assert out.strip().splitlines()[-1] == "memfs watch: stopped (1 commit)"
    assert "not committed: system/pins.md: line 3: not a list item" in err
    assert not status.exists()


# -- handle_changes without a watcher -------------------------------------------------------------

def test_paths_memfs_just_committed_give_no_second_commit(pair: MemoryPair) -> None:
    pair.pin("Allergic to peanuts")
    head = pair.repo.head()
    report = handle_changes(pair.repo, ["system/pins.md", "system"], recheck=0)
    assert report == WatchReport()
    assert pair.repo.head() == head


def test_valid_files_commit_and_invalid_ones_stay_as_saved(pair: MemoryPair) -> None:
    good = CARD.format(id="c-a", body="The user has a cat called Miso.")
    bad = CARD.format(id="c-b", body="")
    (pair.root / "cards/c-a.md").write_text(good)
    (pair.root / "cards/c-b.md").write_text(bad)
    reported: dict[str, str] = {}
    report = handle_changes(pair.repo, ["cards"], reported=reported, recheck=0)
    assert report.committed == ("cards/c-a.md",)
    assert [str(p) for p in report.problems] == [
        "cards/c-b.md: body: is empty: a card must say what it remembers"]
    assert head_text(pair.root, "cards/c-b.md") is None
    assert (pair.root / "cards/c-b.md").read_text() == bad
    assert git(pair.root, "show", "--format=", "--name-only", "HEAD").split() == ["cards/c-a.md"]
    assert handle_changes(pair.repo, ["cards/c-b.md"], reported=reported, recheck=0) == WatchReport()
    (pair.root / "cards/c-b.md").write_text(CARD.format(id="c-b", body="Miso is 4."))
    assert handle_changes(pair.repo, ["cards/c-b.md"], reported=reported,
                          recheck=0).committed == ("cards/c-b.md",)
    assert reported == {}


def test_a_rename_is_one_commit_with_both_sides(pair: MemoryPair) -> None:
    (pair.root / "system/notes.md").write_text("Alex works night shifts.\n")
    handle_changes(pair.repo, ["system/notes.md"], recheck=0)
    os.rename(pair.root / "system/notes.md", pair.root / "system/about-alex.md")
    report = handle_changes(pair.repo, ["system/notes.md", "system/about-alex.md"], recheck=0)
    assert report.committed == ("system/about-alex.md", "system/notes.md")
    assert subjects(pair.root)[0] == "edit: rename system/notes.md -> system/about-alex.md"


def test_a_file_still_being_written_is_retried_not_committed(pair: MemoryPair) -> None:
    path = pair.root / "system/notes.md"
    stop = threading.Event()

    def keep_writing() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            path.write_text(f"Alex talked about work ({n}).\n")
            time.sleep(0.005)

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        time.sleep(0.02)
        head = pair.repo.head()
        report = handle_changes(pair.repo, ["system/notes.md"], recheck=0.1)
    finally:
        stop.set()
        writer.join()
    assert report.unsettled == ("system/notes.md",) and report.commit is None
    assert pair.repo.head() == head
    assert handle_changes(pair.repo, ["system/notes.md"], recheck=0.01).committed == ("system/notes.md",)
    assert head_text(pair.root, "system/notes.md") == path.read_text()


def test_hand_staging_is_not_committed_and_not_an_empty_commit(pair: MemoryPair) -> None:
    pins = pair.root / "system/pins.md"
    original = pins.read_text()
    pins.write_text(PINS)
    git(pair.root, "add", "system/pins.md")
    pins.write_text(original)  # the worktree matches HEAD again; only the index differs
    head = pair.repo.head()
    assert handle_changes(pair.repo, ["system/pins.md"], recheck=0) == WatchReport()
    assert pair.repo.head() == head


@pytest.mark.parametrize(("path", "watched"), [
    ("system/pins.md", True), ("cards/c-1.md", True), ("summary.md", True),
    ("system", True), (".gitignore", True),
    ("history/s-1.jsonl", False), (".memfs/index.db", False), (".git/HEAD", False),
    ("system/.pins.md.swp", False), ("system/pins.md~", False), ("system/4913", False),
    ("cards/.#c-1.md", False), ("cards/.memfs-abc.tmp", False), ("cards/c-1.md.tmp", False),
    ("notes.md", False), ("../other/system/pins.md", False),
])
def test_which_paths_are_watched(path: str, watched: bool) -> None:
    assert watched_path(path) is watched



RACING_HOOK = """#!/bin/sh
# Once: someone else commits while memfs watch is committing (between its read and its commit).
if [ -f .git/race-flag ]; then
  rm .git/race-flag
  unset GIT_INDEX_FILE
  printf 'raced\\n' > history/.gitkeep
  git add history/.gitkeep && git commit -q --no-verify -m "history: a racing commit"
fi
"""


def test_a_commit_made_meanwhile_is_never_overwritten(pair: MemoryPair) -> None:
    hook = pair.root / ".git/hooks/pre-commit"
    hook.write_text(RACING_HOOK)
    (pair.root / ".git/race-flag").write_text("")
    (pair.root / "system/pins.md").write_text(PINS)
    with pytest.raises(ConflictError):
        handle_changes(pair.repo, ["system/pins.md"], recheck=0)
    assert subjects(pair.root)[0] == "history: a racing commit"
    assert (pair.root / "system/pins.md").read_text() == PINS
    report = handle_changes(pair.repo, ["system/pins.md"], recheck=0)
    assert report.committed == ("system/pins.md",)
    assert subjects(pair.root)[:2] == ["edit: update system/pins.md", "history: a racing commit"]
    assert head_text(pair.root, "history/.gitkeep") == "raced\n"
    assert head_text(pair.root, "system/pins.md") == PINS
    assert git(pair.root, "status", "--porcelain").strip() == ""


def test_renaming_a_card_to_a_name_that_does_not_match_its_id_deletes_nothing(pair: MemoryPair) -> None:
    (pair.root / "cards/c-keep.md").write_text(CARD.format(id="c-keep", body="Alex has a corgi."))
    handle_changes(pair.repo, ["cards/c-keep.md"], recheck=0)
    os.rename(pair.root / "cards/c-keep.md", pair.root / "cards/c-other.md")
    report = handle_changes(pair.repo, ["cards/c-keep.md", "cards/c-other.md"], recheck=0)
    assert report.commit is None and report.problems, "the mismatch is reported, nothing committed"
    assert head_text(pair.root, "cards/c-keep.md") is not None, "the memory is still at HEAD"
    (pair.root / "cards/c-other.md").write_text(CARD.format(id="c-other", body="Alex has a corgi."))
    report = handle_changes(pair.repo, ["cards/c-keep.md", "cards/c-other.md"], recheck=0)
    assert report.committed == ("cards/c-keep.md", "cards/c-other.md")
