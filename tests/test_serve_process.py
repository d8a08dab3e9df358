"""``memfs serve`` as a user starts it: a real process, real uvicorn, real signals.

- beyond loopback with no key at all, it refuses to start (one line, exit 2);
- at start-up it resumes the dreams left pending; on SIGTERM, a request in flight (a
  dream run through the API) still gets its answer, the dream the worker pool is running
  is merged, and a dream still waiting in the pool stays pending on disk for the next
  start; the log shows no traceback;
- the dream pool itself: one job per pair (coalesced), and ``close`` keeps queued work
  on disk rather than running it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

from memfs.app import MemoryStore
from memfs.compaction import pending_events
from memfs.config import Config
from memfs.keys import KeyStore
from memfs.runtime.pool import ThreadPoolQueue
from memfs.runtime.queues import make_queue
from memfs.turn import TurnOptions, add_messages
from tests._serve import bearer, free_port

MEMFS = shutil.which("memfs", path=str(Path(sys.executable).parent)) or "memfs"
TALK = [{"role": "user", "content": f"My sister Lin lives in Leeds and works as a nurse, part {n}"}
        if n % 2 == 0 else {"role": "assistant", "content": "That sounds like a demanding job."}
        for n in range(4)]
"""Two exchanges: over a 30-token window, one compaction event."""


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "MEMFS_HOME": str(home), **extra}


def test_serve_refuses_to_listen_beyond_loopback_without_any_key(isolated_env: Path) -> None:
    done = subprocess.run([MEMFS, "serve", "--host", "0.0.0.0", "--port", str(free_port())],
                          env=_env(isolated_env), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "refusing to listen beyond loopback" in done.stderr


def _wait_up(base: str, process: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, "memfs serve exited"
        try:
            if httpx2.get(base + "/v1/health", timeout=2).status_code == 200:
                return
        except httpx2.TransportError:
            time.sleep(0.2)
    raise AssertionError("memfs serve did not come up")


def _compacted_pairs(home: Path, names: list[str]) -> None:
    """Pairs with one undreamed compaction event each, made while no server runs (one
    is talked into being; the others are copies of it)."""
    store = MemoryStore(home, config=Config(window_budget=30))
    first = store.pair("u", names[0])
    add_messages(first, TALK, options=TurnOptions(dream="none"))
    for name in names[1:]:
        shutil.copytree(first.root, home / "u" / name, symlinks=True)


def _paused(root: Path) -> bool:
    status = root / ".memfs" / "dream-status.json"
    return status.exists() and json.loads(status.read_text() or "{}").get("paused") is True


def test_sigterm_lets_work_in_flight_finish_and_keeps_waiting_dreams_pending(
        isolated_env: Path) -> None:
    """p1, p2, p3 were compacted while no server ran. At start-up the pool (one worker)
    resumes them: it dreams p1 (paused at ``apply``), p2 and p3 wait. An API request then
    dreams p2 itself. SIGTERM while both dreams are paused."""
    pairs = ["p1", "p2", "p3"]
    _compacted_pairs(isolated_env, pairs)
    key = KeyStore(isolated_env).add("u")[1]
    port, log = free_port(), isolated_env / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [MEMFS, "serve", "--port", str(port), "--workers", "1"], stdout=out, stderr=out,
            env=_env(isolated_env, MEMFS_DREAM_PAUSE_AT="apply", MEMFS_DREAM_PAUSE_SECONDS="4"))
    base, root = f"http://127.0.0.1:{port}", isolated_env / "u"
    try:
        _wait_up(base, server)
        api = httpx2.Client(base_url=base + "/v1/pairs/u", headers=bearer(key), timeout=120)
        answer: dict[str, Any] = {}
        inflight = threading.Thread(target=lambda: answer.update(api.post("/p2/dream").json()))
        inflight.start()
        deadline = time.monotonic() + 30
        while not (_paused(root / "p1") and _paused(root / "p2")) and time.monotonic() < deadline:
            time.sleep(0.05)
        queue = httpx2.get(base + "/v1/health").json()["queue"]
        assert (queue["running"], queue["queued"]) == (1, 2), queue  # p1 dreams; p2, p3 wait
        server.send_signal(signal.SIGTERM)
        inflight.join(timeout=60)
        assert server.wait(timeout=60) in (0, -signal.SIGTERM)  # uvicorn re-raises it, after
    finally:
        if server.poll() is None:
            server.kill()
    assert [d["status"] for d in answer["dreams"]] == ["merged"]
    assert pending_events(root / "p1") == []  # the pool's running dream finished
    assert pending_events(root / "p2") == []  # so did the request in flight
    assert len(pending_events(root / "p3")) == 1  # the waiting one stays pending
    text = log.read_text()
    assert "Application shutdown complete" in text and "Traceback" not in text


class _Pair:
    """Just what the pool touches of a pair: its root, its names, ``dream()``."""

    def __init__(self, name: str, gate: threading.Event) -> None:
        self.root, self.user, self.character = Path("/pairs") / name, "u", name
        self.gate, self.dreams = gate, 0

    def dream(self, *, wait: float = 60.0) -> list[str]:
        self.gate.wait(10)
        self.dreams += 1
        return [f"merge-{self.dreams}"]


def test_the_pool_runs_one_job_per_pair_and_close_keeps_waiting_work_on_disk() -> None:
    gate = threading.Event()
    pool = make_queue(None, workers=1)
    assert isinstance(pool, ThreadPoolQueue)
    a, b = _Pair("a", gate), _Pair("b", gate)
    pool.submit(a)  # type: ignore[arg-type]
    time.sleep(0.2)  # a is dreaming now
    for _ in range(4):
        pool.submit(a)  # type: ignore[arg-type]
    pool.submit(b)  # type: ignore[arg-type]
    pool.submit(b)  # type: ignore[arg-type]
    snapshot = pool.snapshot()
    assert (snapshot["running"], snapshot["queued"], snapshot["coalesced"]) == (1, 1, 5)
    gate.set()
    assert pool.drain(10)
    assert (a.dreams, b.dreams) == (2, 1)  # a once more (its events came while it dreamed)
    gate.clear()
    pool.submit(a)  # type: ignore[arg-type]
    time.sleep(0.2)
    pool.submit(b)  # type: ignore[arg-type]
    closer = threading.Thread(target=pool.close)
    closer.start()
    time.sleep(0.2)
    assert closer.is_alive()  # waits for the running dream of a
    gate.set()
    closer.join(10)
    assert (a.dreams, b.dreams) == (3, 1)  # b was waiting: not run, its events stay pending
    pool.submit(b)  # type: ignore[arg-type]
    assert b.dreams == 1
