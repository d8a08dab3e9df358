"""Does a message need memory? The learned reading behind the offline plan's cues (stop 42,
x-need). The sentences are new (in no probe set); the model's held-out figures are in
BENCHMARKS.md."""

from __future__ import annotations

import pytest
from memfs.agent.needs.model import needs_memory, reading, shipped
from memfs.agent.plan_rules import plan_offline

from memfs.embed import Embedder


def _plan(embedder: Embedder, message: str) -> bool:
    needs, threshold = reading(embedder)
    return plan_offline(message, [], needs=needs, need_threshold=threshold).need_retrieval


def test_the_shipped_model_reads_minilm_vectors() -> None:
    model = shipped()
    assert model.weights.shape == (384,) and 0.3 <= model.threshold <= 0.95


@pytest.mark.parametrize("message", [
    "finally heard back from the council about the extension",
    "the physio appointment went well actually",
])
def test_news_about_the_users_life_without_my_or_a_memory_word_searches(
        real_embedder: Embedder, message: str) -> None:
    assert not plan_offline(message, []).need_retrieval  # the cue words alone miss it
    assert _plan(real_embedder, message)


@pytest.mark.parametrize("message", [
    "what's the boiling point of olive oil",
    "write a limerick about a goose",
    "who won the world cup in 2010",
    "how many teaspoons in a tablespoon",
])
def test_general_questions_and_tasks_still_do_not(real_embedder: Embedder, message: str) -> None:
    assert not _plan(real_embedder, message)


def test_another_model_is_never_read_with_these_weights() -> None:
    class Fake:
        name, dim = "fake", 8

        def embed(self, texts: list[str]) -> list[list[float]]:
            raise AssertionError("must not embed")

    assert needs_memory(Fake(), "the landlord still hasn't replied") == 0.0  # type: ignore[arg-type]


def test_a_turn_plans_with_the_model(tmp_path, real_embedder: Embedder) -> None:
    """Through the store, as `memfs context` and every adapter plan a turn."""
    from memfs.agent.services import wired_store

    store = wired_store(tmp_path, embedder=real_embedder)
    pair = store.pair("sam", "mira")
    context = pair.context("finally heard back from the council about the extension")
    assert context.plan.need_retrieval
    assert "reads as about the user's life" in context.plan.reason
