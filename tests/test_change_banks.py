"""The change banks (``bench/data/change_banks/change_bank_*.jsonl``): helper-written (card,
sentence, change?) pairs that the change-stage candidates of stops 39 to 41 fit on (branches
``x-chg``, ``x-chg2``, ``x-chg4``, ``x-flag``; no shipped code reads them, so since stop 42 they
live with the benches, out of the wheel). A fit reads every line, so a malformed
line, a label that is not a boolean or a pair written twice with two labels would silently
change what the next candidate learns."""

from __future__ import annotations

import json
from pathlib import Path

BANKS = sorted((Path(__file__).parents[1] / "bench" / "data" / "change_banks").glob("change_bank_*.jsonl"))
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
