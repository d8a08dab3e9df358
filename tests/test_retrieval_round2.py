"""Issue 12, second round, with the real model: a filler reply whose one word is the
query's best word match takes no slot, a request for a suggestion prefers what the user
said about themselves to the assistant's earlier list, and a constraint said once beats
salient personal news in the constraint search.

Scenes: ``tests/data/retrieval_round2.json``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from memfs import history
from memfs.app import MemoryStore
from memfs.embed import Embedder
from memfs.search import constraint_search, with_weights
from memfs.store import MemoryPair

pytestmark = pytest.mark.model

DATA: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "retrieval_round2.json").read_text("utf-8"))
BACKGROUND: list[str] = json.loads(
    (Path(__file__).parent / "data" / "retrieval_pairs.json").read_text("utf-8"))["background"]
START = dt.datetime(2026, 10, 1, 9, 0, tzinfo=dt.timezone.utc)
NOW = START + dt.timedelta(days=2)


def pair_with(home: Path, embedder: Embedder, name: str,
              lines: list[tuple[str, str]]) -> MemoryPair:
    pair = MemoryStore(home, embedder=embedder).pair("alex", name)
    for n, (role, text) in enumerate(lines):
        history.append(pair.root, "s-20261001-01", role, text, START + dt.timedelta(minutes=n))
    return pair


def test_a_one_word_filler_reply_takes_no_slot(isolated_env: Path, real_embedder: Embedder,
                                               fresh_indexes: None) -> None:
    scene = DATA["filler"]
    lines = [("user", b) for b in BACKGROUND]
    for fact in scene["facts"]:
        lines += [("user", fact), ("assistant", scene["reply"])]
    pair = pair_with(isolated_env, real_embedder, "filler", lines)
    hits = pair.search(scene["query"], k=3, now=NOW)
    assert {h.text for h in hits[:2]} == set(scene["facts"]), [h.text for h in hits]
    assert scene["reply"] not in [h.text for h in hits]
    # with "know" counted as a word of the question it did take a slot
    old = pair.search(scene["query"], k=3, now=NOW,
                      weights=with_weights(framing=False, bm25_ideal=0.0))
    assert scene["reply"] in [h.text for h in old]


def test_a_suggestion_request_prefers_the_users_own_words(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    scene = DATA["request"]
    lines = [("user", b) for b in BACKGROUND[:6]]
    lines += [("user", scene["user"]), ("assistant", "That's a classic!"),
              ("user", "What do people usually carry on a photo walk?"),
              ("assistant", scene["assistant"])]
    pair = pair_with(isolated_env, real_embedder, "request", lines)
    texts = [h.text for h in pair.search(scene["query"], k=3, now=NOW)]
    assert texts[0] == scene["user"], texts
    hit = next(h for h in pair.search(scene["query"], k=5, now=NOW)
               if h.text == scene["assistant"])
    assert hit.signals["request_factor"] == pytest.approx(0.6)


def test_a_constraint_said_once_beats_salient_news(isolated_env: Path, real_embedder: Embedder,
                                                   fresh_indexes: None) -> None:
    scene = DATA["constraint"]
    lines = [("user", b) for b in BACKGROUND]
    for n, news in enumerate(scene["news"]):
        lines.insert(2 * n, ("user", news))
    lines.insert(len(lines) // 2, ("user", scene["said"]))
    pair = pair_with(isolated_env, real_embedder, "constraint", lines)
    hits = constraint_search(pair, scene["request"], ("food",), k=2, now=NOW)
    assert scene["said"] in [h.text for h in hits], [h.text for h in hits]
    limits = {h.text: h.signals["limit"]
              for h in constraint_search(pair, scene["request"], ("food",), k=8, now=NOW)}
    assert all(limits[scene["said"]] > limits[n] for n in scene["news"] if n in limits)
