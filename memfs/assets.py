"""Access to the packaged templates and sample memories, wherever memfs is installed."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable


def template_dir() -> Traversable:
    return resources.files("memfs.templates")


def read_template(name: str) -> str:
    """Text of ``templates/<name>`` (e.g. ``"pair/system/persona.md"``)."""
    node = template_dir()
    for part in name.split("/"):
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


def sample_memories_dir() -> Traversable:
    return resources.files("memfs.sample_memories")
