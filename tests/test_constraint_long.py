"""Issue 12, point 3, stop 27, with the real model: requests the planner used to drop or
send to the wrong domain. A request worded as a statement ("no clue what to cook") is
classified when it plainly reads as a request, whether or not the assistant's last turn was
a question; news worded the same way is not. A request that names a domain alone gets the
window's nearest domain as well. (The constraint search's standing-circumstance term is
tested in ``test_constraint_candidates.py``: all five domains find their constraint.)

The sentences here are written for this file (not from a probe set).
"""

from __future__ import annotations

import pytest

from memfs.embed import Embedder
from memfs.retrieval_plan import RetrievalPlan

pytestmark = pytest.mark.model


def _plan(embedder: Embedder, message: str, window: list[str]) -> RetrievalPlan:
    from memfs.agent.plan_rules import plan_offline

    from memfs.constraints import classify_in_window

    return plan_offline(message, window,
                        classify=lambda t, w: classify_in_window(embedder, t, w, window))


@pytest.mark.parametrize(("domain", "message"), [
    ("gift", "my dad retires next month and im drawing a blank on what to give him"),
    ("food", "six of us round for dinner saturday and no clue what to cook tbh"),
    ("place", "we have a long weekend free in may and want to get away somewhere"),
])
@pytest.mark.parametrize("window", [[], ["morning!", "Morning! How's things?"]])
def test_a_request_worded_as_a_statement_is_classified(real_embedder: Embedder, domain: str,
                                                       message: str, window: list[str]) -> None:
    plan = _plan(real_embedder, message, window)
    assert plan.need_retrieval and domain in plan.constraint_domains, plan


@pytest.mark.parametrize("message", [
    "my sister got engaged last night and we're all over the moon",
    "work was mad busy today, my feet are killing me",
    "we finally painted the spare room at the weekend",
    "the dog just knocked my tea over 😂",
])
def test_news_worded_as_a_statement_asks_for_no_suggestion(real_embedder: Embedder,
                                                           message: str) -> None:
    for window in (["hey", "Hi! How was your day?"], ["morning!", "Morning! Coffee going?"],
                   ["got a puppy!!", "Oh wow, congratulations."]):
        plan = _plan(real_embedder, message, window)
        assert plan.constraint_domains == (), (window, plan)


def test_the_window_adds_its_domain_to_a_request_that_names_another(
        real_embedder: Embedder) -> None:
    from memfs.constraints import classify_request

    window = ["leaving do for my boss at the wine bar on friday", "Fun! Is it a big crowd?"]
    message = "yeah, whole floor. which one should i order?"
    assert "drink" not in classify_request(real_embedder, message, "advice")
    plan = _plan(real_embedder, message, window)
    assert "drink" in plan.constraint_domains, plan
