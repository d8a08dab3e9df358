"""The similarity product over distinct rows, and the embedder's memory of recent texts:
both must give exactly what the plain computation gives, only cheaper."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memfs.embed import Vectors
from memfs.embed_memo import RecentEmbedder
from memfs.pair_index import PairIndex, _grow
from memfs.similarity import MIRROR_MIN_ROWS, RowMirror, similarities
from tests.conftest import FakeEmbedder


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_product_over_distinct_rows_equals_the_plain_one_as_rows_are_appended() -> None:
    rng = np.random.default_rng(5)
    texts = _unit(rng.standard_normal((50, 32))).astype(np.float16)
    buffer = np.zeros((0, 32), dtype=np.float16)
    mirror = RowMirror(32)
    for size in (300, 1, 7, 2000):  # repeats of 50 "texts", appended as a chat would
        buffer = _grow(buffer, texts[rng.integers(0, 50, size)])
        query = _unit(rng.standard_normal((1, 32)))[0].astype(np.float32)
        plain = buffer.astype(np.float32) @ query
        np.testing.assert_allclose(similarities(buffer, query, mirror), plain, rtol=0, atol=2e-3)
        assert mirror.count <= 50, "each distinct row is multiplied once"


def test_a_history_of_distinct_texts_is_multiplied_in_place_without_a_copy() -> None:
    """With few repeats a copy of the distinct rows would double the memory and save
    nothing: the mirror steps aside, and the answer stays the plain product."""
    rng = np.random.default_rng(8)
    rows = _unit(rng.standard_normal((MIRROR_MIN_ROWS + 10, 32))).astype(np.float16)
    mirror = RowMirror(32)
    query = _unit(rng.standard_normal((1, 32)))[0].astype(np.float32)
    for end in (100, MIRROR_MIN_ROWS + 10):
        plain = rows[:end].astype(np.float32) @ query
        np.testing.assert_allclose(similarities(rows[:end], query, mirror), plain, atol=2e-3)
    assert mirror.direct and mirror.count == len(rows) and mirror.distinct.nbytes == 0


def test_an_index_that_replaces_its_matrix_starts_a_new_mirror(tmp_path: Path) -> None:
    """Compaction and snapshot loads replace the matrix: the old mirror must not be used
    (two indexes with the same first and last rows once shared one, by address)."""
    from tests.conftest import FakeEmbedder

    index = PairIndex(tmp_path, FakeEmbedder())
    rng = np.random.default_rng(9)
    index.vectors = _unit(rng.standard_normal((20, index.embedder.dim))).astype(np.float16)
    query = _unit(rng.standard_normal((1, index.embedder.dim)))[0].astype(np.float32)
    index.similarities(query)
    swapped = index.vectors.copy()
    swapped[5:] = index.vectors[:15][::-1]
    index.vectors, index.mirrors = swapped, {}  # what _compact and load_snapshot do
    np.testing.assert_allclose(index.similarities(query), swapped.astype(np.float32) @ query,
                               atol=2e-3)


class Counting:
    name, dim = "counting", 4

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.seen += texts
        return np.array([[len(t), t.count("a"), 1.0, 0.0] for t in texts], dtype=np.float32)


def test_recent_texts_go_through_the_model_once() -> None:
    inner = Counting()
    recent = RecentEmbedder(inner, size=3)
    first = recent.embed(["pizza night?", "pizza night?", "ok"])
    again = recent.embed(["ok", "pizza night?"])
    assert inner.seen == ["pizza night?", "ok"]
    np.testing.assert_array_equal(again, first[[2, 0]])
    recent.embed(["a", "b", "c"])  # pushes the oldest out
    recent.embed(["pizza night?"])
    assert inner.seen[-1] == "pizza night?"


def test_an_expected_query_rides_along_with_the_next_batch() -> None:
    inner = Counting()
    recent = RecentEmbedder(inner)
    recent.expect("what did priya say")
    recent.embed(["Priya is running the marathon"])  # the index embeds the new message
    assert inner.seen == ["Priya is running the marathon", "what did priya say"]
    recent.embed(["what did priya say"])  # the search's query: no second model run
    assert len(inner.seen) == 2


def test_the_best_of_several_queries_is_one_pass_with_the_same_answer(tmp_path: Path) -> None:
    from tests.conftest import FakeEmbedder

    index = PairIndex(tmp_path, FakeEmbedder())
    rng = np.random.default_rng(2)
    dim = index.embedder.dim
    index.vectors = _unit(rng.standard_normal((40, dim)))[rng.integers(0, 40, 400)].astype(np.float16)
    protos = _unit(rng.standard_normal((6, dim))).astype(np.float32)
    one_by_one = np.max([index.similarities(p) for p in protos], axis=0)
    np.testing.assert_allclose(index.best_similarities(protos), one_by_one, atol=2e-3)


def test_staged_vectors_of_a_deleted_pair_are_dropped_quietly(tmp_path: Path) -> None:
    """A temporary home removed before the process exits (an eval) must not make the exit
    hook print a traceback: the vectors have nowhere to go."""
    import shutil

    from tests.conftest import FakeEmbedder

    root = tmp_path / "pair"
    (root / ".memfs").mkdir(parents=True)
    index = PairIndex(root, FakeEmbedder())
    index.store.stage([b"k" * 32], np.ones((1, index.embedder.dim), dtype=np.float32))
    shutil.rmtree(root)
    index.flush_vectors()  # raised FileNotFoundError
    assert index._store is None


def test_a_repeated_query_multiplies_only_the_rows_appended_since(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The search and the constraint search of one suggestion turn share the query's
    product; after an append only the new rows are multiplied, with the same answer."""
    import memfs.similarity as sim

    multiplied: list[int] = []
    plain_dot = sim.dot
    monkeypatch.setattr(sim, "dot", lambda rows, q: multiplied.append(len(rows)) or plain_dot(rows, q))
    rng = np.random.default_rng(4)
    rows = _unit(rng.standard_normal((300, 32))).astype(np.float16)
    mirror = RowMirror(32)
    query = _unit(rng.standard_normal((1, 32)))[0].astype(np.float32)
    first = similarities(rows[:200], query, mirror)
    np.testing.assert_array_equal(similarities(rows[:200], query, mirror), first)
    grown = similarities(rows, query, mirror)
    assert multiplied == [200, 100]
    np.testing.assert_allclose(grown, rows.astype(np.float32) @ query, atol=2e-3)
    np.testing.assert_array_equal(grown[:200], first)
    with pytest.raises(ValueError):
        grown[0] = 1.0  # handed out again: nobody may change it in place


def test_a_warm_retrieving_turn_runs_the_model_once(
        isolated_env: Path, fake_embedder: FakeEmbedder, fresh_indexes: None) -> None:
    """The planner's classifier, the index (the turn's new messages) and the search's query
    share one model run: a run costs mostly reading the model's weights."""
    from memfs import MemoryStore
    from memfs.config import Config

    pair = MemoryStore(isolated_env, embedder=fake_embedder,
                       config=Config(dream_trigger="off")).pair("alex", "mira")
    pair.add_messages([{"role": "user", "content": "My sister Ana moved to Porto in May."},
                       {"role": "assistant", "content": "Porto is lovely!"}])
    for n, question in enumerate(("What did I tell you about the dentist last month?",
                                  "Do you remember what Priya said about the marathon?")):
        pair.add_messages([{"role": "assistant", "content": f"Noted, go on {'.' * (n + 1)}"}])
        pair.add_messages([{"role": "user", "content": question}])
        before = len(fake_embedder.calls)  # the first time round: the prototypes too
        assert pair.context(question).plan.need_retrieval
    assert len(fake_embedder.calls) - before == 1, fake_embedder.calls[before:]


def test_new_queries_do_not_push_a_prototype_sets_product_out() -> None:
    """Each turn brings its own query; the constraint search's topic prototypes are the
    same every time, so their product is the one worth keeping."""
    from memfs.similarity import KEPT_PRODUCTS, best_similarities

    rng = np.random.default_rng(6)
    rows = _unit(rng.standard_normal((100, 32))).astype(np.float16)
    mirror = RowMirror(32)
    protos = _unit(rng.standard_normal((3, 32))).astype(np.float32)
    best_similarities(rows, protos, mirror)
    for _ in range(2 * KEPT_PRODUCTS):
        similarities(rows, _unit(rng.standard_normal((1, 32)))[0].astype(np.float32), mirror)
    assert protos.tobytes() in mirror.kept


_LATE_BLAS = """
import json
from threadpoolctl import threadpool_info, threadpool_limits
from memfs.blas import one_thread

def threads():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

with one_thread():  # the first scan: numpy's BLAS only
    pass
import scipy.linalg  # loads a BLAS of its own
threadpool_limits(2)
before = threads()
with one_thread():
    inside = threads()
print(json.dumps([before, inside, threads()]))
"""


def test_a_blas_loaded_after_the_first_search_is_limited_too() -> None:
    """scipy brings its own OpenBLAS; loaded after the first search (a test session, a server
    that imports it later), it was left threaded (found on a fresh CI run)."""
    import json
    import subprocess
    import sys

    pytest.importorskip("scipy.linalg")
    out = subprocess.run([sys.executable, "-c", _LATE_BLAS], capture_output=True, text=True, check=True)
    before, inside, after = json.loads(out.stdout)
    assert len(before) >= 2 and max(before) == 2, out.stdout
    assert inside == [1] * len(before) and after == before, out.stdout


def test_a_search_runs_numpys_blas_on_one_thread_and_puts_it_back(
        isolated_env: Path, fake_embedder: FakeEmbedder, fresh_indexes: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Small products split over BLAS threads waited for a core on a busy machine (a 150 x
    150 product: p50 16 ms threaded, 0.19 ms on one thread); the host keeps its threads."""
    from threadpoolctl import threadpool_info

    from memfs.blas import one_thread

    def threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    import memfs.search
    from memfs.app import MemoryStore

    before = threads()
    assert before, "numpy has a BLAS for threadpoolctl to find"
    seen: list[list[int]] = []
    rank = memfs.search.rank
    monkeypatch.setattr(memfs.search, "rank", lambda *a: seen.append(threads()) or rank(*a))
    MemoryStore(isolated_env, embedder=fake_embedder).pair("alex", "mira").search("cats")
    assert seen == [[1] * len(before)] and threads() == before
    with one_thread():
        with one_thread():  # re-entrant: the inner block leaves the limit to the outer
            pass
        assert threads() == [1] * len(before)
    assert threads() == before
