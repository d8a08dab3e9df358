"""Choosing the dream queue: config.toml, $MEMFS_QUEUE, --queue, queue=; and what it costs
when none is chosen (nothing) or when the broker does not answer (a warning, not a stall)."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memfs.agent.jobs.publisher import CeleryQueue
from memfs.agent.services import SubprocessQueue

from memfs.app import MemoryStore
from memfs.compaction import pending_events
from memfs.config import Config, load_config
from memfs.errors import BadInputError
from tests.test_queue import conversation


def test_queue_comes_from_config_toml_then_the_environment(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('queue = "redis://10.0.0.5:6379/2"\n')
    assert load_config({}, str(tmp_path)).queue == "redis://10.0.0.5:6379/2"
    env = {"MEMFS_QUEUE": "redis://127.0.0.1:6380/0"}
    assert load_config(env, str(tmp_path)).queue == "redis://127.0.0.1:6380/0"
    assert load_config({}, str(tmp_path / "nowhere")).queue is None


@pytest.mark.parametrize("url", ["amqp://localhost", "localhost:6379", "", "redis://",
                                 "redis://host name/0"])
def test_a_queue_that_is_not_a_redis_url_is_refused(tmp_path: Path, url: str) -> None:
    (tmp_path / "config.toml").write_text(f'queue = "{url}"\n')
    with pytest.raises(BadInputError, match="queue: must be redis://host:port/db"):
        load_config({}, str(tmp_path))
    with pytest.raises(BadInputError, match="queue: must be a redis://"):
        MemoryStore(tmp_path, queue=url or "x")


def test_a_server_thread_pool_queue_leaves_the_cli_and_library_as_they_were(
        tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('queue = "threads://?workers=4"\n')
    config = load_config({}, str(tmp_path))
    assert isinstance(MemoryStore(tmp_path, config=config).services.queue, SubprocessQueue)
    with pytest.raises(BadInputError, match="queue: must be a redis://"):
        MemoryStore(tmp_path, queue="threads://")


def test_the_store_picks_its_queue_from_queue_then_config(tmp_path: Path) -> None:
    assert isinstance(MemoryStore(tmp_path).services.queue, SubprocessQueue)
    configured = MemoryStore(tmp_path, config=Config(queue="redis://127.0.0.1:1/0"))
    assert isinstance(configured.services.queue, CeleryQueue)
    given = MemoryStore(tmp_path, queue="redis://127.0.0.1:2/0").services.queue
    assert isinstance(given, CeleryQueue) and given.url.endswith(":2/0")


def test_worker_needs_a_queue_and_says_so_in_one_line(run_cli: Any, isolated_env: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_env.mkdir()
    result = run_cli("worker")
    assert result.code == 2 and result.err.count("\n") == 1 and "--queue" in result.err
    result = run_cli("worker", "--queue", "amqp://localhost")
    assert result.code == 2 and "must be a redis://" in result.err
    monkeypatch.setenv("MEMFS_QUEUE", "redis://127.0.0.1:1/0")
    result = run_cli("--home", str(isolated_env / "missing"), "worker")
    assert result.code == 2 and "no such memory home" in result.err


PROBE = """
import sys
from memfs.cli import main
code = main(sys.argv[1:])
print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('celery', 'kombu', 'redis')))
"""


def test_pin_ls_never_imports_celery_even_with_a_queue_configured(
        run_cli: Any, isolated_env: Path) -> None:
    assert run_cli("-u", "alex", "-c", "mira", "init").code == 0
    env = {"MEMFS_HOME": str(isolated_env), "MEMFS_QUEUE": "redis://127.0.0.1:1/0",
           "PATH": "/usr/bin:/bin", "HOME": str(isolated_env)}
    out = subprocess.run([sys.executable, "-c", PROBE, "-u", "alex", "-c", "mira", "pin", "ls"],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split("\n")[-2] == "0 []"


def test_without_a_queue_a_compaction_imports_no_celery(isolated_env: Path,
                                                        tmp_path: Path) -> None:
    code = ("import sys; from memfs.app import MemoryStore; from memfs.config import Config;"
            "from tests.test_queue import conversation;"
            f"p = MemoryStore({str(isolated_env)!r}, config=Config(window_budget=60,"
            " dream_trigger='off')).pair('alex', 'mira');"
            "p.add_messages(conversation(5, 'x'));"
            "print(len(list((p.root / '.memfs' / 'events').glob('*.json'))),"
            " [m for m in sys.modules if m.split('.')[0] in ('celery', 'kombu')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.strip() == "1 []"


@pytest.fixture
def silent_broker() -> Iterator[int]:
    """A port that accepts connections and never answers: a hung or blackholed Redis."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield int(sock.getsockname()[1])


def test_a_hung_broker_costs_the_turn_under_a_second_and_then_nothing(
        isolated_env: Path, silent_broker: int, caplog: pytest.LogCaptureFixture) -> None:
    queue = CeleryQueue(f"redis://127.0.0.1:{silent_broker}/0")
    pair = MemoryStore(isolated_env, config=Config(window_budget=60), queue=queue
                       ).pair("alex", "mira")
    caplog.set_level(logging.WARNING, "memfs.queue")
    pair.add_messages(conversation(5, "first"))  # the turn goes on; the event stays
    assert len(pending_events(pair.root)) == 1
    started = time.monotonic()
    assert queue.submit(pair).startswith("not queued")  # in the cool-down: no attempt at all
    assert time.monotonic() - started < 0.05
    queue._down_until = 0.0  # the cool-down is over: one bounded attempt, no retry loop
    started = time.monotonic()
    queue.submit(pair)
    assert time.monotonic() - started < 1.5  # 0.5 s connect + 0.5 s read; kombu's retry sleeps 2 s
    warnings = [r.getMessage() for r in caplog.records if r.name == "memfs.queue"]
    assert len(warnings) == 3 and all("stay pending on disk" in w for w in warnings)
    assert len(pending_events(pair.root)) == 1


def test_the_first_compactions_on_many_threads_at_once_all_reach_the_queue() -> None:
    """A server's first compactions come on several threads at once; celery's lazily built
    module failed an import racing another (`cannot import name 'Celery'`), which lost
    those dreams' jobs. In a fresh process, so celery is not imported yet."""
    script = textwrap.dedent("""
        import threading
        from memfs.agent.jobs.publisher import CeleryQueue
        queue = CeleryQueue("redis://127.0.0.1:1/0")
        start, errors = threading.Barrier(32), []
        def first_use():
            start.wait()
            try:
                queue.app
            except Exception as exc:
                errors.append(repr(exc))
        threads = [threading.Thread(target=first_use) for _ in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(len(errors), errors[:1])
    """)
    for _ in range(4):  # the race does not lose every time: four fresh processes
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "0 []"
