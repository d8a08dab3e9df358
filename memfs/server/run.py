"""Starting ``memfs serve``: the process's ``Host``, the refusal to listen openly, uvicorn.

A server that listens beyond loopback with no key at all would hand every user's memory
to anyone who can reach the port, so it refuses to start. On loopback with no key it
runs open (every local caller is admin), which is what a developer trying it out wants;
it stops being open as soon as the first key is added.
"""

from __future__ import annotations

import ipaddress
from types import FrameType
from typing import TYPE_CHECKING

from memfs.app import MemoryStore
from memfs.config import Config
from memfs.errors import BadInputError
from memfs.keys import KeyStore
from memfs.runtime.host import DEFAULT_MAX_PAIRS, Host
from memfs.runtime.model import SharedEmbedder
from memfs.runtime.queues import make_queue
from memfs.server.guard import DEFAULT_MAX_BODY

if TYPE_CHECKING:
    from fastapi import FastAPI

GRACE_SECONDS = 30
"""How long a shutdown waits for in-flight requests before closing their connections."""


def is_loopback(bind: str) -> bool:
    if bind == "localhost":
        return True
    try:
        return ipaddress.ip_address(bind.strip("[]")).is_loopback
    except ValueError:
        return False


def build_host(config: Config, bind: str, *, max_pairs: int = DEFAULT_MAX_PAIRS,
               queue: str | None = None, workers: int | None = None) -> Host:
    """The process's store, keys and dream queue; refuses an open non-loopback bind."""
    keys = KeyStore(config.home)
    loopback = is_loopback(bind)
    if not loopback and not keys:
        raise BadInputError(f"--host {bind}: refusing to listen beyond loopback with no API "
                            "keys (anyone who can reach the port could read every memory); "
                            "add one with `memfs key add --user USER`, or bind 127.0.0.1")
    store = MemoryStore(config.home, config=config, embedder=SharedEmbedder(config.embed_model),
                        queue=make_queue(queue or config.queue, workers=workers))
    return Host(store, max_pairs=max_pairs, keys=keys, allow_open=loopback)


def serve(host: Host, bind: str, port: int, *, max_body: int = DEFAULT_MAX_BODY,
          log_level: str = "info", app: FastAPI | None = None) -> None:
    """Run until SIGINT/SIGTERM. At the signal the dream queue starts nothing new; requests
    in flight finish; then running dreams finish; undreamed windows stay pending on disk.

    ``app``: an application built on ``create_app(host)`` with more mounted (``memfs serve``
    passes the one with the inspector); default, the API alone."""
    import uvicorn

    from memfs.server.app import create_app

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            host.stop_dreaming()  # while requests in flight finish, no waiting dream starts
            super().handle_exit(sig, frame)

    config = uvicorn.Config(app or create_app(host, max_body=max_body), host=bind, port=port,
                            log_level=log_level, timeout_graceful_shutdown=GRACE_SECONDS)
    Server(config).run()
