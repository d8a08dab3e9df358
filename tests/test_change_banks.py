"""The change banks (``agent/dream/data/change_bank_*.jsonl``): helper-written (card, sentence,
change?) pairs that the change-stage candidates of stops 39 and 40 fit on (branches ``x-chg``,
``x-chg2``, ``x-chg4``; no shipped code reads them yet). A fit reads every line, so a malformed
line, a label that is not a boolean or a pair written twice with two labels would silently
change what the next candidate learns."""

from __future__ import annotations

import json
from pathlib import Path

import memfs.agent

BANKS = sorted((Path(memfs.agent.__file__).parent / "dream" / "data").glob("change_bank_*.jsonl"))
KINDS = {"change", "continuity", "other_person", "hypothetical", "unrelated", "other_card"}


def test_every_bank_line_is_a_labelled_pair_and_no_pair_is_written_twice() -> None:
    assert [p.stem[-1] for p in BANKS] == list("abcdefgh")
    seen: dict[tuple[str, str], bool] = {}
    for path in BANKS:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert len(rows) >= 300, path.name
        for row in rows:
            assert set(row) == {"card", "said", "change", "kind"}, (path.name, row)
            assert isinstance(row["change"], bool) and row["kind"] in KINDS, (path.name, row)
            assert row["change"] == (row["kind"] == "change"), (path.name, row)
            assert row["card"].startswith("The user") and row["said"].strip(), (path.name, row)
            key = (row["card"], row["said"])
            assert key not in seen, (path.name, key)
            seen[key] = row["change"]
        assert {r["change"] for r in rows} == {True, False}, path.name


def test_the_ordinary_chat_pairs_are_all_no_change_and_come_from_spent_profile_sets_only() -> None:
    """``change_chat.jsonl`` (stop 41, x-flag3): the pairs the stage judged on six spent profile sets,
    where no fact changes. A pair from a fresh set would leak it into the judge's fit."""
    from memfs.agent.dream.fit_change import CHAT, bank_items

    rows = [json.loads(line) for line in CHAT.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 2000
    assert all(set(r) == {"card", "said", "change", "kind", "from"} and r["change"] is False and r["kind"] == "chat"
               for r in rows)
    assert {r["from"] for r in rows} == {"dev", "dev2", "blind9", "blind10", "blind11", "blind12"}
    assert len({(r["card"], r["said"]) for r in rows}) == len(rows)
    assert sum(1 for *_, y in bank_items() if y == 0) >= len(rows)  # the fit reads them with the banks
