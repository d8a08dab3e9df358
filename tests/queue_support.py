"""Real parts for the dream-queue tests: a Debian ``redis-server`` on a free loopback port,
and ``memfs worker`` processes (real Celery workers), each in its own process group so a
test can ``kill -9`` a whole worker the way a machine dies. (A process group, not a new
session: with the kernel's autogroup scheduling each session gets an equal CPU share, so
two workers in two sessions would get twice the machine that one worker gets.)

CI installs Redis with ``apt-get install -y redis-server``; without it these tests fail
(they do not skip): the queue is only tested against the real broker.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

MEMFS = Path(sys.executable).with_name("memfs")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(check: Callable[[], bool], timeout: float, what: str, step: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(step)


def dead(pid: int) -> bool:
    """No such process, or only its zombie (PID 1 in a container may not reap orphans)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


class RedisServer:
    """``redis-server`` on 127.0.0.1 and a port of its own; stop and start it again on
    the same port to play an outage."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed: apt-get install -y redis-server")
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / "redis.log").open("ab")
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder), "--daemonize", "no",
             "--protected-mode", "yes"], stdout=log, stderr=subprocess.STDOUT)
        wait_for(self.answers, 10, f"redis-server on port {self.port}")
        return self

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None


class Worker:
    """``memfs --home HOME worker --queue URL`` in its own process group.

    Its dreams use the offline rules alone (``MEMFS_OFFLINE_EXTRACTOR=rules``): the queue
    tests assert what happens to jobs, not what a dream keeps, and the embedding extractor
    would load the model in every pool process. ``env`` may say otherwise (the bench does)."""

    def __init__(self, home: Path, url: str, log: Path, *, concurrency: int = 1,
                 redeliver_after: float = 600.0, sweep_every: float = 0.0,
                 env: dict[str, str] | None = None) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [str(MEMFS), "--home", str(home), "worker", "--queue", url,
             "--concurrency", str(concurrency), "--redeliver-after", str(redeliver_after),
             "--sweep-every", str(sweep_every)],
            stdout=log.open("ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "MEMFS_OFFLINE_EXTRACTOR": "rules", **(env or {})},
            process_group=0)

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_ready(self, timeout: float = 30) -> Worker:
        def ready() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"worker exited ({self.proc.returncode}):\n{self.text()}")
            return " ready." in self.text()

        wait_for(ready, timeout, "the worker to be ready")
        return self

    def _group(self) -> list[Path]:
        """``/proc/<pid>`` of every live process in the worker's process group."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[2]) == self.proc.pid:
                found.append(stat.parent)
        return found

    def cpu_seconds(self) -> float:
        """CPU time of the worker so far: each live process's own and that of the children
        it has reaped (git, the hooks), so nothing is counted twice."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for proc in self._group():
            try:
                fields = (proc / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        return total / ticks

    def memory(self) -> dict[str, int]:
        """Proportional set size (bytes; shared pages split between the processes that
        share them) of each process of the worker: the main process and its pool."""
        out: dict[str, int] = {}
        for proc in self._group():
            try:
                rollup = (proc / "smaps_rollup").read_text()
            except OSError:
                continue
            pss = next(int(line.split()[1]) for line in rollup.splitlines()
                       if line.startswith("Pss:"))
            out["main" if proc.name == str(self.proc.pid) else proc.name] = pss * 1024
        return out

    def kill9(self) -> None:
        """The machine dies: SIGKILL to the worker and every process it forked."""
        self._signal_group(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """Warm shutdown (SIGTERM), then SIGKILL for anything still alive in the group."""
        self._signal_group(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        self._signal_group(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass  # the whole group is gone already
