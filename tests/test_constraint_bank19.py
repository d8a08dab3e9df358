"""Constraint split blind19 and its own small-talk bank: load-only checks (no search, no model).

blind19 is measured once by the lead and never tuned on, so nothing here runs the eval on it:
the probes and the bank are loaded, and the history is built as the eval builds it.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import pytest
from memfs.agent.evals.constraints import bank_of, build_history, groups_of, load_probes
from memfs.agent.evals.planted_data import _bank
from memfs.agent.evals.splits import CONSTRAINT_BANKS, CONSTRAINT_FILES

DOMAINS = ("food", "drink", "activity", "gift", "place")
BANK_KEYS = ("slots", "greetings", "prefixes", "signoff", "topics")


def test_blind19_loads_forty_probes_eight_per_domain_half_plain_with_windows() -> None:
    assert CONSTRAINT_FILES["blind19"] == "data/constraint_probes19.jsonl"
    probes = load_probes("blind19")
    assert len(probes) == 40 and [p.id for p in probes] == [f"c19-{n:02d}" for n in range(1, 41)]
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


def _profile_banks() -> list[dict[str, Any]]:
    """The profile sets' inline banks."""
    folder = resources.files("memfs.agent.evals").joinpath("data")
    banks = []
    for item in folder.iterdir():
        if item.name.startswith("profile_") and item.name.endswith(".json"):
            bank = json.loads(item.read_text("utf-8")).get("bank")
            if isinstance(bank, dict):
                banks.append(bank)
    return banks


def test_blind19_bank_has_at_least_32_topics_new_to_every_other_bank() -> None:
    assert CONSTRAINT_BANKS["blind19"] == "data/constraint_bank19.json"
    bank = bank_of("blind19")
    assert bank is not None and all(key in bank for key in BANK_KEYS)
    names = [t["name"] for t in bank["topics"]]
    assert len(set(names)) == len(names) >= 32
    blind18 = bank_of("blind18")
    assert blind18 is not None
    assert not set(names) & _topic_names(blind18)
    assert not set(names) & _topic_names(_bank())
    assert not set(names) & {n for b in _profile_banks() for n in _topic_names(b)}
    slots = set(bank["slots"])
    for line in [ln for t in bank["topics"] for ln in t["lines"]] + bank["signoff"]:
        assert set(re.findall(r"\{(\w+)\}", line["user"] + "".join(line["replies"]))) <= slots
        assert line["replies"]


def _template(text: str) -> re.Pattern[str]:
    """A bank line with its {slots} as wildcards, matched at the end of a message (a user line
    may carry a greeting and an opener before it)."""
    parts = re.split(r"\{\w+\}", text)
    return re.compile(".+?".join(re.escape(p) for p in parts) + "$", re.IGNORECASE)


def _replies(bank: dict[str, Any]) -> set[str]:
    return {r.lower() for ln in [ln for t in bank["topics"] for ln in t["lines"]] + bank["signoff"]
            for r in ln["replies"]}


def test_blind19_bank_shares_no_reply_with_another_bank() -> None:
    bank = bank_of("blind19")
    assert bank is not None
    others = [_bank(), bank_of("blind18"), *_profile_banks()]
    assert not _replies(bank) & {r for b in others if b for r in _replies(b)}


@pytest.mark.parametrize("n_messages", [1600, 200])
def test_blind19_history_has_each_constraint_once_and_no_other_banks_lines(n_messages: int) -> None:
    """Every constraint once; no message is a planted bank line (user line or reply, as
    blind18's test checks) or a blind18 bank user line."""
    planted, blind18 = _bank(), bank_of("blind18")
    assert blind18 is not None
    lines = [ln for t in planted["topics"] for ln in t["lines"]] + planted["signoff"]
    patterns = [_template(s) for ln in lines for s in (ln["user"], *ln["replies"])]
    lines = [ln for t in blind18["topics"] for ln in t["lines"]] + blind18["signoff"]
    patterns += [_template(ln["user"]) for ln in lines]
    greetings = tuple(f"{g} " for g in planted["greetings"] + blind18["greetings"])
    probes = load_probes("blind19")
    bank = bank_of("blind19")
    for group in groups_of(probes, 5):
        history = build_history(group, n_messages, bank=bank)
        messages = [m["content"] for _, msgs in history for m in msgs]
        assert len(messages) == n_messages
        assert all(messages.count(p.constraint) == 1 for p in group)
        for text in messages:
            assert not text.startswith(greetings), text
            assert not any(rx.search(text) for rx in patterns), text
