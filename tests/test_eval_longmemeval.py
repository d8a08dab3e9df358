"""The LongMemEval recall harness on a tiny hand-made dataset (fake embedder, no cache)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from memfs.agent.evals.longmemeval import (
    format_table,
    load_questions,
    run_longmemeval,
    split_of,
)

from memfs.errors import BadInputError
from tests.conftest import FakeEmbedder


def question(qid: str, qtype: str, text: str, evidence: str) -> dict[str, object]:
    filler = [{"role": "user", "content": f"we chatted about topic {i} and the weather"}
              for i in range(12)]
    return {"question_id": qid, "question_type": qtype, "question": text, "answer": "x",
            "question_date": "2023/06/23 (Fri) 07:31",
            "haystack_session_ids": ["a", "b"],
            "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/02 (Tue) 10:00"],
            "haystack_sessions": [filler, [{"role": "user", "content": evidence,
                                            "has_answer": True}]],
            "answer_session_ids": ["b"]}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json.gz"
    data = [question("q1", "single-session-user", "Where do I keep my old sneakers?",
                     "I keep my old sneakers in a shoe rack in the closet"),
            question("q2", "knowledge-update", "What is my cat called?",
                     "My cat is called Pixel and she is very loud")]
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(data, handle)
    return path


def test_recall_counts_the_evidence_turn_for_every_method(dataset: Path) -> None:
    report = run_longmemeval(dataset, embedder=FakeEmbedder(), cache_dir=None)
    assert report["questions"] == 2
    for method in ("bm25", "dense", "hybrid"):
        assert report["methods"][method]["all"]["R@1"] == 1.0
        assert report["methods"][method]["knowledge-update"]["n"] == 1
    table = format_table(report)
    assert "| all | 2 | hybrid | 1.000 | 1.000 | 1.000 |" in table


def test_questions_interleave_types_and_split_in_halves(dataset: Path) -> None:
    qs = load_questions(dataset)
    assert [q["question_type"] for q in qs] == ["knowledge-update", "single-session-user"]
    # one question per type: the "first half" of each type is empty, so both are test
    assert {q["split"] for q in qs} == {"test"}
    assert len(load_questions(dataset, limit=1)) == 1


def test_the_committed_dev_test_split_is_the_hash_rule() -> None:
    """bench/data/longmemeval_split.json (committed before any retrieval change) is what
    split_of gives for its ids: nothing was moved between dev and test by hand."""
    committed = json.loads((Path(__file__).parents[1] / "bench" / "data"
                            / "longmemeval_split.json").read_text("utf-8"))
    questions = [{"question_id": qid, "question_type": qtype}
                 for part in ("dev", "test") for qtype, ids in committed[part].items()
                 for qid in ids]
    assert len(questions) == 60 and len({q["question_id"] for q in questions}) == 60
    got = split_of(questions)
    for part in ("dev", "test"):
        for qtype, ids in committed[part].items():
            assert len(ids) == 5 and {got[i] for i in ids} == {part}, qtype


def test_a_file_that_is_not_the_dataset_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "x.json.gz"
    bad.write_text("not gzip")
    with pytest.raises(BadInputError, match="x.json.gz"):
        load_questions(bad)
