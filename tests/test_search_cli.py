"""``memfs search`` / ``memfs reindex`` through the CLI, and that other commands skip torch."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memfs import history
from memfs.app import MemoryStore
from memfs.gitio import DREAM
from tests.conftest import FakeEmbedder, card_text

PAIR = ("-u", "alex", "-c", "mira")


@pytest.fixture
def seeded(isolated_env: Path, monkeypatch: pytest.MonkeyPatch,
           fresh_indexes: None) -> FakeEmbedder:
    fake = FakeEmbedder()
    monkeypatch.setattr("memfs.embed.default_embedder", lambda name="": fake)
    pair = MemoryStore(isolated_env).pair("alex", "mira")
    pair.repo.commit({
        "cards/c-thu.md": card_text("c-thu", "Meeting with Lin on Thursday.", status="stale",
                                    superseded_by="c-fri"),
        "cards/c-fri.md": card_text("c-fri", "Meeting with Lin moved to Friday."),
    }, "dream", "cards", DREAM)
    history.append(pair.root, "s-20261105-01", "user", "Lin says the meeting room is tiny",
                   dt.datetime(2026, 11, 5, tzinfo=dt.timezone.utc))
    return fake


def test_json_output_is_one_document_in_the_contract_shape(seeded: FakeEmbedder,
                                                           run_cli: Any) -> None:
    result = run_cli(*PAIR, "search", "meeting with Lin", "--json", "-k", "3")
    assert result.code == 0
    doc = json.loads(result.out)
    assert doc["query"] == "meeting with Lin"
    assert [h["id"] for h in doc["hits"]][:1] == ["c-fri"]
    kinds = {h["kind"] for h in doc["hits"]}
    assert kinds == {"card", "message"}
    contract = {"id", "kind", "path", "status", "score", "text", "signals"}
    # issue 12's additions (README "Search"): how often a text was said, when, by whom
    extras = {"count", "ts", "role", "first_said", "last_said", "collapsed", "neighbour"}
    for hit in doc["hits"]:
        assert contract <= set(hit) <= contract | extras
        assert hit["count"] >= 1
        assert ("ts" in hit) == (hit["kind"] == "message")
        assert hit["status"] == "active" and isinstance(hit["signals"]["semantic"], float)
    message = [h for h in doc["hits"] if h["kind"] == "message"][0]
    assert message["id"] == "s-20261105-01:0"
    assert message["path"] == "history/s-20261105-01.jsonl"


def test_include_stale_adds_the_stale_card_marked(seeded: FakeEmbedder, run_cli: Any) -> None:
    plain = run_cli(*PAIR, "search", "meeting with Lin Thursday", "--json").json()
    assert "c-thu" not in [h["id"] for h in plain["hits"]]
    wide = run_cli(*PAIR, "search", "meeting with Lin Thursday", "--json",
                   "--include-stale").json()
    assert {h["id"]: h["status"] for h in wide["hits"]}["c-thu"] == "stale"
    human = run_cli(*PAIR, "search", "meeting with Lin Thursday", "--include-stale")
    assert "c-thu" in human.out and "(stale)" in human.out


def test_explain_prints_every_signal(seeded: FakeEmbedder, run_cli: Any) -> None:
    out = run_cli(*PAIR, "search", "meeting with Lin", "--explain", "-k", "1").out
    for signal in ("semantic", "bm25", "entity", "recency", "salience"):
        assert signal in out


def test_reindex_rebuilds_from_the_vector_cache(seeded: FakeEmbedder, run_cli: Any) -> None:
    run_cli(*PAIR, "reindex")
    first = seeded.embedded
    result = run_cli(*PAIR, "reindex")
    assert result.code == 0 and "embedded 0" in result.out and seeded.embedded == first
    assert "embedded 3" in run_cli(*PAIR, "reindex", "--no-cache").out


def test_bad_input_is_one_line_and_exit_2(seeded: FakeEmbedder, run_cli: Any) -> None:
    result = run_cli(*PAIR, "search", "x", "-k", "0")
    assert result.code == 2 and "Traceback" not in result.err
    missing = run_cli("-u", "nobody", "-c", "mira", "search", "x")
    assert missing.code == 2 and "memfs init" in missing.err


def test_commands_that_do_not_search_never_import_torch(isolated_env: Path) -> None:
    code = (
        "import sys\n"
        "from memfs.cli import main\n"
        "assert main(['-u', 'alex', '-c', 'mira', 'init']) == 0\n"
        "assert main(['-u', 'alex', '-c', 'mira', 'pin', 'add', 'Allergic to peanuts']) == 0\n"
        "assert main(['-u', 'alex', '-c', 'mira', 'pin', 'ls']) == 0\n"
        "try:\n"
        "    main(['search', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "bad = [m for m in ('torch', 'sentence_transformers') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
