"""The public API is a short, deliberate list."""

from __future__ import annotations

import subprocess
import sys

import memfs


def test_exported_names_are_pinned() -> None:
    assert sorted(memfs.__all__) == [
        "BadInputError", "Card", "CardParseError", "ConflictError", "Embedder", "GitError",
        "InvalidIdError", "LLM", "LLMError", "LockError", "MemfsError", "MemoryPair",
        "MemoryStore", "NeedsKeyError", "NotARepoError", "SearchHit",
    ]
    for name in memfs.__all__:
        assert getattr(memfs, name) is not None


def test_every_error_is_a_memfs_error_with_an_exit_code() -> None:
    for name in memfs.__all__:
        obj = getattr(memfs, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, memfs.MemfsError)
            assert obj.exit_code in (1, 2)


def test_import_memfs_does_not_load_torch() -> None:
    code = "import sys, memfs; memfs.MemoryStore; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
