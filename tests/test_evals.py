"""The ``memfs eval`` commands, end to end through the CLI, on the real pipeline and model.

The quick sizes CI runs (300 planted messages, 4 isolation pairs, 200 pin messages) are
run here with their real thresholds, and each eval is also shown to *fail* when the layer
it measures is broken — an eval that cannot fail proves nothing. One model load serves
the whole test session (``real_embedder``), handed to the evals through
``memfs.cli.evals.eval_embedder``.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memfs.embed import Embedder


@pytest.fixture
def shared_model(real_embedder: Embedder, monkeypatch: pytest.MonkeyPatch) -> Embedder:
    """Every eval run by the CLI in this test uses the session's one model load."""
    monkeypatch.setattr("memfs.cli.evals.eval_embedder", lambda state: real_embedder)
    return real_embedder


# -- planted ----------------------------------------------------------------------------------


def test_planted_quick_run_recalls_facts_through_the_pipeline(run_cli: Any,
                                                               shared_model: Embedder) -> None:
    result = run_cli("eval", "planted", "--messages", "300", "--json")
    assert result.code == 0, result.out + result.err
    report = result.json()
    fresh, memory = report["passes"]["new session"], report["passes"]["memory only"]
    assert fresh["totals"]["recalled"] >= fresh["thresholds"]["min_recalled"] >= 6
    assert memory["totals"]["recalled"] >= memory["thresholds"]["min_recalled"] >= 4
    assert fresh["totals"]["stale"] == memory["totals"]["stale"] == 0
    assert report["pipeline"]["compactions"] >= 2
    assert report["pipeline"]["dreams"] == report["pipeline"]["compactions"]
    assert report["pipeline"]["cards"].get("active", 0) >= 3
    for row in memory["probes"]:
        if row["outcome"] == "recalled":
            # long-term memory alone: never the recent window, always a named layer
            assert row["sources"] and "window" not in row["sources"], row
    assert report["messages"] == 300


def test_planted_fails_without_long_term_memory(run_cli: Any, shared_model: Embedder,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Dreams that keep nothing and a search that finds nothing: the eval must fail, and
    its table must say which probes missed. (Either layer alone still carries some facts:
    past-message search recalls about half of them with dreaming broken.)"""
    from memfs.agent.dream.ops import Extraction

    def forgetful(llm: Any, pair: Any = None) -> Any:
        return lambda window, cards, summary, now: Extraction(summary="", ops=[])

    monkeypatch.setattr("memfs.agent.dream.runner.make_extractor", forgetful)
    monkeypatch.setattr("memfs.search.rank", lambda index, q, weights: [])
    # and the suggestion path's constraint search (issue 12), which finds "city" on its own
    monkeypatch.setattr("memfs.search.constraint_search", lambda *a, **k: [])
    monkeypatch.setenv("COLUMNS", "200")
    result = run_cli("eval", "planted", "--messages", "120")
    assert result.code == 1, result.out + result.err
    assert "FAILED" in result.out and "memory only: recalled 0/8" in result.out
    for probe in ("allergy", "dog", "sister", "job", "city", "band", "dentist", "horror"):
        assert probe in result.out


def test_planted_quick_scenario_keeps_every_fact_in_order() -> None:
    from memfs.agent.evals.planted import planted_scenario

    full, quick = planted_scenario(7, 1000), planted_scenario(7, 300)
    messages = quick.messages()
    assert len(messages) == 300 and len(quick.sessions) == len(full.sessions)
    assert [p.content for p in quick.planted] == [p.content for p in full.planted]
    assert [messages[p.index]["content"] for p in quick.planted] == [p.content for p in quick.planted]
    assert [p.index for p in quick.planted] == sorted(p.index for p in quick.planted)
    for probe in quick.probes:
        assert probe.updated_at is None or probe.updated_at > probe.planted_at
    stamps = [m["ts"] for m in messages]
    assert stamps == sorted(stamps)


# -- isolation --------------------------------------------------------------------------------


def test_isolation_four_pairs_zero_leaks(run_cli: Any, shared_model: Embedder) -> None:
    """alex/mira, alex/atlas, alex-2/mira, alex-2/atlas: same character names, one user id
    a prefix of another, one user telling two characters contradicting things."""
    result = run_cli("eval", "isolation", "--pairs", "4", "--json")
    assert result.code == 0, result.out + result.err
    report = result.json()
    assert report["probes"] == 16 and report["leaks"] == 0
    assert report["own_recall"] >= report["thresholds"]["min_own_recall"]
    assert report["pipeline"]["dreams"] >= 4  # each pair compacted and dreamed


def test_isolation_fails_on_a_leak(run_cli: Any, shared_model: Embedder,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug that writes one pair's card into another pair's repository is caught."""
    import memfs.agent.evals.isolation as isolation

    from memfs.gitio import USER

    built: list[Any] = []
    real_build = isolation.build_pair

    def leaky_build(store: Any, facts: Any) -> Any:
        pair = real_build(store, facts)
        if built:
            victim = built[0]
            card = next(c for c in victim.cards() if "dog" in c.body)
            pair.repo.commit({card.path: card.to_text()}, "card", "leak", USER)
        built.append(pair)
        return pair

    monkeypatch.setattr(isolation, "build_pair", leaky_build)
    result = run_cli("eval", "isolation", "--pairs", "2", "--json")
    assert result.code == 1
    leaks = result.json()["leak_details"]
    assert leaks and {x["pair"] for x in leaks} == {"alex/atlas"}
    assert {x["found"] for x in leaks} == {"Biscuit"} and leaks[0]["owner"] == "alex/mira"


# -- pins -------------------------------------------------------------------------------------


def test_pins_in_every_context_across_compactions(run_cli: Any, shared_model: Embedder) -> None:
    result = run_cli("eval", "pins", "--messages", "120", "--stride", "40", "--json")
    assert result.code == 0, result.out + result.err
    report = result.json()
    assert report["missed"] == 0 and report["contexts"] >= 5
    assert {c["after_pin"] for c in report["checks"] if c["why"].startswith("checkpoint")} == {50}
    assert report["pipeline"]["compactions"] >= 2
    assert report["pipeline"]["dreams"] == report["pipeline"]["compactions"]
    assert sum(c["why"] == "after a dream" for c in report["checks"]) >= 2


def test_pins_eval_fails_when_the_pin_is_lost_mid_way(real_embedder: Embedder) -> None:
    from memfs.agent.evals.pins import run_pins

    def lose_pin(pair: Any, messages: int) -> None:
        if messages == 20:
            pair.unpin(1)

    report = run_pins(40, stride=10, embedder=real_embedder, tamper=lose_pin)
    assert not report.passed
    assert {c.after for c in report.misses} >= {20, 30, 40}
    assert [c.after for c in report.checks if c.present] == [10]


# -- decision and longmemeval -------------------------------------------------------------------


def test_decision_eval_passes_and_reports_both_classes(run_cli: Any) -> None:
    result = run_cli("eval", "decision", "--json")
    report = result.json()
    assert result.code == (0 if report["passed"] else 1)
    assert report["recall"]["total"] == 30 and report["specificity"]["total"] == 30


def _haystack_question(qid: str, evidence: str, question: str) -> dict[str, Any]:
    filler = [f"Let's talk about topic number {i}, like the weather in spring." for i in range(30)]
    turns = [{"role": "user", "content": t} for t in filler]
    turns.insert(17, {"role": "user", "content": evidence, "has_answer": True})
    return {"question_id": qid, "question_type": "single-session-user", "question": question,
            "answer": "x", "question_date": "2023/05/20 (Sat) 02:21",
            "haystack_session_ids": ["s1"], "haystack_dates": ["2023/05/01 (Mon) 10:00"],
            "haystack_sessions": [turns], "answer_session_ids": ["s1"]}


def _write_slice(path: Path, questions: Sequence[dict[str, Any]]) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(list(questions), handle)
    return path


def test_longmemeval_reports_recall_and_exit_code(run_cli: Any, shared_model: Embedder,
                                                  tmp_path: Path) -> None:
    data = _write_slice(tmp_path / "slice.json.gz", [
        _haystack_question("q1", "My cat Juniper is three years old.", "How old is my cat?"),
        _haystack_question("q2", "I bought a red bicycle at the flea market.",
                           "Where did I buy my bike?")])
    result = run_cli("eval", "longmemeval", str(data), "--cache-dir", str(tmp_path / "c"),
                     "--json")
    assert result.code == 0, result.out + result.err
    report = result.json()
    assert report["questions"] == 2
    assert report["methods"]["hybrid"]["all"]["R@10"] == 1.0


def test_bad_input_is_one_line_and_exit_2(run_cli: Any) -> None:
    for args in (("eval", "longmemeval", "/no/such/slice.json.gz"),
                 ("eval", "planted", "--messages", "301"),
                 ("eval", "planted", "--messages", "20"),
                 ("eval", "isolation", "--pairs", "1"),
                 ("eval", "pins", "--messages", "7")):
        result = run_cli(*args)
        assert result.code == 2, args
        assert result.err.startswith("memfs: error:") and result.err.count("\n") == 1, result.err


def test_planted_asks_a_configured_model_on_the_graded_context(real_embedder: Embedder,
                                                              tmp_path: Path) -> None:
    """With a provider, the model gets exactly the graded context and its answer is scored."""
    from memfs.agent.evals.planted import probe_row
    from memfs.agent.evals.planted_data import generate_planted

    from memfs.app import MemoryStore
    from tests.conftest import FakeLLM

    scenario = generate_planted(7)
    probe = next(p for p in scenario.probes if p.id == "allergy")
    pair = MemoryStore(tmp_path / "h", embedder=real_embedder).pair("u", "c")
    pair.pin("Allergic to peanuts.")
    model = FakeLLM().enqueue("Popcorn! Nothing with peanuts, of course.")
    row = probe_row(pair, scenario, probe, model)
    assert row.score.outcome == "recalled" and row.sources == ["pins"]
    assert row.answer_score is not None and row.answer_score.outcome == "recalled"
    call = model.calls[0]
    assert any("Allergic to peanuts." in block for block in call["system"])
    assert call["messages"][-1] == {"role": "user", "content": probe.question}


# -- decision ---------------------------------------------------------------------------------


def test_decision_with_the_model_plans_as_a_turn_does(run_cli: Any, shared_model: Embedder) -> None:
    """``--model`` adds the learned reading (stop 42): on blind4 it searches for more of the
    messages that need memory than the rules alone, as measured once (17 and 10 of 20)."""
    rules = run_cli("eval", "decision", "--split", "blind4", "--json").json()
    model = run_cli("eval", "decision", "--split", "blind4", "--model", "--json").json()
    assert rules["recall"]["hits"] == 10 and model["recall"]["hits"] >= 17
    assert model["specificity"]["hits"] >= 12
    assert "learned reading" in model["decider"]
