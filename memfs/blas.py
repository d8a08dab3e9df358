"""numpy's BLAS on one thread while memfs searches.

Every matrix product on the turn path is small: a few hundred candidates against each
other (``memfs.diversify``, the newer-duplicate check), a turn's messages against the
salience prototypes. OpenBLAS still splits such a product over its threads, and on a busy
2-core machine a split product waits for a core that another process holds: a 150 x 150
product over 384 dimensions took p50 16 ms threaded against 0.19 ms on one thread (load
average 5; BENCHMARKS.md, issue 11). The large product, every stored row against the
query, does not go through BLAS at all (``memfs.similarity``).

The limit holds only inside ``one_thread()`` and is put back after, so the host
process's own numpy keeps its threads. It is process-wide while it holds (OpenBLAS has one
thread count), which costs another thread of the host at most some speed, never a result.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_depth = 0
_saved: list[tuple[Any, int]] = []
_libraries: list[Any] | None = None
_modules = 0


def _blas() -> list[Any]:
    """The BLAS libraries loaded in this process (a scan of loaded objects, ~4 ms), found
    again only when modules were imported since the last scan: a later import (scipy, torch)
    can load a BLAS of its own, which a search must limit too."""
    global _libraries, _modules
    if _libraries is None or len(sys.modules) != _modules:
        try:
            from threadpoolctl import ThreadpoolController

            _libraries = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        except Exception:  # noqa: BLE001 - no threadpoolctl or an odd BLAS: keep numpy's own
            _libraries = []
        _modules = len(sys.modules)  # after the scan's own imports
    return _libraries


@contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with numpy's BLAS on one thread (re-entrant, thread-safe)."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            for lib in _blas():
                if lib.num_threads != 1:
                    _saved.append((lib, lib.num_threads))
                    lib.set_num_threads(1)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                while _saved:
                    lib, threads = _saved.pop()
                    lib.set_num_threads(threads)
