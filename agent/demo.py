"""``memfs demo``: the whole loop on a sample pair, offline, in under a minute.

It is the first thing a new user runs, so it shows each layer doing its job: pins that are
always there, a conversation that outgrows its window, a dream (a real subprocess) that
turns the evicted messages into cards as one git merge, the context for probe messages,
and a revert that undoes the whole dream.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from memfs.assets import sample_memories_dir
from memfs.compaction import pending_events
from memfs.errors import BadInputError
from memfs.gitio import USER
from memfs.store import MemoryPair, MemoryStore
from memfs.turn import TurnOptions, add_messages, end_session

LOADED = ("system", "cards", "summary.md", "history")


def sample_pairs() -> list[tuple[str, str]]:
    root = sample_memories_dir()
    return sorted((u.name, c.name) for u in root.iterdir() if u.is_dir() and not u.name.startswith("_")
                  for c in u.iterdir() if c.is_dir())


def load_sample(store: MemoryStore, user: str, character: str) -> MemoryPair:
    """Turn ``sample_memories/<user>/<character>/`` into a committed pair repository."""
    src = sample_memories_dir() / user / character
    if not src.is_dir():
        raise BadInputError(f"no sample pair {user}/{character} (have: "
                            f"{', '.join('/'.join(p) for p in sample_pairs())})")
    pair = store.pair(user, character)
    files = {path: node.read_text(encoding="utf-8") for path, node in _walk(src, "")
             if path.split("/")[0] in LOADED}
    pair.repo.commit(files, "edit", f"load sample memories for {user}/{character}", USER,
                     extra={"Memfs-Window": _spans(files)})
    return pair


def _spans(files: dict[str, str]) -> str:
    """The sample history is already turned into cards: mark it as outside the window."""
    spans = []
    for path, text in sorted(files.items()):
        if path.startswith("history/") and path.endswith(".jsonl"):
            turns = sum(1 for line in text.splitlines() if line.strip())
            if turns:
                spans.append(f"{path[8:-6]}:0-{turns - 1}")
    return ",".join(spans)


def _walk(node: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for child in node.iterdir():
        path = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _walk(child, path + "/")
        else:
            yield path, child


def conversation(user: str, character: str) -> list[dict[str, Any]]:
    import json

    text = (sample_memories_dir() / user / character / "conversation.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def probes(user: str, character: str) -> list[str]:
    text = (sample_memories_dir() / user / character / "probes.txt").read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


@dataclass
class ReplayResult:
    messages: int
    events: int
    dreams: list[str] = field(default_factory=list)
    waited: float = 0.0


def replay(pair: MemoryPair, messages: list[dict[str, Any]], timeout: float = 60.0) -> ReplayResult:
    """Chat the messages in; compaction spawns the dreaming subprocess; wait for it."""
    before = {e.sha for e in pair.log(author="memfs-dream")}
    add_messages(pair, messages, options=TurnOptions(dream="queue"))
    end_session(pair)
    started = time.monotonic()
    from memfs.agent.dream.runner import read_status

    while time.monotonic() - started < timeout:
        if not pending_events(pair.root) and read_status(pair.root) is None:
            break
        time.sleep(0.2)
    waited = time.monotonic() - started
    pair.dream()  # anything the subprocess left (a busy race, a timeout) runs here
    events = len({e.trailers.get("Memfs-Event") for e in pair.log(author="memfs-dream")
                  if e.sha not in before})
    dreams = [e.sha for e in pair.log() if e.is_dream and e.sha not in before]  # newest first
    return ReplayResult(messages=len(messages), events=events, dreams=dreams, waited=waited)


def demo_home(home: str | None) -> Path:
    if home:
        return Path(home).expanduser()
    import tempfile

    return Path(tempfile.mkdtemp(prefix="memfs-demo-"))
