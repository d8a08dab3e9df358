"""Issue 12 mechanics (fake embedder): duplicate groups, diversity, time expressions,
placeholders, the snapshot's new arrays, the plan's constraint domains, the CLI."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from memfs import history
from memfs.app import MemoryStore
from memfs.dedupe import DupGroups, dup_key, normal_form
from memfs.diversify import select
from memfs.errors import BadInputError
from memfs.history import OFFLINE_PLACEHOLDER
from memfs.index import forget_open_indexes, open_index, refresh
from memfs.retrieval_plan import RetrievalPlan
from memfs.store import MemoryPair
from memfs.timeexpr import parse_time
from tests.conftest import FakeEmbedder

NOW = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
SESSION = "s-20261101-01"


@pytest.fixture
def fpair(isolated_env: Path, fake_embedder: FakeEmbedder, fresh_indexes: None) -> MemoryPair:
    return MemoryStore(isolated_env, embedder=fake_embedder).pair("alex", "mira")


def say(pair: MemoryPair, *lines: tuple[str, str], start: dt.datetime = NOW,
        session: str = SESSION) -> None:
    for n, (role, text) in enumerate(lines):
        history.append(pair.root, session, role, text, start + dt.timedelta(hours=n))


def test_normal_form_and_keys_ignore_case_and_punctuation_but_not_role() -> None:
    assert normal_form("Haha, my cousin is HILARIOUS!!") == "haha my cousin is hilarious"
    assert dup_key("user", "Tell me more!") == dup_key("user", "tell me more")
    assert dup_key("user", "Tell me more!") != dup_key("assistant", "Tell me more!")
    assert dup_key("user", "x") != 0


def test_groups_count_first_and_last_and_survive_appends_and_removals() -> None:
    keys = np.array([5, 0, 5, 7, 5], dtype=np.int64)
    times = np.array([10.0, 11.0, 30.0, 12.0, 20.0])
    groups = DupGroups()
    groups.build(keys, np.ones(5, dtype=bool), times)
    assert groups.info(0) == (3, 10.0, 30.0) and groups.info(1) == (1, None, None)
    assert groups.representative.tolist() == [False, True, True, True, False]
    assert groups.members(2) == [0, 2, 4]  # what --explain lists as collapsed copies
    keys = np.append(keys, 5)
    groups.append(keys, [5], [40.0])
    assert groups.info(5) == (4, 10.0, 40.0) and groups.members(0) == [0, 2, 4, 5]
    assert groups.representative.tolist() == [False, True, False, True, False, True]
    live = np.array([True, True, True, True, True, False])  # the newest copy is removed
    groups.build(keys, live, np.append(times, 40.0))
    assert groups.info(2) == (3, 10.0, 30.0) and groups.representative[2]
    assert groups.members(4) == [0, 2, 4]
    keys = np.append(keys, [9, 9])  # a text first said after the build: a group of its own
    groups.append(keys, [9, 9], [50.0, 60.0])
    assert groups.members(6) == [6, 7] and groups.info(7) == (2, 50.0, 60.0)
    assert groups.members(4) == [0, 2, 4]


def test_collapsing_near_copies_keeps_what_the_plain_walk_keeps() -> None:
    """The walk that only visits candidates with a better near-copy gives what visiting
    every candidate gives, on random similarity patterns."""
    from memfs.diversify import _collapse

    def plain(same: np.ndarray) -> tuple[list[int], dict[int, list[int]]]:
        is_kept, kept, merged = np.zeros(len(same), dtype=bool), [], {}  # type: ignore[var-annotated]
        for j in range(len(same)):
            hits = np.flatnonzero(same[:j, j] & is_kept[:j])
            if len(hits):
                merged.setdefault(int(hits[0]), []).append(j)
            else:
                is_kept[j] = True
                kept.append(j)
        return kept, merged

    rng = np.random.default_rng(1)
    for _ in range(200):
        vecs = rng.standard_normal((int(rng.integers(0, 60)), 4))
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        same = vecs @ vecs.T >= rng.uniform(0.3, 0.99)
        assert _collapse(same) == plain(same)


def test_bm25_matches_are_the_documents_flatnonzero_finds() -> None:
    """The candidates' lexical matches come from the postings, not from a pass over every
    document: the same documents, base and appended postings, after removals too."""
    from memfs.ranking import BM25

    rng = np.random.default_rng(11)
    words = [f"w{i}" for i in range(30)]
    docs = [list(rng.choice(words, size=rng.integers(1, 8))) for _ in range(400)]
    base = BM25()
    for terms in docs[:300]:
        base.add(terms)
    bm25 = BM25.from_arrays(base.to_arrays())  # a frozen base part, as a snapshot loads it
    for terms in docs[300:]:
        bm25.add(terms)
    for n in rng.choice(400, size=40, replace=False):
        bm25.forget(docs[n])
    for _ in range(50):
        query = list(rng.choice(words + ["absent"], size=rng.integers(1, 5)))
        scores, matched = bm25.matches(query)
        np.testing.assert_array_equal(scores, bm25.scores(query))
        np.testing.assert_array_equal(matched, np.flatnonzero(scores))


def test_an_item_table_reads_the_same_rows_from_columns_tail_and_its_cache() -> None:
    """Rows are built into ``Item``s on read and kept for the next search: a kept row, a
    row's id read alone and a row read after a save and load must all be the same."""
    from memfs.cards import Card
    from memfs.index_items import BUILT_ROWS, ItemTable, card_item, message_item

    table = ItemTable()
    messages = [history.Message(SESSION, n, "user" if n % 2 else "assistant", f"line {n}",
                                NOW + dt.timedelta(minutes=n)) for n in range(6)]
    card = card_item(Card("c-1", "fact", "Alex is allergic to peanuts", created=NOW))
    table.extend([message_item(m) for m in messages[:3]] + [card])
    loaded = ItemTable.from_arrays(table.to_arrays(), table.sessions, table.roles, table.other)
    loaded.extend([message_item(m) for m in messages[3:]])
    expected = [message_item(m) for m in messages[:3]] + [card] + \
        [message_item(m) for m in messages[3:]]
    for _ in range(2):  # built, then kept
        assert [loaded[r] for r in range(len(loaded))] == expected
        assert [loaded.id_of(r) for r in range(len(loaded))] == [i.id for i in expected]
    assert loaded[0] is loaded[0] and BUILT_ROWS >= 1024


def test_repeated_messages_are_one_hit_that_says_how_often(fpair: MemoryPair,
                                                           run_cli: object) -> None:
    lines = [("user", "lol my cat is such a drama queen")] * 8
    say(fpair, *lines, ("user", "My cat Miso needs her thyroid pills twice a day"))
    hits = fpair.search("my cat", k=5, now=NOW + dt.timedelta(days=1))
    drama = [h for h in hits if "drama" in h.text]
    assert len(drama) == 1 and drama[0].count == 8
    assert drama[0].first_said == "2026-11-20T12:00:00Z"
    assert drama[0].last_said == "2026-11-20T19:00:00Z"
    doc = drama[0].to_json()
    assert {"id", "kind", "path", "status", "score", "text", "signals"} <= doc.keys()
    assert doc["count"] == 8 and len(doc["collapsed"]) == 5
    result = run_cli("-u", "alex", "-c", "mira", "search", "my cat", "--explain")  # type: ignore[operator]
    assert result.code == 0
    assert "said 8 times" in result.out and "collapsed into this hit" in result.out
    assert "diversity_penalty" in result.out and "salience_factor" in result.out


def test_select_collapses_near_identical_and_penalises_one_topic() -> None:
    a = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    b = np.array([0.999, 0.045, 0.0], dtype=np.float32)
    c = np.array([0.8, 0.6, 0.0], dtype=np.float32)
    d = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    vecs = np.stack([a, b / np.linalg.norm(b), c, d])
    scores = np.array([1.0, 0.99, 0.9, 0.85], dtype=np.float32)
    plain = select(vecs, scores, 3, 2.0, 0.0, 0.5)
    assert plain.order == [0, 1, 2]
    chosen = select(vecs, scores, 3, 0.95, 0.5, 0.5)
    assert chosen.order == [0, 3, 2] and chosen.merged[0] == [1]
    assert chosen.penalty[2] > 0 and chosen.penalty[3] == 0


def test_time_expressions_point_into_the_past_only() -> None:
    last_month = parse_time("what did we eat last month?", NOW)
    assert last_month is not None and last_month.span
    assert dt.datetime.fromtimestamp(last_month.start or 0, dt.timezone.utc).date() == \
        dt.date(2026, 10, 1)
    may = parse_time("What did I buy in May?", NOW)
    assert may is not None and dt.datetime.fromtimestamp(may.start or 0,
                                                         dt.timezone.utc).month == 5
    assert parse_time("what should I plant in May?", NOW) is None
    assert parse_time("any ideas for dinner tonight?", NOW) is None
    first = parse_time("the first time I went climbing", NOW)
    assert first is not None and first.order == "earliest" and not first.span
    assert (parse_time("When did I last see Tom?", NOW) or first).order == "latest"


def test_the_first_time_prefers_the_oldest_of_similar_messages(fpair: MemoryPair) -> None:
    said = "we went climbing at the quarry wall"
    say(fpair, ("user", f"{said} with Jo"), start=NOW - dt.timedelta(days=200),
        session="s-20260504-01")
    say(fpair, ("user", f"{said} with Sam"), start=NOW - dt.timedelta(days=5),
        session="s-20261115-01")
    hits = fpair.search("the first time we went climbing at the quarry", k=2, now=NOW)
    assert "Jo" in hits[0].text and hits[1].signals["older_similar"] == 1.0


def test_placeholder_replies_are_never_indexed(fpair: MemoryPair) -> None:
    say(fpair, ("user", "I love the smell of basil"),
        ("assistant", f"{OFFLINE_PLACEHOLDER} I remember: basil."))
    index = open_index(fpair.root, fpair.store.embedder)
    refresh(index)
    assert len(index) == 1
    assert all(not h.text.startswith("(offline)") for h in fpair.search("basil", k=5))


def test_a_question_hit_brings_the_turn_that_answered_it(fpair: MemoryPair) -> None:
    say(fpair, ("user", "What name should I give my new puppy?"),
        ("assistant", "How about Pretzel? It suits a curly tail."))
    hit = fpair.search("what name should I give my puppy", k=1, now=NOW)[0]
    assert hit.id == f"{SESSION}:0"
    assert hit.neighbour == {"id": f"{SESSION}:1", "role": "assistant",
                             "text": "How about Pretzel? It suits a curly tail."}


def test_a_fresh_process_loads_salience_limits_keys_and_pieces_from_the_snapshot(
        fpair: MemoryPair, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memfs.index.SNAPSHOT_MIN_ROWS", 1)
    long = " ".join(f"Sentence {n} is about the garden shed and the roof." for n in range(8))
    say(fpair, ("user", "hi"), ("user", "hi"), ("user", long))
    index = open_index(fpair.root, fpair.store.embedder)
    refresh(index)
    before = (index.salience.copy(), index.dupkeys.copy(), index.pieces.parent.copy(),
              index.limit.copy(), index.learned.copy(), index.learned_ask.copy())
    assert len(before[2]) >= 2 and before[1][0] == before[1][1]
    assert len(before[3]) == len(before[0])
    forget_open_indexes()
    again = open_index(fpair.root, fpair.store.embedder)
    refresh(again)
    assert np.array_equal(again.salience, before[0]) and np.array_equal(again.dupkeys, before[1])
    assert np.array_equal(again.pieces.parent, before[2])
    assert np.array_equal(again.limit, before[3])
    assert np.array_equal(again.learned, before[4]) and len(before[4]) == len(before[0])
    assert np.array_equal(again.learned_ask, before[5]) and len(before[5]) == len(before[0])
    assert [h.count for h in fpair.search("hi", k=1, now=NOW)] == [2]


def test_the_plan_carries_constraint_domains() -> None:
    base = {"need_retrieval": True, "memory_types": ["preference"], "entities": ["user"],
            "time_scope": "any", "search_query": "drinks", "confidence": 0.8, "reason": "x"}
    assert RetrievalPlan.from_dict(base).constraint_domains == ()
    plan = RetrievalPlan.from_dict({**base, "constraint_domains": ["drink", "food"]})
    assert plan.constraint_domains == ("drink", "food")
    assert plan.to_dict()["constraint_domains"] == ["drink", "food"]
    with pytest.raises(BadInputError, match="constraint_domains"):
        RetrievalPlan.from_dict({**base, "constraint_domains": ["music"]})


def test_offline_rules_name_domains_by_meaning_when_given_a_classifier() -> None:
    from memfs.agent.plan import plan_offline

    plan = plan_offline("Which cocktail should I order at the wedding?", [],
                        classify=lambda text, wording: ("drink",))
    assert plan.need_retrieval and plan.constraint_domains == ("drink",)
    # without the model only the suggestion word lists count, and they miss this one
    assert plan_offline("Which cocktail should I order at the wedding?", []).constraint_domains == ()
    assert plan_offline("Any snack ideas?", []).constraint_domains == ("food",)
