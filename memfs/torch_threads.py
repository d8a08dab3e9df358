"""One torch thread while a small product runs, shared correctly between threads.

A one-query encode or a float16 matrix-vector product gains nothing from a second thread,
and on a busy 2-core machine OpenMP threads waiting on each other made one 10x slower.
torch's thread count is process-wide, though: a server embedding for two requests at once
that saves and restores it per call can restore the other call's 1 and leave the process
single-threaded for good. So the count is taken down on the first entry and put back on
the last exit, under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_inside = 0
_saved = 0


@contextmanager
def single_thread(torch: Any) -> Iterator[None]:
    """Run the block with ``torch`` on one thread; the count before is restored after the
    last of the blocks running at the same time ends."""
    global _inside, _saved
    with _lock:
        if _inside == 0:
            _saved = torch.get_num_threads()
            torch.set_num_threads(1)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                torch.set_num_threads(_saved)
