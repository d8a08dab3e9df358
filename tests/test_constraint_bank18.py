"""Constraint split blind18 and its own small-talk bank: load-only checks (no search, no model).

blind18 is measured once by the lead and never tuned on, so nothing here runs the eval on it:
the probes and the bank are loaded, and the history is built as the eval builds it.
"""

from __future__ import annotations

import hashlib
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


def test_blind18_loads_forty_probes_eight_per_domain_half_plain() -> None:
    probes = load_probes("blind18")
    assert len(probes) == 40 and [p.id for p in probes] == [f"c18-{n:02d}" for n in range(1, 41)]
    assert all(sum(p.domain == d for p in probes) == 8 for d in DOMAINS)
    assert sum(p.kind == "plain" for p in probes) == 20
    assert sum(p.kind == "indirect" for p in probes) == 20
    assert all(sum(p.domain == d and p.kind == "plain" for p in probes) == 4 for d in DOMAINS)
    assert all(len(p.before) == 4 and p.before[0][0] == "user" and p.before[-1][0] == "assistant"
               for p in probes)
    assert all(p.constraint.strip() and p.request.strip() for p in probes)
    assert len({p.constraint for p in probes}) == 40


def _other_banks() -> list[dict[str, Any]]:
    """Every other bank in the repository: the planted eval's and the profile sets' inline ones."""
    return [_bank(), *profile_banks()]


def test_blind18_bank_loads_with_thirty_new_topics_and_only_blind18_19_have_one() -> None:
    assert set(CONSTRAINT_BANKS) == {"blind18", "blind19", "blind20", "blind21", "blind22", "blind23",
                                     "blind24", "blind25", "blind26", "blind27", "blind28"} and set(CONSTRAINT_BANKS) <= set(CONSTRAINT_FILES)
    assert all(bank_of(split) is None for split in CONSTRAINT_FILES if split not in CONSTRAINT_BANKS)
    bank = bank_of("blind18")
    assert bank is not None and all(key in bank for key in BANK_KEYS)
    names = [t["name"] for t in bank["topics"]]
    assert len(set(names)) == len(names) >= 30
    others = {t["name"] for b in _other_banks() for t in b["topics"]}
    assert not set(names) & others
    check_slots(bank)


@pytest.mark.parametrize("n_messages", [1600, 200])
def test_blind18_history_has_none_of_the_planted_banks_lines(n_messages: int) -> None:
    planted = _bank()
    patterns = [Template(s) for ln in lines_of(planted) for s in (ln["user"], *ln["replies"])]
    check_history("blind18", n_messages, patterns, tuple(f"{g} " for g in planted["greetings"]))


def _digest(split: str, n_messages: int) -> str:
    h = hashlib.sha256()
    for group in groups_of(load_probes(split), 5):
        for sid, msgs in build_history(group, n_messages, bank=bank_of(split)):
            h.update(sid.encode())
            for m in msgs:
                h.update(f"{m['role']}\t{m['content']}\t{m['ts'].isoformat()}\n".encode())
    return h.hexdigest()


@pytest.mark.parametrize(("split", "n_messages", "expected"), [
    ("blind17", 1600, "043ca3456cfd936954e279426c22d2a5922e3aba08fee9c4362ea778274b7191"),
    ("blind17", 200, "0ce4ceecc66780d58deff1edaf372842d02b399fd925094f7c12f8edc6ebae28"),
    ("dev3", 1600, "7fe9d6b000467d6cfea1b23db3a685b287cb52ccd6d258022bda18cf2bb0be99"),
    ("test", 1600, "5f85cd70577db60c3214400838069a2b49d140121de793585d573138c9f6b3e2"),
])
def test_other_splits_history_is_unchanged_by_the_bank_mapping(split: str, n_messages: int,
                                                                 expected: str) -> None:
    """Digests computed with main's code (a6639ee) before the mapping was added."""
    assert _digest(split, n_messages) == expected
