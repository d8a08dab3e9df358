"""Issue 12, sixth round, with the real model: the constraint search starts from the rows
that state a standing limit (the write-time ``PairIndex.limit``), not from the rows near
the request's words: an indirect constraint said once among small talk and personal news
reaches its domain's request at 200 and at 1,600 messages, and the news never takes a slot.

The constraints, news and requests here are written for this file (not from a probe set).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.embed import Embedder
from memfs.store import MemoryPair

pytestmark = pytest.mark.model

SCENE = [  # (domain, said once, the request it must reach)
    ("food", "one bite of anything with walnuts or cashews and my son's lips swell up, we read "
             "every label twice", "baking something for the school fete, ideas?"),
    ("drink", "my liver specialist was blunt in october: not one more glass of anything, ever",
     "team drinks on friday, what am i ordering?"),
    ("activity", "the pins in my ankle mean i'm on crutches until spring, the surgeon was clear",
     "free saturday with the gang, what could we get up to?"),
    ("gift", "my aunt's arthritis has got so bad she can't grip a pen or open a jar now",
     "my aunt turns seventy in march, what do i get her?"),
    ("place", "my partner goes to pieces in crowds and on anything longer than a short flight",
     "where should we head for a week away in june?"),
]
NEWS = ["My sister got engaged last night and we're all over the moon.",
        "I start the new job at the hospital on Monday, so nervous.",
        "We finally got the keys to the new flat this morning!",
        "My best friend is moving to Canada next month and I'm gutted."]
"""Salient personal news: it matters, but it rules nothing out."""


def _pair(home: Path, embedder: Embedder, n_messages: int) -> tuple[MemoryPair, dt.datetime]:
    from memfs.agent.evals.constraints import START, Probe, build_history

    from memfs import history

    probes = [Probe(f"c-{n}", d, c, r) for n, (d, c, r) in enumerate(SCENE)]
    pair = MemoryStore(home, embedder=embedder).pair("alex", "limits")
    sessions = build_history(probes, n_messages)
    for n, news in enumerate(NEWS):  # the news goes in place of small talk, spread out
        sid, msgs = sessions[(n * 5 + 2) % len(sessions)]
        msgs[2]["content"] = news
    for sid, msgs in sessions:
        for m in msgs:
            history.append(pair.root, sid, m["role"], m["content"], m["ts"])
    return pair, START + dt.timedelta(days=60)


FOUND = {200: 5, 1600: 5}
"""Of the five domains, how many must find their own constraint in the three slots: measured
4 at 200 and at 1,600 messages until stop 27 (the ankle's crutches lost to small talk about
sore legs for "what could we get up to?"); since the search also ranks by how much a line
reads as a standing circumstance rather than news, 5 at 200 (at 1,600, 4; 5 with the
heavier weights 1.0 and 1.0, which churned more on the spent splits). Since stop 31 a line
the user said again ranks lower (``ConstraintWeights.repeat``): 5 at 1,600 too (the ankle
had lost to "Oh, and have you heard of Small Hours? I'm hooked.", typed with three openers)."""


@pytest.mark.parametrize("n_messages", [200, 1600])
def test_each_domain_finds_its_own_indirect_constraint(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None,
        n_messages: int) -> None:
    from memfs.search import constraint_search

    pair, now = _pair(isolated_env, real_embedder, n_messages)
    missed = []
    for domain, said, request in SCENE:
        hits = [h.text for h in constraint_search(pair, request, (domain,), k=3, now=now)]
        if said not in hits:
            missed.append((domain, hits))
        assert not set(NEWS) & set(hits), (domain, hits)  # news never takes a slot
    assert len(missed) <= len(SCENE) - FOUND[n_messages], missed


def test_the_limit_score_is_written_with_the_row(isolated_env: Path, real_embedder: Embedder,
                                                 fresh_indexes: None) -> None:
    """A limit scores above small talk and personal news; the assistant's rows are never
    candidates."""
    from memfs.salience import NOT_LIMIT
    from memfs.search import open_index, refresh

    pair, _ = _pair(isolated_env, real_embedder, 200)
    index = open_index(pair.root, pair.store.embedder)
    refresh(index)
    by_text: dict[tuple[str | None, str], float] = {}
    for row in index.position.values():
        item = index.items[row]
        if item.kind == "message":
            by_text.setdefault((item.role, item.text), float(index.limit[row]))
    limits = [by_text[("user", c)] for _, c, _ in SCENE]
    news = [by_text[("user", n)] for n in NEWS]
    talk = sorted(v for (role, text), v in by_text.items()
                  if role == "user" and text not in {c for _, c, _ in SCENE} | set(NEWS))
    assert min(limits) > max(news), (limits, news)
    assert min(limits) > talk[len(talk) // 2], (limits, talk)  # above most small talk
    assert {v for (role, _), v in by_text.items() if role == "assistant"} == {NOT_LIMIT}
