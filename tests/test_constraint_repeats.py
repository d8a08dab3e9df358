"""Stop 31, c-rank: a limit is said once, small talk comes back. A line the user said again,
in the same words or with another opener ("honestly, …", "oh and …"), ranks lower as a
limit (``ConstraintWeights.repeat``); a card is never counted as a copy of its source.

The sentences here are written for this file (not from a probe set).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from memfs.constraints import ConstraintWeights, _copies
from memfs.dedupe import DupGroups
from memfs.embed import Embedder
from memfs.store import MemoryPair
from tests._chat import user_lines_pair

LIMIT = "not touched a drink since the new year and i'm keeping it that way"
REQUEST = "drinks with the team tonight, what should i get?"
AGAIN = ("I've been living on fizzy water this week", "my stomach has been funny since that curry")
"""Said again and again, with different openers: near a drink's limits, and not one."""
OPENERS = ("", "ugh, ", "honestly, ", "oh and ")
TALK = ("morning! slept badly again", "the cat has decided my keyboard is her bed",
        "just put a wash on", "watching a documentary about octopuses, wild",
        "my sister sent me a photo of her new kitchen", "rain all day here",
        "finally sorted the spare room", "had toast for breakfast, living the dream",
        "the bus was twenty minutes late", "my plants are thriving for once",
        "work was quiet today", "thinking of repainting the hallway",
        "my phone screen cracked, typical", "heading to bed soon", "the neighbours got a puppy")


def _pair(home: Path, embedder: Embedder) -> tuple[MemoryPair, dt.datetime]:
    lines: list[str] = []
    for n, talk in enumerate(TALK):
        lines.append(talk)
        if n % 3 == 1:  # five times each, four ways
            lines += [OPENERS[(n // 3) % len(OPENERS)] + line for line in AGAIN]
        if n == 7:
            lines.append(LIMIT)
    return user_lines_pair(home, embedder, lines, "sam", "repeats")


@pytest.mark.model
def test_a_limit_said_once_leads_small_talk_said_again(isolated_env: Path, real_embedder: Embedder,
                                                       fresh_indexes: None) -> None:
    """Measured: the limit leads (1.42 against 1.00); with the repeat term off the fizzy
    water said five times leads (1.71 against 1.42)."""
    from memfs.constraints import rank_constraints
    from memfs.search import open_index, refresh
    from memfs.search_types import make_query

    pair, now = _pair(isolated_env, real_embedder)
    index = open_index(pair.root, pair.store.embedder)
    refresh(index)
    q = make_query(REQUEST, 3, now=now)
    hits = [h.text for h in rank_constraints(index, q, ["drink"])]
    assert hits[0] == LIMIT, hits
    off = [h.text for h in rank_constraints(index, q, ["drink"], ConstraintWeights(repeat=0.0))]
    assert off[0] != LIMIT and AGAIN[0] in off[0], off  # what the term is for
    assert LIMIT in off  # (the limit itself is still a candidate)


def _groups(counts: list[int], group: list[int]) -> DupGroups:
    g = DupGroups()
    g.count = counts
    g.group = np.asarray(group, dtype=np.int32)
    return g


def test_copies_count_identical_copies_and_close_lines() -> None:
    """Row 0 was typed three times (its duplicate group) and has one other line at 0.85;
    row 1 is alone (0.5 is a topic, not a repeat); row 2 is a message with no group and
    one close line; row 3 is a card close to row 0 (written from it): never a copy."""
    groups = _groups([3, 1], [0, 1, -1, -1])
    near = np.asarray([[1.0, 0.5, 0.85],
                       [0.5, 1.0, 0.3],
                       [0.85, 0.3, 1.0],
                       [0.9, 0.4, 0.85]], dtype=np.float32)
    said = np.asarray([True, True, True, False])
    copies = _copies(groups, np.asarray([0, 1, 2, 3]), said, near, 0.8)
    assert copies.tolist() == [3.0, 0.0, 1.0, 0.0]


def test_the_repeat_term_is_part_of_the_default_weights() -> None:
    w = ConstraintWeights()
    assert w.repeat > 0 and 0.75 <= w.repeat_threshold <= w.dup_threshold  # c-distinct: both 0.8
    assert w.reference >= w.pool  # the copies are counted beyond the pool
