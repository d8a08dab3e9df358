"""Dreams as Celery jobs on a real Redis, taken by real ``memfs worker`` processes.

What a user of a multi-machine deployment counts on: every compaction is dreamed exactly
once however many workers race for it or die under it; no window of conversation is ever
lost; and a Redis outage costs a warning, never a message or a stalled turn.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from memfs.agent.dream.runner import read_status
from memfs.agent.jobs.celery_app import QUEUE, TASK
from memfs.agent.jobs.publisher import CeleryQueue

from memfs.app import MemoryStore
from memfs.compaction import Span, pending_events
from memfs.config import Config
from memfs.history import iter_messages
from memfs.store import MemoryPair
from memfs.window import current_window
from tests.queue_support import RedisServer, Worker, dead, wait_for

pytestmark = pytest.mark.slow

CONFIG = Config(window_budget=60)
T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)


def conversation(exchanges: int, tag: str) -> list[dict[str, str]]:
    out = []
    for i in range(exchanges):
        ts = T0 + dt.timedelta(minutes=2 * i)
        out.append({"role": "user", "content": f"{tag} hello {i}, how was the weather today",
                    "ts": ts.isoformat()})
        out.append({"role": "assistant", "content": f"it was fine {i}, thanks for asking",
                    "ts": (ts + dt.timedelta(seconds=30)).isoformat()})
    return out


class RecordingQueue(CeleryQueue):
    """The real publisher, noting every event it was handed (the ones that must be dreamed)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.events: set[tuple[str, str]] = set()

    def submit(self, pair: MemoryPair) -> str:
        self.events |= {(pair.user, e.id) for e in pending_events(pair.root)}
        return super().submit(pair)


def make_pairs(store: MemoryStore, users: list[str]) -> list[MemoryPair]:
    """One pair made with ``init``, the rest copied from it (init's commit costs a hook)."""
    first = store.pair(users[0], "mira")
    for user in users[1:]:
        shutil.copytree(first.root, store.home / user / "mira", symlinks=True)
    return [store.pair(u, "mira", create=False) for u in users]


def merged_events(pair: MemoryPair) -> Counter[str]:
    out = _git(pair.root, "log", "--first-parent", "main",
               "--format=%(trailers:key=Memfs-Event,valueonly)")
    return Counter(line.strip() for line in out.splitlines() if line.strip())


def dreamed_spans(pair: MemoryPair) -> list[Span]:
    out = _git(pair.root, "log", "--first-parent", "main",
               "--format=%(trailers:key=Memfs-Window,valueonly,separator=%x2C)")
    return [Span.parse(s) for line in out.splitlines() for s in line.split(",") if s.strip()]


def assert_nothing_lost(pair: MemoryPair) -> None:
    """Every message is either still in the window or in exactly one dreamed window."""
    spans = dreamed_spans(pair)
    in_window = {(m.session, m.turn) for m in current_window(pair)}
    for m in iter_messages(pair.root):
        covering = [s for s in spans if s.session == m.session and s.first <= m.turn <= s.last]
        assert len(covering) + ((m.session, m.turn) in in_window) == 1, (pair.user, m)
    assert pending_events(pair.root) == []
    assert _git(pair.root, "branch", "--list", "dream/*").strip() == ""
    assert not any((pair.root / ".memfs" / "worktrees").glob("*"))


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Start ``memfs worker`` processes; every one still running is stopped afterwards."""
    started: list[Worker] = []

    def start(home: Path, url: str, name: str, **options: Any) -> Worker:
        worker = Worker(home, url, tmp_path / f"{name}.log", **options)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def test_two_workers_dream_every_event_of_40_pairs_exactly_once(
        isolated_env: Path, redis: RedisServer, workers: Callable[..., Worker]) -> None:
    queue = RecordingQueue(redis.url)
    store = MemoryStore(isolated_env, config=CONFIG, queue=queue)
    pairs = make_pairs(store, [f"u{i:02d}" for i in range(40)])
    pool = [workers(isolated_env, redis.url, f"w{n}") for n in (1, 2)]
    for worker in pool:
        worker.wait_ready()
    # one pair in ten compacts twice, so two jobs of one pair race for its lock
    with ThreadPoolExecutor(4) as ingest:
        list(ingest.map(lambda p: p[1].add_messages(conversation(8 if p[0] % 10 == 0 else 5,
                                                                 p[1].user)),
                        enumerate(pairs)))
    expected = queue.events
    assert len(expected) == 44 and {u for u, _ in expected} == {p.user for p in pairs}

    # A deadline for liveness, not a speed claim (speed lives in bench/): on 2 cores shared with
    # other jobs, 44 dreams took 31 s in a durations run and over 90 s at load average 8.
    wait_for(lambda: all(not pending_events(p.root) for p in pairs), 300, "every event dreamed")
    for pair in pairs:
        merged = merged_events(pair)
        assert merged == Counter({e: 1 for u, e in expected if u == pair.user}), pair.user
        assert_nothing_lost(pair)
    took = [sum(w.text().count(" merged ") for w in pool[i:i + 1]) for i in (0, 1)]
    assert sum(took) == len(expected) and min(took) > 0  # both workers dreamed

    # At-least-once means a job may come again: a second delivery of a merged event is a no-op.
    heads = {p.user: _git(p.root, "rev-parse", "main") for p in pairs}
    with queue.app.connection_for_write() as conn:
        for user, event in sorted(expected):
            queue.app.send_task(TASK, args=[user, "mira", event], queue=QUEUE, connection=conn)
    wait_for(lambda: sum(w.text().count(": already-dreamed") for w in pool) == len(expected),
             120, "every repeated job to be acknowledged as already dreamed")
    assert {p.user: _git(p.root, "rev-parse", "main") for p in pairs} == heads


def test_a_worker_killed_mid_dream_leaves_its_job_to_another_merged_once(
        isolated_env: Path, redis: RedisServer, workers: Callable[..., Worker]) -> None:
    store = MemoryStore(isolated_env, config=CONFIG, queue=redis.url)
    pair = store.pair("alex", "mira")
    pair.add_messages(conversation(5, "alex"))
    (event,) = pending_events(pair.root)
    doomed = workers(isolated_env, redis.url, "doomed", redeliver_after=2,
                     env={"MEMFS_DREAM_PAUSE_AT": "merge", "MEMFS_DREAM_PAUSE_SECONDS": "8"})

    def paused_in(pid: int | None = None) -> int:
        status: dict[str, Any] = {}

        def check() -> bool:
            status.update(read_status(pair.root) or {"paused": False})
            return status["paused"] is True and status["pid"] != pid

        wait_for(check, 30, "a dream paused just before its merge")
        return int(status["pid"])

    # The dreaming process dies: its worker puts the job back at once and dreams it again.
    first = paused_in()
    os.kill(first, signal.SIGKILL)
    second = paused_in(first)
    assert "WorkerLostError" in doomed.text()
    # Then the whole worker dies (every process of it): another worker gets the job.
    doomed.kill9()
    wait_for(lambda: dead(second), 5, "the paused dream's process to die")
    assert merged_events(pair)[event.id] == 0 and pending_events(pair.root) == [event]

    rescuer = workers(isolated_env, redis.url, "rescuer", redeliver_after=2).wait_ready()
    wait_for(lambda: not pending_events(pair.root), 30, "the job to be delivered again")
    assert merged_events(pair) == Counter({event.id: 1})
    assert_nothing_lost(pair)
    log = (pair.root / ".memfs" / "dream.log").read_text()
    assert "recovery: removed stale worktree" in log
    time.sleep(1.5)  # another sweep of unacknowledged jobs: nothing comes back
    assert rescuer.text().count(" merged ") == 1
    assert merged_events(pair) == Counter({event.id: 1})


def test_redis_down_during_ingest_keeps_messages_and_events_then_drains(
        isolated_env: Path, redis: RedisServer, workers: Callable[..., Worker],
        run_cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMFS_QUEUE", redis.url)
    monkeypatch.setenv("MEMFS_WINDOW_BUDGET", "60")
    assert run_cli("-u", "alex", "-c", "mira", "init").code == 0
    pair = MemoryStore(isolated_env, config=CONFIG).pair("alex", "mira", create=False)
    transcript = tmp_path / "part.jsonl"

    def ingest(tag: str) -> Any:
        transcript.write_text("".join(json.dumps(m) + "\n" for m in conversation(5, tag)))
        started = time.monotonic()
        result = run_cli("-u", "alex", "-c", "mira", "ingest", str(transcript))
        return result, time.monotonic() - started

    redis.stop()
    down, took = ingest("outage")
    assert down.code == 0, down.err
    assert "warning: dream queue redis://127.0.0.1" in down.err and "stay pending" in down.err
    assert "dream: not queued: the dream queue is unreachable" in down.out
    assert took < 10  # no retry loop on the conversation path
    stranded = pending_events(pair.root)
    assert len(stranded) == 1
    assert sum(1 for m in iter_messages(pair.root) if "outage hello" in m.content) == 5

    redis.start()
    # Nobody compacts this pair again: a worker's sweep finds the stranded event.
    workers(isolated_env, redis.url, "late", redeliver_after=2, sweep_every=1).wait_ready()
    wait_for(lambda: not pending_events(pair.root), 30, "the sweep to send the stranded event")
    assert merged_events(pair) == Counter({stranded[0].id: 1})

    again, _ = ingest("after")  # and the next compaction goes straight to the queue
    assert again.code == 0 and "warning" not in again.err, again.err
    fresh = re.findall(r"event (e-\S+) pending", again.out)  # may be dreamed already
    assert fresh and f"dream: queued for a worker ({len(fresh)} job(s)" in again.out
    wait_for(lambda: not pending_events(pair.root), 30, "the worker to drain the new events")
    assert merged_events(pair) == Counter({e: 1 for e in [stranded[0].id, *fresh]})
    assert_nothing_lost(pair)
    contents = [m.content for m in iter_messages(pair.root)]
    assert sum("outage hello" in c for c in contents) == 5
    assert sum("after hello" in c for c in contents) == 5


def test_memfs_serve_with_a_redis_queue_hands_its_dreams_to_the_workers(
        isolated_env: Path, redis: RedisServer, workers: Callable[..., Worker]) -> None:
    """`memfs serve --queue redis://...`: a compaction through the HTTP API becomes a job
    that a worker merges; the server process dreams nothing itself."""
    import httpx2 as httpx

    from memfs.keys import KeyStore
    from memfs.runtime.host import Host
    from memfs.runtime.queues import make_queue
    from tests._serve import bearer, live_server
    from tests.conftest import FakeEmbedder

    queue = make_queue(redis.url)
    assert isinstance(queue, CeleryQueue)
    store = MemoryStore(isolated_env, embedder=FakeEmbedder(), config=CONFIG, queue=queue)
    _, key = KeyStore(store.home).add("alex")
    worker = workers(isolated_env, redis.url, "w1").wait_ready()
    with live_server(Host(store, keys=KeyStore(store.home))) as url:
        client = httpx.Client(base_url=url, headers=bearer(key), timeout=30)
        assert client.put("/v1/pairs/alex/mira").status_code in (200, 201)
        answer = client.post("/v1/pairs/alex/mira/messages",
                             json={"messages": conversation(6, "alex")})
        assert answer.status_code == 200, answer.text
        pair = store.pair("alex", "mira", create=False)
        wait_for(lambda: not pending_events(pair.root) and merged_events(pair), 60,
                 "the worker to merge the server's dream")
    assert " merged " in worker.text()
    assert "dream/" not in _git(pair.root, "branch", "--list", "dream/*")
    assert_nothing_lost(pair)
