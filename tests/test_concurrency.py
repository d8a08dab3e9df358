"""Two writers never corrupt a pair or lose a change; a writer killed mid-commit leaves
nothing the next command cannot recover."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memfs.app import MemoryStore

WRITER = """
import sys
from memfs.app import MemoryStore
pair = MemoryStore(sys.argv[1]).pair("alex", "mira")
for i in range(int(sys.argv[3])):
    pair.pin(f"{sys.argv[2]} pin {i}")
"""


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)


@pytest.mark.slow
def test_two_processes_adding_50_pins_each(isolated_env: Path) -> None:
    pair = MemoryStore(isolated_env).pair("alex", "mira")
    before = int(git(pair.root, "rev-list", "--count", "HEAD").stdout)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(isolated_env), name, "50"])
             for name in ("left", "right")]
    assert [p.wait(timeout=240) for p in procs] == [0, 0]
    pins = pair.pins()
    assert len(pins) == 100
    assert {f"{n} pin {i}" for n in ("left", "right") for i in range(50)} == set(pins)
    assert int(git(pair.root, "rev-list", "--count", "HEAD").stdout) == before + 100
    fsck = git(pair.root, "fsck", "--strict")
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert git(pair.root, "status", "--porcelain").stdout == ""


@pytest.mark.slow
def test_kill_9_mid_commit_then_next_command_works(isolated_env: Path) -> None:
    pair = MemoryStore(isolated_env).pair("alex", "mira")
    rng = random.Random(4)
    for attempt in range(6):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(isolated_env), f"w{attempt}", "200"])
        time.sleep(0.6 + rng.random() * 1.2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        committed_pins = _committed_pins(pair.root)
        pair.pin(f"after kill {attempt}")  # the next command works
        pins_now = _committed_pins(pair.root)
        assert set(committed_pins) <= set(pins_now), "a committed pin was lost"
        assert pins_now[-1] == f"after kill {attempt}"
        assert git(pair.root, "diff", "--cached", "--name-only").stdout == "", "nothing left staged"
        fsck = git(pair.root, "fsck")
        assert fsck.returncode == 0, fsck.stderr
    assert not (pair.root / ".git" / "index.lock").exists()


def _committed_pins(root: Path) -> list[str]:
    text = git(root, "show", "HEAD:system/pins.md").stdout
    return [line[2:] for line in text.splitlines() if line.startswith("- ")]


def test_stale_git_lock_from_a_dead_process_is_recovered(isolated_env: Path) -> None:
    pair = MemoryStore(isolated_env).pair("alex", "mira")
    (pair.root / ".git" / "index.lock").write_text("")
    pair.pin("still works")
    assert pair.pins() == ["still works"]


def test_torn_history_line_from_a_crash_is_dropped_not_glued(isolated_env: Path) -> None:
    import datetime as dt

    from memfs import history

    pair = MemoryStore(isolated_env).pair("alex", "mira")
    now = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)
    history.append(pair.root, "s-1", "user", "first", now)
    with (pair.root / "history" / "s-1.jsonl").open("a") as handle:
        handle.write('{"session": "s-1", "turn": 1, "role": "us')
    history.append(pair.root, "s-1", "assistant", "second", now)
    messages = list(history.iter_messages(pair.root))
    assert [(m.turn, m.content) for m in messages] == [(0, "first"), (1, "second")]


def test_pair_lock_excludes_threads_of_one_process(isolated_env: Path) -> None:
    import threading

    from memfs.lock import pair_lock

    pair = MemoryStore(isolated_env).pair("alex", "mira")
    order: list[str] = []
    inside = threading.Event()

    def holder() -> None:
        with pair_lock(pair.root):
            order.append("a-in")
            inside.set()
            time.sleep(0.3)
            order.append("a-out")

    thread = threading.Thread(target=holder)
    thread.start()
    inside.wait(5)
    with pair_lock(pair.root):
        order.append("b-in")
    thread.join()
    assert order == ["a-in", "a-out", "b-in"]
