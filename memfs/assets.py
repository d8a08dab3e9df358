"""The packaged templates and sample memories, wherever memfs runs from.

In a source checkout they are the top-level ``templates/`` and ``sample_memories/``
folders; an installed wheel carries them as ``memfs.templates`` and
``memfs.sample_memories`` (see pyproject.toml).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent


def _folder(name: str) -> Traversable:
    local = _CHECKOUT / name
    if (local / "__init__.py").exists():
        return local
    return resources.files(f"memfs.{name}")


def template_dir() -> Traversable:
    return _folder("templates")


def read_template(name: str) -> str:
    """Text of ``templates/<name>`` (e.g. ``"pair/system/persona.md"``)."""
    node = template_dir()
    for part in name.split("/"):
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


def sample_memories_dir() -> Traversable:
    return _folder("sample_memories")
