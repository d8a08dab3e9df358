"""Constraint split blind20 and its own small-talk bank: load-only checks (no search, no model).

blind20 is measured once by the lead and never tuned on, so nothing here runs the eval on it:
the probes and the bank are loaded, and the history is built as the eval builds it.
"""

from __future__ import annotations

from typing import Any

import pytest
from memfs.agent.evals.constraints import bank_of, load_probes
from memfs.agent.evals.planted_data import _bank
from memfs.agent.evals.splits import CONSTRAINT_BANKS, CONSTRAINT_FILES

from tests._banks import (
    BANK_KEYS,
    DOMAINS,
    check_history,
    check_slots,
    lines_of,
    profile_banks,
    template,
)


def test_blind20_loads_forty_probes_eight_per_domain_half_plain_with_windows() -> None:
    assert CONSTRAINT_FILES["blind20"] == "data/constraint_probes20.jsonl"
    probes = load_probes("blind20")
    assert len(probes) == 40 and [p.id for p in probes] == [f"c20-{n:02d}" for n in range(1, 41)]
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


def test_blind20_bank_has_at_least_32_topics_new_to_every_other_bank() -> None:
    assert CONSTRAINT_BANKS["blind20"] == "data/constraint_bank20.json"
    bank = bank_of("blind20")
    assert bank is not None and all(key in bank for key in BANK_KEYS)
    names = [t["name"] for t in bank["topics"]]
    assert len(set(names)) == len(names) >= 32
    earlier = [bank_of("blind18"), bank_of("blind19")]
    assert all(b is not None for b in earlier)
    assert not set(names) & {n for b in earlier if b for n in _topic_names(b)}
    assert not set(names) & _topic_names(_bank())
    assert not set(names) & {n for b in profile_banks() for n in _topic_names(b)}
    check_slots(bank)


def _replies(bank: dict[str, Any]) -> set[str]:
    return {r.lower() for ln in lines_of(bank) for r in ln["replies"]}


def test_blind20_bank_shares_no_reply_with_another_bank() -> None:
    bank = bank_of("blind20")
    assert bank is not None
    others = [_bank(), bank_of("blind18"), bank_of("blind19"), *profile_banks()]
    assert not _replies(bank) & {r for b in others if b for r in _replies(b)}


@pytest.mark.parametrize("n_messages", [1600, 200])
def test_blind20_history_has_each_constraint_once_and_no_other_banks_lines(n_messages: int) -> None:
    """Every constraint once; no message is a planted bank line (user line or reply, as
    blind18's test checks) or a blind18 or blind19 bank user line."""
    planted, blind18, blind19 = _bank(), bank_of("blind18"), bank_of("blind19")
    assert blind18 is not None and blind19 is not None
    patterns = [template(s) for ln in lines_of(planted) for s in (ln["user"], *ln["replies"])]
    patterns += [template(ln["user"]) for b in (blind18, blind19) for ln in lines_of(b)]
    check_history("blind20", n_messages, patterns,
                  tuple(f"{g} " for g in planted["greetings"] + blind18["greetings"] + blind19["greetings"]))
