"""Assemble the installed layout of memfs (``memfs/agent``, ``memfs/templates``, ...) in a folder.

A checkout keeps ``agent/`` at the top and maps it to ``memfs.agent`` at install time;
tools that read packages from disk (import-linter, mypy) need the mapped layout. The
layers test uses this; so does ``scripts/typecheck``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPPED = {"agent": "agent", "templates": "templates", "sample_memories": "sample_memories"}


def assemble(dest: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    if (dest / "memfs").exists():
        shutil.rmtree(dest / "memfs")
    shutil.copytree(ROOT / "memfs", dest / "memfs", ignore=skip)
    for folder, name in MAPPED.items():
        shutil.copytree(ROOT / folder, dest / "memfs" / name, ignore=skip)
    return dest


if __name__ == "__main__":
    print(assemble(Path(sys.argv[1])))
