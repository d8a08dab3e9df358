"""Realistic conversation text for the scaling benchmarks: a companion's days of chat.

The turns are LongMemEval's (real user requests and assistant replies, shared/data), cut
to their first ``words`` words, because a companion's replies are a few sentences, not the
300-token answers of a general assistant. Each day is one session of ``per_day`` messages,
user and assistant alternating, timestamped two minutes apart from 19:00.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval_s_60.json.gz"
START = dt.datetime(2026, 10, 1, 19, 0, tzinfo=dt.UTC)


def _turns(data: Path, words: int) -> Iterator[tuple[str, str]]:
    with gzip.open(data, "rt", encoding="utf-8") as handle:
        questions: list[dict[str, Any]] = json.load(handle)
    for question in questions:
        for session in question["haystack_sessions"]:
            for turn in session:
                text = " ".join(turn["content"].split()[:words])
                if text:
                    yield turn["role"], text


def days(count: int, per_day: int = 50, words: int = 60, data: Path = DATA,
         start: dt.datetime = START) -> Iterator[list[dict[str, str]]]:
    """``count`` days of chat, each a list of ``{"role","content","ts"}`` messages."""
    turns = _turns(data, words)
    for day in range(count):
        out: list[dict[str, str]] = []
        want = "user"
        for role, text in turns:
            if role != want:
                continue
            ts = start + dt.timedelta(days=day, minutes=2 * len(out))
            out.append({"role": role, "content": text, "ts": ts.isoformat()})
            want = "assistant" if want == "user" else "user"
            if len(out) == per_day:
                break
        yield out
