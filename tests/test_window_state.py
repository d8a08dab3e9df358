"""The window as derived state: a turn reads only what is new, and the state always says
what the window is by definition (every message no pending event and no ``Memfs-Window``
trailer on HEAD's first-parent history evicted) — across other writers, dreams, reverts,
hand-broken lines, a deleted ``.memfs/`` and ``kill -9``."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from memfs.agent.dream.runner import run_pending

import memfs.window
from memfs.app import MemoryStore
from memfs.compaction import Span, pending_events
from memfs.config import Config
from memfs.gitio import run_git
from memfs.history import Message, iter_messages
from memfs.store import MemoryPair
from memfs.turn import TurnOptions, add_messages
from memfs.window import current_window, forget_window_states, window_state
from tests._fakes_dream import ScriptedExtractor
from tests.conftest import FakeEmbedder

T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
NONE = TurnOptions(dream="none")


def make_pair(home: Path, **config: object) -> MemoryPair:
    settings = {"dream_trigger": "off", **config}
    store = MemoryStore(home, embedder=FakeEmbedder(), config=Config(**settings))  # type: ignore[arg-type]
    return store.pair("alex", "mira")


def exchanges(start: int, n: int, words: int = 12, session: str | None = None) -> list[dict[str, str]]:
    out = []
    for i in range(start, start + n):
        ts = T0 + dt.timedelta(minutes=2 * i)
        extra = {"session": session} if session else {}
        out.append({"role": "user", "content": f"user {i} " + "chatter " * words,
                    "ts": ts.isoformat(), **extra})
        out.append({"role": "assistant", "content": f"reply {i} " + "answer " * words,
                    "ts": (ts + dt.timedelta(seconds=30)).isoformat(), **extra})
    return out


def by_definition(pair: MemoryPair) -> list[Message]:
    """The window as it is defined (the old, from-scratch derivation): the oracle."""
    spans = [s for e in pending_events(pair.root) for s in e.spans]
    out = run_git(pair.root, "log", "--first-parent",
                  "--format=%(trailers:key=Memfs-Window,valueonly,separator=%x2C)")
    spans += [Span.parse(x.strip()) for line in out.splitlines() for x in line.split(",")
              if x.strip()]
    return [m for m in iter_messages(pair.root)
            if not any(s.session == m.session and s.first <= m.turn <= s.last for s in spans)]


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


WRITER = """
import sys, datetime as dt
from memfs.app import MemoryStore
from memfs.config import Config
from memfs.turn import TurnOptions, add_messages
pair = MemoryStore(sys.argv[1], config=Config(dream_trigger="off", window_budget=300)).pair("alex", "mira")
add_messages(pair, [{"role": r, "content": f"from the other process {i} " + "words " * 10,
                     "ts": "2026-11-21T10:00:00Z"} for i, r in enumerate(["user", "assistant"] * 4)],
             options=TurnOptions(dream="none"))
"""


def test_the_kept_window_is_always_the_window_by_definition(isolated_env: Path) -> None:
    pair = make_pair(isolated_env, window_budget=300)
    forget_window_states()
    add_messages(pair, exchanges(0, 10, session="s-a"), options=NONE)
    assert pending_events(pair.root), "the window went over budget"
    assert ids(current_window(pair)) == ids(by_definition(pair))

    # another process appends (and compacts) under the pair lock
    subprocess.run([sys.executable, "-c", WRITER, str(isolated_env)], check=True, timeout=120)
    assert ids(current_window(pair)) == ids(by_definition(pair))
    assert any("other process" in m.content for m in current_window(pair))

    # a dream merges: its event becomes a Memfs-Window trailer; nothing rejoins
    before = ids(current_window(pair))
    run = run_pending(pair, extractor=ScriptedExtractor([], summary=""), now=T0)
    assert run.results and all(r.status == "merged" for r in run.results)
    assert pending_events(pair.root) == []
    assert ids(current_window(pair)) == before == ids(by_definition(pair))

    # reverting the dream undoes its memory, not its eviction (the merge stays on main)
    pair.revert(run.results[-1].merge or "")
    assert ids(current_window(pair)) == before == ids(by_definition(pair))

    # hand-broken lines appended to the open session are skipped, the next turn continues
    session = current_window(pair)[-1].session
    with (pair.root / "history" / f"{session}.jsonl").open("a") as handle:
        handle.write('not json\n{"role": "user"}\n')
    add_messages(pair, exchanges(20, 2), options=NONE)
    assert ids(current_window(pair)) == ids(by_definition(pair))

    # a new process loads the saved state instead of rebuilding it
    forget_window_states()
    assert ids(current_window(pair)) == ids(by_definition(pair))
    assert window_state(pair).rebuilds == 0

    # a reset that drops a dream merge from HEAD: its window rejoins
    run_git(pair.root, "reset", "-q", "--hard", f"{run.results[0].merge}^1")
    assert ids(current_window(pair)) == ids(by_definition(pair))


def test_a_line_added_by_hand_to_an_old_session_joins_the_window_after_a_rescan(
        isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session the window no longer follows (all of it evicted) edited by hand in place:
    no stamp the turn checks changes, so it is seen at the next full scan, which a warm
    window runs at least every ``RESCAN_NS``."""
    pair = make_pair(isolated_env, window_budget=300)
    forget_window_states()
    add_messages(pair, exchanges(0, 10, session="s-old"), options=NONE)
    add_messages(pair, exchanges(10, 10, session="s-new"), options=NONE)
    time.sleep(1.1)  # past the clock slack: the old session is let go at the next scan
    pair.repo.commit_paths(pair.root, ["history/*.jsonl"], "history: all\n\nMemfs-Actor: user\n",
                           __import__("memfs.gitio").gitio.USER)
    current_window(pair)
    assert "s-old" not in window_state(pair).tails, "the old session is no longer followed"
    assert all(m.session != "s-old" for m in current_window(pair))
    with (pair.root / "history" / "s-old.jsonl").open("a") as handle:  # not through memfs
        handle.write(json.dumps({"role": "user", "content": "added by hand later",
                                 "ts": T0.isoformat()}) + "\n")
    assert "added by hand later" not in [m.content for m in current_window(pair)]
    monkeypatch.setattr(memfs.window, "RESCAN_NS", 0)
    assert "added by hand later" in [m.content for m in current_window(pair)]
    assert ids(current_window(pair)) == ids(by_definition(pair))


def test_deleting_dot_memfs_mid_conversation_loses_nothing(isolated_env: Path) -> None:
    pair = make_pair(isolated_env, window_budget=300)
    add_messages(pair, exchanges(0, 12, session="s-a"), options=NONE)
    assert pending_events(pair.root)
    shutil.rmtree(pair.root / ".memfs")
    window = current_window(pair)
    assert len(window) == 24, "undreamed messages rejoin the window"
    add_messages(pair, exchanges(12, 6, session="s-a"), options=NONE)
    every = list(iter_messages(pair.root))
    assert [m.turn for m in every] == list(range(36)), "no turn lost or numbered twice"
    assert ids(current_window(pair)) == ids(by_definition(pair))
    assert pending_events(pair.root), "the rejoined window compacts again"


@contextmanager
def audited() -> Iterator[dict[str, int]]:
    """Count the files opened, folders listed and processes started while inside."""
    counts = {"open": 0, "list": 0, "spawn": 0}
    _SINKS.append(counts)
    try:
        yield counts
    finally:
        del _SINKS[next(i for i, sink in enumerate(_SINKS) if sink is counts)]


_SINKS: list[dict[str, int]] = []
_KINDS = {"open": "open", "os.scandir": "list", "os.listdir": "list", "glob.glob": "list",
          "subprocess.Popen": "spawn", "os.posix_spawn": "spawn", "os.exec": "spawn"}


def _hook(event: str, args: tuple[object, ...]) -> None:
    kind = _KINDS.get(event) if _SINKS else None
    if kind is not None:
        for sink in _SINKS:
            sink[kind] += 1


sys.addaudithook(_hook)


def _turn_costs(pair: MemoryPair, n: int) -> tuple[dict[str, int], dict[str, int]]:
    """(whole turn, add_messages alone) costs of the n-th measured turn."""
    user = {"role": "user", "content": f"thanks, that was lovely {n}", "ts": T0.isoformat()}
    reply = {"role": "assistant", "content": f"you are welcome {n}", "ts": T0.isoformat()}
    with audited() as turn:
        with audited() as first:
            add_messages(pair, [user], options=NONE)
        ctx = pair.context(user["content"])
        with audited() as second:
            add_messages(pair, [reply], options=NONE)
    assert not ctx.plan.need_retrieval
    return turn, {k: first[k] + second[k] for k in turn}


def test_a_turn_reads_the_same_at_1k_and_10k_messages(isolated_env: Path) -> None:
    costs = []
    for size in (1_000, 10_000):
        pair = make_pair(isolated_env / str(size))
        for start in range(0, size // 2, 500):  # 100 messages a session, as ingested
            add_messages(pair, [dict(m, session=f"s-{(start + i // 2) // 50:04d}")
                                for i, m in enumerate(exchanges(start, 500))], options=NONE)
        pair.repo.commit_paths(pair.root, ["history/*.jsonl"], "history: all\n\nMemfs-Actor: user\n",
                               __import__("memfs.gitio").gitio.USER)
        time.sleep(1.1)  # let the sessions the ingest closed age past the clock slack
        _turn_costs(pair, 0)  # the first turn after a commit folds HEAD (and scans) once
        state = window_state(pair)
        rebuilds = state.rebuilds
        costs.append([_turn_costs(pair, n) for n in (1, 2)])
        assert window_state(pair).rebuilds == rebuilds, "no turn rebuilds the window"
    small, large = costs
    assert small == large, f"1k: {small}\n10k: {large}"
    assert all(adds["spawn"] == 0 for _, adds in small), "the conversation path runs no git"


KILLED_WRITER = """
import sys
from memfs.app import MemoryStore
from memfs.config import Config
from memfs.turn import TurnOptions, add_messages
pair = MemoryStore(sys.argv[1], config=Config(dream_trigger="off")).pair("alex", "mira")
n = 0
while True:
    batch = [{"role": "user" if (n + i) % 2 == 0 else "assistant",
              "content": f"m{n + i} " + "lorem ipsum " * 8, "ts": "2026-11-21T10:00:00Z",
              "session": f"s-{(n + i) // 400:04d}"} for i in range(200)]
    add_messages(pair, batch, options=TurnOptions(dream="none"))
    n += len(batch)
    print(n, flush=True)
"""


@pytest.mark.slow
def test_kill_9_during_a_large_ingest_keeps_every_acknowledged_message(isolated_env: Path) -> None:
    make_pair(isolated_env)
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(isolated_env)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    acked = 0
    deadline = time.monotonic() + 60
    while acked < 3000 and time.monotonic() < deadline:
        acked = int(proc.stdout.readline() or acked)
    time.sleep(0.05)  # kill it mid-batch, past the last acknowledgement
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert acked >= 3000
    forget_window_states()
    pair = make_pair(isolated_env)
    said = [m.content.split(" ", 1)[0] for m in iter_messages(pair.root)]
    assert said[:acked] == [f"m{i}" for i in range(acked)], "an acknowledged message was lost"
    assert len(set(said)) == len(said), "nothing was written twice"
    add_messages(pair, [{"role": "user", "content": "after the kill", "session": "s-after"}],
                 options=NONE)
    assert current_window(pair)[-1].content == "after the kill"
    assert ids(current_window(pair)) == ids(by_definition(pair))
    every = [json.loads(line) for p in sorted((pair.root / "history").glob("*.jsonl"))
             for line in p.read_text().splitlines() if line.strip()]
    assert all(isinstance(r["turn"], int) for r in every)
