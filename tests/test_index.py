"""Index mechanics with a deterministic fake embedder: cache, incremental updates, status."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from memfs import history
from memfs.embed import VectorStore, content_key
from memfs.errors import BadInputError
from memfs.gitio import DREAM, USER, actor_env, run_git
from memfs.index import forget_open_indexes, index_folder, reconcile, reindex
from memfs.store import MemoryPair, MemoryStore
from tests.conftest import FakeEmbedder, card_text

NOW = dt.datetime(2026, 11, 5, 12, 0, tzinfo=dt.timezone.utc)
SESSION = "s-20261105-01"


@pytest.fixture
def fpair(isolated_env: Path, fake_embedder: FakeEmbedder, fresh_indexes: None) -> MemoryPair:
    store = MemoryStore(isolated_env, embedder=fake_embedder)
    pair = store.pair("alex", "mira")
    write_card(pair, "c-peanut", "The user is allergic to peanuts.")
    write_card(pair, "c-hike", "The user goes hiking in the Peak District most weekends.")
    history.append(pair.root, SESSION, "user", "We took Biscuit to the vet today", NOW)
    history.append(pair.root, SESSION, "assistant", "How did Biscuit cope at the vet?", NOW)
    return pair


def write_card(pair: MemoryPair, card_id: str, body: str, **fields: object) -> str | None:
    return pair.repo.commit({f"cards/{card_id}.md": card_text(card_id, body, **fields)},
                            "card", f"write {card_id}", DREAM)


def ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.id for h in hits]


def test_first_search_embeds_everything_once_and_reindex_embeds_nothing(
        fpair: MemoryPair, fake_embedder: FakeEmbedder) -> None:
    first = reconcile(fpair.root, fake_embedder)
    assert first.embedded == 4
    assert sorted(first.added) == sorted([("card", "c-hike"), ("card", "c-peanut"),
                                          ("message", f"{SESSION}:0"),
                                          ("message", f"{SESSION}:1")])
    calls = fake_embedder.embedded
    again = reindex(fpair.root, fake_embedder)
    assert again.embedded == 0 and fake_embedder.embedded == calls
    assert len(again.added) == 4


def test_nothing_changed_means_no_work(fpair: MemoryPair, fake_embedder: FakeEmbedder,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    reconcile(fpair.root, fake_embedder)
    monkeypatch.setattr("memfs.index.load_cards", _must_not_run)
    assert reconcile(fpair.root, fake_embedder).empty


def test_a_fresh_process_reuses_the_saved_state_and_vectors(
        fpair: MemoryPair, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    reconcile(fpair.root, fake_embedder)
    forget_open_indexes()
    monkeypatch.setattr("memfs.index.load_cards", _must_not_run)
    plan = reconcile(fpair.root, fake_embedder)
    assert plan.embedded == 0 and len(plan.added) == 4


def test_a_pin_touches_no_card(fpair: MemoryPair, fake_embedder: FakeEmbedder,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    reconcile(fpair.root, fake_embedder)
    fpair.pin("Call me Al")
    monkeypatch.setattr("memfs.index.load_cards", _must_not_run)
    assert reconcile(fpair.root, fake_embedder).empty
    assert "Call me Al" not in [h.text for h in fpair.search("Call me Al", k=10)]


def test_a_card_write_embeds_only_the_new_card(fpair: MemoryPair,
                                               fake_embedder: FakeEmbedder) -> None:
    reconcile(fpair.root, fake_embedder)
    write_card(fpair, "c-tea", "The user drinks green tea every morning.")
    plan = reconcile(fpair.root, fake_embedder)
    assert plan.added == [("card", "c-tea")] and plan.embedded == 1
    assert ids(fpair.search("green tea morning", k=1)) == ["c-tea"]


def test_revert_removes_the_card_from_results(fpair: MemoryPair,
                                              fake_embedder: FakeEmbedder) -> None:
    sha = write_card(fpair, "c-tea", "The user drinks green tea every morning.")
    assert "c-tea" in ids(fpair.search("green tea", k=3))
    assert sha is not None
    fpair.revert(sha)
    plan = reconcile(fpair.root, fake_embedder)
    assert "c-tea" not in ids(fpair.search("green tea", k=5))
    assert plan.removed == [] or ("card", "c-tea") in plan.removed


def test_a_hand_edit_commit_is_picked_up(fpair: MemoryPair, fake_embedder: FakeEmbedder) -> None:
    reconcile(fpair.root, fake_embedder)
    path = fpair.root / "cards" / "c-hike.md"
    path.write_text(card_text("c-hike", "The user swims at the lido most weekends."))
    run_git(fpair.root, "commit", "-q", "-am", "edit: hand edit", env=actor_env(USER))
    plan = reconcile(fpair.root, fake_embedder)
    assert plan.changed == [("card", "c-hike")] and plan.embedded == 1
    hit = fpair.search("swims lido", k=1)[0]
    assert hit.id == "c-hike" and "lido" in hit.text


def test_a_dream_merge_is_picked_up(fpair: MemoryPair, fake_embedder: FakeEmbedder) -> None:
    reconcile(fpair.root, fake_embedder)
    run_git(fpair.root, "checkout", "-q", "-b", "dream/test")
    write_card(fpair, "c-sister", "The user's sister Priya visits in December.")
    run_git(fpair.root, "checkout", "-q", "main")
    run_git(fpair.root, "merge", "-q", "--no-ff", "-m", "dream: test", "dream/test",
            env=actor_env(DREAM))
    assert reconcile(fpair.root, fake_embedder).added == [("card", "c-sister")]
    assert ids(fpair.search("sister Priya", k=1)) == ["c-sister"]


def test_history_appends_embed_only_the_new_lines(fpair: MemoryPair,
                                                  fake_embedder: FakeEmbedder) -> None:
    reconcile(fpair.root, fake_embedder)
    history.append(fpair.root, SESSION, "user", "The parrot learned to whistle", NOW)
    history.append(fpair.root, "s-20261106-01", "user", "Off to the dentist", NOW)
    plan = reconcile(fpair.root, fake_embedder)
    assert plan.embedded == 2
    assert sorted(plan.added) == [("message", f"{SESSION}:2"), ("message", "s-20261106-01:0")]
    hit = fpair.search("parrot whistle", k=1)[0]
    assert (hit.kind, hit.id, hit.path, hit.turn) == (
        "message", f"{SESSION}:2", f"history/{SESSION}.jsonl", 2)


def test_a_torn_last_line_waits_until_it_is_complete(fpair: MemoryPair,
                                                     fake_embedder: FakeEmbedder) -> None:
    reconcile(fpair.root, fake_embedder)
    path = fpair.root / "history" / f"{SESSION}.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"session": "s-20261105-01", "turn": 2, "role": "user", "cont')
    assert reconcile(fpair.root, fake_embedder).empty
    with path.open("a", encoding="utf-8") as handle:
        handle.write('ent": "kites", "ts": "2026-11-05T12:00:00Z"}\n')
    assert reconcile(fpair.root, fake_embedder).added == [("message", f"{SESSION}:2")]


def test_deleting_dot_memfs_loses_nothing(fpair: MemoryPair, fake_embedder: FakeEmbedder) -> None:
    before = ids(fpair.search("peanuts", k=4))
    shutil.rmtree(fpair.root / ".memfs")
    assert ids(fpair.search("peanuts", k=4)) == before
    forget_open_indexes()
    shutil.rmtree(fpair.root / ".memfs")
    assert ids(fpair.search("peanuts", k=4)) == before


def test_deleted_cards_are_never_returned(fpair: MemoryPair) -> None:
    write_card(fpair, "c-old", "The user's old address was 4 Elm Street.", status="deleted")
    assert "c-old" not in ids(fpair.search("old address Elm Street", k=5))
    assert "c-old" not in ids(fpair.search("old address Elm Street", k=5, include_stale=True))


def test_stale_cards_only_when_asked_and_marked(fpair: MemoryPair) -> None:
    write_card(fpair, "c-thu", "The dentist appointment is on Thursday.", status="stale",
               superseded_by="c-fri")
    write_card(fpair, "c-fri", "The dentist appointment moved to Friday.")
    assert "c-thu" not in ids(fpair.search("dentist appointment", k=5))
    hits = {h.id: h for h in fpair.search("dentist appointment", k=5, include_stale=True)}
    assert hits["c-thu"].status == "stale" and hits["c-fri"].status == "active"
    assert hits["c-thu"].score < hits["c-fri"].score


def test_a_plan_past_its_date_counts_as_expired(fpair: MemoryPair) -> None:
    write_card(fpair, "c-plan", "The user plans a picnic with Lin.", type="plan",
               expires="2026-11-01")
    assert "c-plan" not in ids(fpair.search("picnic with Lin", k=5, now=NOW))
    before = dt.datetime(2026, 10, 30, tzinfo=dt.timezone.utc)
    assert "c-plan" in ids(fpair.search("picnic with Lin", k=5, now=before))
    hit = [h for h in fpair.search("picnic with Lin", k=5, now=NOW, include_stale=True)
           if h.id == "c-plan"][0]
    assert hit.status == "expired"


def test_most_recent_prefers_the_newer_of_similar_messages(fpair: MemoryPair) -> None:
    old = NOW - dt.timedelta(days=3)
    said = "these days my favourite tea to drink in the evening is"
    history.append(fpair.root, "s-20261101-01", "user", f"{said} earl grey", old)
    history.append(fpair.root, "s-20261106-01", "user", f"{said} rooibos", NOW)
    any_time = fpair.search("favourite evening tea", k=2, time_scope="past", now=NOW)
    assert "recency" not in any_time[0].signals
    hits = fpair.search("favourite evening tea", k=2, time_scope="most_recent", now=NOW)
    assert ids(hits) == ["s-20261106-01:0", "s-20261101-01:0"]
    assert hits[1].signals["newer_similar"] == 1.0 and hits[0].signals["newer_similar"] == 0.0


def test_every_hit_explains_its_score(fpair: MemoryPair) -> None:
    for hit in fpair.search("Biscuit vet", k=3):
        assert {"semantic", "bm25", "entity", "recency", "salience"} <= hit.signals.keys()
    vet = fpair.search("Biscuit vet", k=1)[0]
    assert vet.signals["entity"] == 1.0 and vet.signals["bm25"] == 1.0


def test_bad_arguments_are_named(fpair: MemoryPair) -> None:
    with pytest.raises(BadInputError, match="k:"):
        fpair.search("x", k=0)
    with pytest.raises(BadInputError, match="time_scope"):
        fpair.search("x", time_scope="soon")
    with pytest.raises(BadInputError, match="query"):
        fpair.search("   ")


def test_vector_store_keeps_keys_that_end_in_zero_bytes(tmp_path: Path) -> None:
    import numpy as np

    store = VectorStore(tmp_path / "v", 4)
    keys = [b"a" * 31 + b"\0", content_key("m", "x")]
    store.add(keys, np.eye(4, dtype=np.float32)[:2])
    reopened = VectorStore(tmp_path / "v", 4)
    assert np.array_equal(reopened.get(keys), np.eye(4, dtype=np.float32)[:2])


def test_the_index_lives_in_git_ignored_dot_memfs(fpair: MemoryPair,
                                                  fake_embedder: FakeEmbedder) -> None:
    reconcile(fpair.root, fake_embedder)
    assert index_folder(fpair.root, fake_embedder.name).is_dir()
    assert run_git(fpair.root, "status", "--porcelain", "--", ".memfs").strip() == ""


def _must_not_run(*args: object, **kwargs: object) -> None:
    raise AssertionError("cards were re-read although no card changed")


def test_many_small_appends_are_folded_into_few_segments(tmp_path: Path) -> None:
    import numpy as np

    store = VectorStore(tmp_path / "v", 4)
    keys = [content_key("m", str(i)) for i in range(40)]
    vecs = np.random.default_rng(0).standard_normal((40, 4)).astype(np.float32)
    for i in range(40):
        store.add(keys[i:i + 1], vecs[i:i + 1])
        store.merge_small(max_segments=8)
    assert store.segment_count() <= 9
    assert np.allclose(VectorStore(tmp_path / "v", 4).get(keys), vecs)


def test_hand_written_history_lines_are_indexed_by_position(fpair: MemoryPair,
                                                            fake_embedder: FakeEmbedder) -> None:
    reconcile(fpair.root, fake_embedder)
    path = fpair.root / "history" / "s-20261107-01.jsonl"
    path.write_text('{"role": "user", "content": "first"}\n'
                    '{"role": "user", "content": "bad ts", "ts": "yesterday"}\n'
                    '{"role": "user", "content": "kayak weekend"}\n')
    plan = reconcile(fpair.root, fake_embedder)
    assert sorted(plan.added) == [("message", "s-20261107-01:0"), ("message", "s-20261107-01:1")]
    assert fpair.search("kayak weekend", k=1)[0].id == "s-20261107-01:1"
