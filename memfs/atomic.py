"""The one way memfs replaces a file: temp file, fsync, rename, fsync of the directory.

A reader (a person's editor, git, another memfs process) sees the old file or the new
one, never half of one; and once the call returns, a power cut keeps the new one (the
directory entry is synced too, not only the bytes). Everything memfs writes outside the
append-only history goes through here: cards, pins, summary, events, the index snapshot
and vector segments, status files.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def atomic_writer(target: Path) -> Iterator[BinaryIO]:
    """A binary handle whose contents replace ``target`` when the block ends without error.

    On an error the temp file is removed and ``target`` is untouched."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def atomic_write(target: Path, data: str | bytes) -> None:
    """Replace ``target`` with ``data`` (text is written as UTF-8, newlines untouched)."""
    with atomic_writer(target) as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` survive a power cut."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
