"""Shared checks of the constraint splits that bring their own small-talk bank (blind18 to blind28):
the bank's lines as patterns, and the history the eval builds from it."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from memfs.agent.evals.constraints import bank_of, build_history, groups_of, load_probes

DOMAINS = ("food", "drink", "activity", "gift", "place")
BANK_KEYS = ("slots", "greetings", "prefixes", "signoff", "topics")


def profile_banks() -> list[dict[str, Any]]:
    """The profile sets' inline banks."""
    folder = resources.files("memfs.agent.evals").joinpath("data")
    banks = []
    for item in folder.iterdir():
        if item.name.startswith("profile_") and item.name.endswith(".json"):
            bank = json.loads(item.read_text("utf-8")).get("bank")
            if isinstance(bank, dict):
                banks.append(bank)
    return banks


class Template:
    """A bank line with its {slots} as wildcards, matched at the end of a message (a user line
    may carry a greeting and an opener before it). ``search`` first asks what every match needs
    (the message ends with the line's last words and holds each of its other words), so that
    the regular expression only runs on the few messages that could match: with a bank per
    split the checks compare some 13,000 messages with 2,000 lines each (stop 36: 3 minutes for
    one split's histories before, seconds after)."""

    def __init__(self, text: str) -> None:
        parts = re.split(r"\{\w+\}", text)
        self.rx = re.compile(".+?".join(re.escape(p) for p in parts) + "$", re.IGNORECASE)
        self.parts = [p.lower() for p in parts]
        self.quick = all(p.isascii() for p in parts)
        """The shortcut is sure only where lower() and the regex's ignore-case agree: ASCII."""

    def search(self, text: str, low: str | None = None) -> re.Match[str] | None:
        """``low``: ``lowered(text)``, when the caller checks one message against many lines."""
        low = lowered(text) if low is None else low
        if self.quick and low and (not low.endswith(self.parts[-1]) or any(p not in low for p in self.parts[:-1])):
            return None
        return self.rx.search(text)

    @property
    def tail(self) -> str:
        """What every message it matches ends with ("" when that cannot be said)."""
        return self.parts[-1] if self.quick else ""


def lowered(text: str) -> str:
    """``text`` as ``Template.search``'s shortcut reads it: lowercase without a final newline
    (where ``$`` also matches), or "" for text that is not ASCII (no shortcut)."""
    return text.lower().removesuffix("\n") if text.isascii() else ""


def lines_of(bank: dict[str, Any]) -> list[dict[str, Any]]:
    return [ln for t in bank["topics"] for ln in t["lines"]] + bank["signoff"]


def check_slots(bank: dict[str, Any]) -> None:
    """Every line's {slots} are the bank's, and every line has replies."""
    slots = set(bank["slots"])
    for line in lines_of(bank):
        assert set(re.findall(r"\{(\w+)\}", line["user"] + "".join(line["replies"]))) <= slots
        assert line["replies"]


def check_history(split: str, n_messages: int, patterns: list[Template],
                  greetings: tuple[str, ...]) -> None:
    """The history the eval builds for ``split``: ``n_messages`` long, each constraint once, and
    no message opening with one of ``greetings`` or matching one of ``patterns``."""
    bank = bank_of(split)
    tails = tuple(rx.tail for rx in patterns if rx.tail)
    open_ended = [rx for rx in patterns if not rx.tail]
    for group in groups_of(load_probes(split), 5):
        messages = [m["content"] for _, msgs in build_history(group, n_messages, bank=bank)
                    for m in msgs]
        assert len(messages) == n_messages
        assert all(messages.count(p.constraint) == 1 for p in group)
        for text in messages:
            assert not text.startswith(greetings), text
            low = lowered(text)
            # one C-level endswith against every line's tail leaves, for most messages, only
            # the lines whose end is a slot to try one by one
            maybe = patterns if not low or low.endswith(tails) else open_ended
            assert not any(rx.search(text, low) for rx in maybe), text
