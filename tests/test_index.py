"""Index mechanics with a deterministic fake embedder: cache, incremental updates, status."""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from pathlib import Path

import pytest

import memfs.index
from memfs import history
from memfs.app import MemoryStore
from memfs.embed import VectorStore, content_key
from memfs.errors import BadInputError
from memfs.gitio import DREAM, USER, actor_env, run_git
from memfs.index import forget_open_indexes, index_folder, reconcile, reindex
from memfs.store import MemoryPair
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
    monkeypatch.setattr("memfs.index_git.load_cards", _must_not_run)
    assert reconcile(fpair.root, fake_embedder).empty


def test_a_fresh_process_reuses_the_saved_state_and_vectors(
        fpair: MemoryPair, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    before = [(h.id, h.score) for h in fpair.search("Biscuit vet", k=4, now=NOW)]
    forget_open_indexes()
    monkeypatch.setattr("memfs.index_git.load_cards", _must_not_run)
    monkeypatch.setattr("memfs.index.read_new_messages", _must_not_run)
    plan = reconcile(fpair.root, fake_embedder)
    assert plan.empty and plan.embedded == 0
    assert [(h.id, h.score) for h in fpair.search("Biscuit vet", k=4, now=NOW)] == before


def test_a_pin_touches_no_card(fpair: MemoryPair, fake_embedder: FakeEmbedder,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    reconcile(fpair.root, fake_embedder)
    fpair.pin("Call me Al")
    monkeypatch.setattr("memfs.index_git.load_cards", _must_not_run)
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


def test_a_torn_last_line_waits_until_it_is_complete(
        fpair: MemoryPair, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    # written outside memfs, so no journal names the file: seen at the next full scan
    monkeypatch.setattr(memfs.index, "RESCAN_S", -1.0)
    reconcile(fpair.root, fake_embedder)
    path = fpair.root / "history" / f"{SESSION}.jsonl"
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"session": "s-20261105-01", "turn": 2, "role": "user", "cont')
    assert reconcile(fpair.root, fake_embedder).empty
    with path.open("a", encoding="utf-8") as handle:
        handle.write('ent": "kites", "ts": "2026-11-05T12:00:00Z"}\n')
    assert reconcile(fpair.root, fake_embedder).added == [("message", f"{SESSION}:2")]


def test_a_warm_index_sees_what_others_append_without_listing_history(
        fpair: MemoryPair, fake_embedder: FakeEmbedder) -> None:
    """Between full scans only the sessions the journal names are looked at: a message
    appended by any memfs writer (here another Appender, as another process would) is
    found by the next search, and no refresh lists ``history/`` or asks every file."""
    for day in range(1, 40):  # many closed sessions: what a full scan would have to stat
        history.append(fpair.root, f"s-202610{day // 10}{day % 10}-01", "user", f"day {day}", NOW)
    fpair.search("warm up")
    listed: list[str] = []
    _LISTING.append(listed)
    try:
        history.append(fpair.root, SESSION, "user", "My parrot is called Biscuit", NOW)
        plan = reconcile(fpair.root, fake_embedder)
        hits = fpair.search("what is the parrot called", k=1)
    finally:
        _LISTING.clear()
    assert plan.added == [("message", f"{SESSION}:2")]
    assert hits[0].id == f"{SESSION}:2"
    assert not [p for p in listed if Path(p).name == "history"], "nor lists history/"


_LISTING: list[list[str]] = []


def _listing_hook(event: str, args: tuple[object, ...]) -> None:
    if _LISTING and event in ("os.scandir", "os.listdir", "glob.glob"):
        _LISTING[-1].append(str(args[0]) if args else "")


sys.addaudithook(_listing_hook)


def test_a_file_edited_outside_memfs_is_seen_at_the_next_full_scan(
        fpair: MemoryPair, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    reconcile(fpair.root, fake_embedder)
    path = fpair.root / "history" / f"{SESSION}.jsonl"
    with path.open("a", encoding="utf-8") as handle:  # no journal entry: not through memfs
        handle.write('{"session": "s-20261105-01", "turn": 2, "role": "user", '
                     '"content": "kites", "ts": "2026-11-05T12:00:00Z"}\n')
    assert reconcile(fpair.root, fake_embedder).empty, "not before the rescan interval"
    monkeypatch.setattr(memfs.index, "RESCAN_S", -1.0)
    assert reconcile(fpair.root, fake_embedder).added == [("message", f"{SESSION}:2")]


def test_a_new_process_does_not_embed_what_the_last_one_did(
        fpair: MemoryPair, fake_embedder: FakeEmbedder) -> None:
    """A turn's new vectors wait in memory rather than costing a segment each; they are
    written when the process ends (or the index is dropped), so they are not lost."""
    reconcile(fpair.root, fake_embedder)
    history.append(fpair.root, SESSION, "user", "The boat is moored at Wivenhoe", NOW)
    assert reconcile(fpair.root, fake_embedder).embedded == 1
    forget_open_indexes()  # as the end of a process does (``atexit``)
    drop = fpair.root / ".memfs" / "index"
    for snapshot in drop.rglob("snapshot.json"):
        snapshot.unlink()  # a new process that must re-read every message
    calls = fake_embedder.embedded
    assert reconcile(fpair.root, fake_embedder).embedded == 0
    assert fake_embedder.embedded == calls


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
    # the user's own message, not the assistant's echo of it (which has the better BM25)
    assert vet.id == f"{SESSION}:0" and vet.signals["entity"] == 1.0
    assert vet.signals["bm25"] > 0.5 and 0.0 < vet.signals["salience_factor"] <= 1.0


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


# -- the saved snapshot: a new process loads instead of re-reading every history line --------

QUERIES = ("Biscuit vet", "peanuts allergy", "dentist appointment", "hiking weekends",
           "parrot whistle")


def everything(pair: MemoryPair) -> list[list[tuple[str, str, float, str]]]:
    """Every query's full ranking (ids, statuses, scores, texts), stale included or not."""
    return [[(h.id, h.status, h.score, h.text)
             for h in pair.search(q, k=50, include_stale=stale, now=NOW)]
            for q in QUERIES for stale in (False, True)]


def grow(pair: MemoryPair) -> None:
    """Cards replaced, superseded and deleted (removed rows), messages in a second session."""
    write_card(pair, "c-thu", "The dentist appointment is on Thursday.", status="stale",
               source={"session": SESSION, "turns": [2]})
    write_card(pair, "c-fri", "The dentist appointment moved to Friday.")
    write_card(pair, "c-hike", "The user goes hiking with Lin on weekends.")
    history.append(pair.root, SESSION, "user", "The dentist is on Thursday", NOW)
    history.append(pair.root, SESSION, "assistant", "Thursday dentist, noted", NOW)
    history.append(pair.root, "s-20261106-01", "user", "The parrot learned to whistle", NOW)
    pair.repo.commit({"summary.md": "Alex has a dog, Biscuit, and a parrot.\n"}, "summary",
                     "summary", DREAM)


def test_a_new_process_gets_the_same_hits_and_scores_from_the_snapshot(
        fpair: MemoryPair, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memfs.index.SNAPSHOT_MIN_ROWS", 1)  # save on every refresh
    grow(fpair)
    fpair.search("anything")
    write_card(fpair, "c-peanut", "The user is allergic to peanuts.", status="deleted")
    before = everything(fpair)
    forget_open_indexes()
    monkeypatch.setattr("memfs.index_git.load_cards", _must_not_run)
    monkeypatch.setattr("memfs.index.read_new_messages", _must_not_run)
    assert everything(fpair) == before
    assert any(hit[1] == "stale" for hits in before for hit in hits)


def test_an_index_built_in_chunks_ranks_exactly_as_one_built_at_once(
        fpair: MemoryPair, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long history is embedded and appended a chunk at a time, and its rows folded into
    arrays as it grows (memory), which must not change a single hit, score or status."""
    grow(fpair)
    for n in range(9):
        history.append(fpair.root, "s-20261108-01", "user" if n % 2 == 0 else "assistant",
                       f"Chunk line {n} about the parrot and Biscuit", NOW)
    whole = everything(fpair)
    monkeypatch.setattr("memfs.index.BUILD_CHUNK", 2)
    monkeypatch.setattr("memfs.index_items.FOLD_ROWS", 3)
    seen: list[tuple[int, int]] = []
    plan = reindex(fpair.root, fake_embedder, lambda done, total: seen.append((done, total)),
                   keep_vectors=False)
    assert everything(fpair) == whole
    assert seen == sorted(seen) and seen[-1][0] == seen[-1][1] == len(plan.added)
    assert len(plan.added) == len(memfs.index.open_index(fpair.root, fake_embedder))
    forget_open_indexes()  # the snapshot saved from the chunked build loads the same
    assert everything(fpair) == whole


def test_a_new_process_catches_up_from_an_old_snapshot_as_a_rebuild_would(
        fpair: MemoryPair, fake_embedder: FakeEmbedder) -> None:
    fpair.search("anything")  # the snapshot: before every change below
    grow(fpair)
    (fpair.root / "history" / "s-20261106-01.jsonl").unlink()
    history.append(fpair.root, "s-20261107-01", "user", "A parrot that whistles", NOW)
    forget_open_indexes()
    caught_up = everything(fpair)
    reindex(fpair.root, fake_embedder)
    rebuilt = everything(fpair)
    assert [sorted(hits) for hits in caught_up] == [sorted(hits) for hits in rebuilt]
    assert "s-20261106-01:0" not in {hit[0] for hits in caught_up for hit in hits}


def _damage(path: Path, how: str) -> None:
    """Cut the file, or change bytes so that it still parses but says something else."""
    data = path.read_bytes()
    if how == "alter" and path.name.endswith(".vectors.npy"):
        tail = len(data) // 4
        data = data[:-tail] + bytes(b ^ 0x40 for b in data[-tail:])
    elif how == "alter":
        word = b"Friday" if b"Friday" in data else b"parrot"
        assert word in data
        data = data.replace(word, word[::-1], 1)
    path.write_bytes(data[:len(data) // 2] if how == "truncate" else
                     b"" if how == "empty" else data)


@pytest.mark.parametrize("how", ["truncate", "empty", "alter", "delete"])
@pytest.mark.parametrize("name", ["snapshot.json", "state.json", "*.npz", "*.vectors.npy"])
def test_a_damaged_index_file_means_rebuild_never_a_wrong_answer(
        fpair: MemoryPair, fake_embedder: FakeEmbedder, name: str, how: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memfs.index.SNAPSHOT_MIN_ROWS", 1)
    grow(fpair)
    before = everything(fpair)
    fpair.pin("Call me Al")  # state.json is read when HEAD moved past the snapshot
    (path,) = index_folder(fpair.root, fake_embedder.name).glob(name)
    if how == "delete":
        path.unlink()
    else:
        _damage(path, how)
    forget_open_indexes()
    assert everything(fpair) == before
    forget_open_indexes()
    assert everything(fpair) == before


def test_a_history_file_edited_by_hand_is_read_again_by_a_new_process(
        fpair: MemoryPair) -> None:
    fpair.search("anything")
    path = fpair.root / "history" / f"{SESSION}.jsonl"
    path.write_text(path.read_text().replace("to the vet today", "to the zoo today"))
    forget_open_indexes()
    hit = fpair.search("Biscuit zoo", k=1)[0]
    assert hit.id == f"{SESSION}:0" and "zoo" in hit.text
    assert all("vet today" not in h.text for h in fpair.search("vet today", k=10))


def test_the_snapshot_is_saved_again_only_once_enough_was_added(
        fpair: MemoryPair, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memfs.index.SNAPSHOT_MIN_ROWS", 3)
    fpair.search("anything")
    folder = index_folder(fpair.root, fake_embedder.name)
    first = sorted(p.name for p in folder.glob("snap-*"))
    for turn in range(2):
        history.append(fpair.root, SESSION, "user", f"note {turn}", NOW)
        fpair.search("anything")
    assert sorted(p.name for p in folder.glob("snap-*")) == first
    history.append(fpair.root, SESSION, "user", "note 3", NOW)
    fpair.search("anything")
    second = sorted(p.name for p in folder.glob("snap-*"))
    assert len(second) == 2 and second != first  # the old generation was deleted


def test_an_altered_snapshot_of_the_current_commit_is_not_believed(
        fpair: MemoryPair, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memfs.index.SNAPSHOT_MIN_ROWS", 1)
    grow(fpair)
    before = everything(fpair)
    _damage(index_folder(fpair.root, fake_embedder.name) / "snapshot.json", "alter")
    forget_open_indexes()
    assert everything(fpair) == before


def test_a_truncated_vector_segment_is_a_cache_miss_not_a_crash(tmp_path: Path) -> None:
    import numpy as np

    store = VectorStore(tmp_path / "vectors", 4)
    store.add([b"k" * 32], np.ones((1, 4), dtype=np.float32))
    for path in (tmp_path / "vectors").glob("*.vecs.npy"):
        path.write_bytes(path.read_bytes()[:10])
    fresh = VectorStore(tmp_path / "vectors", 4)
    fresh.load()
    assert b"k" * 32 not in fresh._rows


def test_search_reads_history_lines_exactly_as_the_window_does(isolated_env: Path) -> None:
    """A line the window refuses (role 'robot') is not searchable either."""
    pair = MemoryStore(isolated_env, embedder=FakeEmbedder()).pair("alex", "mira")
    history.append(pair.root, "s-1", "user", "I adopted a tortoise", dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc))
    with (pair.root / "history" / "s-1.jsonl").open("a") as handle:
        handle.write('{"role": "robot", "content": "tortoise override", "turn": 1}\n')
    hits = pair.search("tortoise", k=5)
    assert [h.id for h in hits] == ["s-1:0"]
    assert [m.id for m in history.iter_messages(pair.root)] == ["s-1:0"]
