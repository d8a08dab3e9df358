"""Constraint splits blind19 to blind28, each with its own small-talk bank: load-only checks
(no search, no model). One set of checks for all (blind19 and blind20 were two copies of one file).

Each is measured once by the lead and never tuned on, so nothing here runs the eval on them: the
probes and the bank are loaded, and the history is built as the eval builds it. A split's bank must
be new against every bank written before it (``EARLIER``).
"""

from __future__ import annotations

from statistics import median
from typing import Any

import pytest
from memfs.agent.evals.constraints import bank_of, build_history, groups_of, load_probes
from memfs.agent.evals.planted_data import _bank
from memfs.agent.evals.splits import CONSTRAINT_BANKS, CONSTRAINT_FILES

from tests._banks import (
    BANK_KEYS,
    DOMAINS,
    Template,
    check_history,
    check_slots,
    lines_of,
    profile_banks,
)

EARLIER = {"blind19": ("blind18",), "blind20": ("blind18", "blind19"),
           "blind21": ("blind18", "blind19", "blind20"),
           "blind22": ("blind18", "blind19", "blind20", "blind21"),
           "blind23": ("blind18", "blind19", "blind20", "blind21", "blind22"),
           "blind24": ("blind18", "blind19", "blind20", "blind21", "blind22", "blind23"),
           "blind25": ("blind18", "blind19", "blind20", "blind21", "blind22", "blind23", "blind24"),
           "blind26": ("blind18", "blind19", "blind20", "blind21", "blind22", "blind23", "blind24",
                       "blind25"),
           "blind27": ("blind18", "blind19", "blind20", "blind21", "blind22", "blind23", "blind24",
                       "blind25", "blind26"),
           "blind28": ("blind18", "blind19", "blind20", "blind21", "blind22", "blind23", "blind24",
                       "blind25", "blind26", "blind27")}
"""Per split, the constraint splits with their own bank written before it."""
SPLITS = tuple(EARLIER)


def _earlier(split: str) -> list[dict[str, Any]]:
    banks = [bank_of(s) for s in EARLIER[split]]
    assert all(b is not None for b in banks)
    return [b for b in banks if b is not None]


@pytest.mark.parametrize("split", SPLITS)
def test_loads_forty_probes_eight_per_domain_half_plain_with_windows(split: str) -> None:
    n = split.removeprefix("blind")
    assert CONSTRAINT_FILES[split] == f"data/constraint_probes{n}.jsonl"
    probes = load_probes(split)
    assert len(probes) == 40 and [p.id for p in probes] == [f"c{n}-{k:02d}" for k in range(1, 41)]
    assert all(sum(p.domain == d for p in probes) == 8 for d in DOMAINS)
    assert sum(p.kind == "plain" for p in probes) == 20
    assert sum(p.kind == "indirect" for p in probes) == 20
    assert all(sum(p.domain == d and p.kind == "plain" for p in probes) == 4 for d in DOMAINS)
    assert sum(bool(p.before) for p in probes) >= 20
    assert all(len(p.before) in (2, 4) and p.before[0][0] == "user" and p.before[-1][0] == "assistant"
               for p in probes)
    assert all(p.constraint.strip() and p.request.strip() for p in probes)
    assert len({p.constraint for p in probes}) == 40 and len({p.request for p in probes}) == 40


def _topic_names(bank: dict[str, Any]) -> set[str]:
    return {t["name"] for t in bank["topics"]}


@pytest.mark.parametrize("split", SPLITS)
def test_bank_has_at_least_32_topics_new_to_every_other_bank(split: str) -> None:
    n = split.removeprefix("blind")
    assert CONSTRAINT_BANKS[split] == f"data/constraint_bank{n}.json"
    bank = bank_of(split)
    assert bank is not None and all(key in bank for key in BANK_KEYS)
    names = [t["name"] for t in bank["topics"]]
    assert len(set(names)) == len(names) >= 32
    assert not set(names) & {t for b in _earlier(split) for t in _topic_names(b)}
    assert not set(names) & _topic_names(_bank())
    assert not set(names) & {t for b in profile_banks() for t in _topic_names(b)}
    check_slots(bank)


def _replies(bank: dict[str, Any]) -> set[str]:
    return {r.lower() for ln in lines_of(bank) for r in ln["replies"]}


@pytest.mark.parametrize("split", SPLITS)
def test_bank_shares_no_reply_with_another_bank(split: str) -> None:
    bank = bank_of(split)
    assert bank is not None
    others = [_bank(), *_earlier(split), *profile_banks()]
    assert not _replies(bank) & {r for b in others for r in _replies(b)}


@pytest.mark.parametrize("n_messages", [1600, 200])
@pytest.mark.parametrize("split", SPLITS)
def test_history_has_each_constraint_once_and_no_other_banks_lines(split: str,
                                                                   n_messages: int) -> None:
    """Every constraint once; no message is a planted bank line (user line or reply, as
    blind18's test checks) or a user line of an earlier split's own bank."""
    planted, earlier = _bank(), _earlier(split)
    patterns = [Template(s) for ln in lines_of(planted) for s in (ln["user"], *ln["replies"])]
    patterns += [Template(ln["user"]) for b in earlier for ln in lines_of(b)]
    greetings = planted["greetings"] + [g for b in earlier for g in b["greetings"]]
    check_history(split, n_messages, patterns, tuple(f"{g} " for g in greetings))


def _words(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize("split", ["blind24", "blind25", "blind26", "blind27", "blind28"])
def test_length_does_not_give_a_constraint_away(split: str) -> None:
    """blind21-23's constraints were the longest lines of every history, so word count alone
    ranked all 40 among their pair's best 40. From blind24 on: the bank's user templates are at
    least 0.6 x as long as the constraints (median words), at least 40% of them run 15-40
    words, and in a 1,600-message history word count alone puts at most 20 of the 40 constraints
    among their pair's 40 longest distinct user lines (a tie counts for the constraint)."""
    probes, bank = load_probes(split), bank_of(split)
    assert bank is not None
    templates = [ln["user"] for t in bank["topics"] for ln in t["lines"]]
    constraints = [p.constraint for p in probes]
    assert median(map(_words, templates)) >= 0.6 * median(map(_words, constraints))
    assert sum(15 <= _words(u) <= 40 for u in templates) >= 0.4 * len(templates)
    assert sum(6 <= _words(c) <= 14 for c in constraints) == 20
    assert sum(15 <= _words(c) <= 35 for c in constraints) == 20
    in_top = 0
    for group in groups_of(probes, 5):
        lines = {m["content"] for _, msgs in build_history(group, 1600, bank=bank)
                 for m in msgs if m["role"] == "user"}
        for p in group:
            longer = sum(_words(line) > _words(p.constraint) for line in lines if line != p.constraint)
            in_top += longer < 40
    assert in_top <= 20
