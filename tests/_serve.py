"""Helpers shared by the server tests: a Host on a temporary home, keys, a live uvicorn.

The store is real (git, history, index, dreaming with the offline rules); only the
embedding model is the deterministic ``FakeEmbedder`` of conftest, because these tests
are about mechanics (access, errors, queues), not ranking quality.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from memfs.app import MemoryStore
from memfs.config import Config
from memfs.keys import KeyStore
from memfs.runtime.host import Host
from memfs.runtime.pool import ThreadPoolQueue
from memfs.server.app import create_app
from tests.conftest import FakeEmbedder


def make_host(home: Path, *, allow_open: bool = False, workers: int = 1,
              max_pairs: int = 64, **config: Any) -> Host:
    store = MemoryStore(home, embedder=FakeEmbedder(), config=Config(**config),
                        queue=ThreadPoolQueue(workers))
    return Host(store, keys=KeyStore(store.home), allow_open=allow_open, max_pairs=max_pairs)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def live_server(host: Host, app: Any = None) -> Iterator[str]:
    """A real uvicorn on 127.0.0.1 (free port) serving ``host`` (or ``app``, an application
    built on it, like the inspector's); stopped after."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app or create_app(host), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
