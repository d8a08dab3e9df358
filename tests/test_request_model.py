"""Issue 12, point 3: a request told as news or as a bare question ("k so what do i put out")
still names its domain. The plan's cosine thresholds cannot tell such requests from news; the
learned request model (``memfs.agent.requests``) is asked when they name nothing.

The conversations here are written for this file (not from a probe set).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.embed import Embedder
from memfs.services import PlanRequest

REQUESTS = [  # (domain, the window before, the request), none naming its domain
    ("food", ("my in-laws land at six and the fridge is basically mustard",
              "Oh no, are you feeding them at home?"), "yeah. so what do i put down for them"),
    ("place", ("we've got the whole of half term off and zero plans",
               "Lucky you! Staying local or heading somewhere?"), "somewhere. where do we go"),
    ("gift", ("it's my grandad's 90th on sunday, whole family's going",
              "Ninety! That's a milestone."), "ok and what am i turning up with"),
    ("drink", ("pub quiz tonight with the work lot", "Ooh, good luck! Are you any good?"),
     "terrible lol. whats my round gonna be"),
    ("activity", ("kids are off school tomorrow and it's meant to pour",
                  "A rainy day with kids at home, brave."), "what do i do with them all day"),
]
SMALL_TALK = [
    "the bus driver waved at me again this morning, we're basically friends now",
    "finally finished that jigsaw, one piece missing obviously",
    "my phone screen cracked in a totally new direction today",
    "watched a documentary about octopuses and now i feel guilty about everything",
    "the neighbours' wind chime has been going since 5am",
    "got my hair cut and the barber did not listen at all",
]


def _plan(pair: object, text: str, window: tuple[str, ...] = ()) -> tuple[str, ...]:
    from memfs.agent.services import AgentPlanner

    plan = AgentPlanner().plan(pair, PlanRequest(text, window, "", "", frozenset()))  # type: ignore[arg-type]
    return tuple(plan.constraint_domains)


@pytest.mark.model
def test_requests_told_as_questions_name_their_domain_and_small_talk_does_not(
        isolated_env: Path, real_embedder: Embedder) -> None:
    """Most of the requests are planned in their own domain (the first one named); at most
    one line of small talk is read as a request."""
    pair = MemoryStore(isolated_env, embedder=real_embedder).pair("alex", "requests")
    right = [d for d, window, text in REQUESTS if _plan(pair, text, window)[:1] == (d,)]
    assert len(right) >= 3, right
    named = [line for line in SMALL_TALK if _plan(pair, line)]
    assert len(named) <= 1, named


@pytest.mark.model
def test_the_model_answers_where_the_thresholds_name_nothing(real_embedder: Embedder) -> None:
    """The learned reading is asked only when the thresholds are quiet, and it then names
    at least one of these requests' domains that they miss."""
    from memfs.agent.plan_rules import suggestion
    from memfs.agent.requests.model import learned_domains

    from memfs.constraints import classify_in_window

    def thresholds(text: str, window: tuple[str, ...]) -> tuple[str, ...]:
        return suggestion(text, lambda t, w: classify_in_window(real_embedder, t, w, window),
                          answers=True)[1]

    missed = [(d, w, t) for d, w, t in REQUESTS if not thresholds(t, w)]
    assert missed, "the thresholds already name every request here"
    assert any(learned_domains(real_embedder, t, list(w)) == (d,) for d, w, t in missed)


def test_an_embedder_the_model_was_not_fitted_on_gets_nothing(fake_embedder: Embedder) -> None:
    from memfs.agent.requests.model import learned_domains

    assert learned_domains(fake_embedder, "so what do i put down for them", ["guests at six"]) == ()


def test_the_fit_reads_no_fresh_split() -> None:
    """The training rows come from spent splits only: no request or chat of a fresh split, and
    only the profile sets named as spent."""
    from memfs.agent.evals.constraints import load_probes
    from memfs.agent.evals.splits import CONSTRAINT_FILES
    from memfs.agent.requests.fit import PROFILE_SPENT, SPENT, examples

    rows = examples()
    spent = {t for s in SPENT for p in load_probes(s) for t in (p.request, *(c for _, c in p.before))}
    texts = {r.text for r in rows} - spent  # a short line a spent probe also says ("where'd be good")
    assert {r.group for r in rows} <= {*SPENT, "request_dev", "smalltalk",
                                       *(f"profile-{s}" for s in PROFILE_SPENT)}
    for split in set(CONSTRAINT_FILES) - set(SPENT):
        for p in load_probes(split):
            assert p.request not in texts
            assert not {c for _, c in p.before} & texts
