"""Issue 12, point 3, stop 30: a request the classifier leaves without a domain gets a
second chance from its occasion (``memfs.constraint_second_chance``), and small talk still
gets none.

The conversations, requests and constraints here are written for this file (not from a
probe set).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.embed import Embedder

QUIZ = (("user", "off to the pub quiz with the team tonight"),
        ("assistant", "Good luck! Whose round is it first?"))
REQUEST = "still deciding, what do you fancy for us?"
LIMIT = "The pancreas scare means booze is finished for me, for good."


@pytest.mark.model
def test_a_request_the_classifier_leaves_empty_takes_its_domain_from_the_occasion(
        real_embedder: Embedder) -> None:
    """Alone the request is near no domain and barely nearer a request than not: the first
    chance names nothing; read with the quiz night, it is a drink."""
    from memfs.constraint_second_chance import second_chance
    from memfs.constraints import classify_in_window

    window = [text for _, text in QUIZ]
    assert classify_in_window(real_embedder, REQUEST, "implicit", window) == ()
    assert second_chance(real_embedder, REQUEST, "implicit", window)[:1] == ("drink",)


@pytest.mark.model
def test_the_second_chance_brings_the_limit_into_the_context(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    """200 messages of small talk with the limit said once, then the quiz night and the
    request: the plan names the drink and the limit is among the retrieved hits."""
    from memfs.agent.evals.constraints import START, Probe, live_window, write_history

    from memfs.context import build_context

    probe = Probe("second-1", "drink", LIMIT, REQUEST, QUIZ)
    pair = MemoryStore(isolated_env, embedder=real_embedder).pair("alex", "second")
    write_history(pair, [probe], 200)
    now = START + dt.timedelta(days=60)
    ctx = build_context(pair, probe.request, now=now, window=live_window(probe, now))
    assert ctx.plan.need_retrieval and "drink" in ctx.plan.constraint_domains, ctx.plan
    assert LIMIT in [h.text for h in ctx.hits]


SMALL_TALK = [
    (("ugh, long day at work", "Oh no, how was it in the end?"), "long, but the cat made it better"),
    (("the heating broke again", "Oh no! Did someone come out to fix it?"),
     "yes, finally, the flat is warm again"),
    (("I started a new book last night", "Ooh, which one?"),
     "a crime novel set in venice, can't put it down"),
    ((), "how many legs does a spider have?"),
    ((), "what's the weather doing tomorrow?"),
    (("made soup for lunch", "Sounds cosy!"), "it was, and there's loads left for tomorrow"),
]


@pytest.mark.model
@pytest.mark.parametrize(("window", "message"), SMALL_TALK)
def test_small_talk_gets_no_second_chance(real_embedder: Embedder, window: tuple[str, ...],
                                          message: str) -> None:
    """News, a reply to the assistant's question, a question of fact: no domain, no search."""
    from memfs.agent.plan_rules import plan_offline

    from memfs.constraint_second_chance import second_chance
    from memfs.constraints import classify_in_window

    def classify(text: str, wording: str) -> tuple[str, ...]:
        return (classify_in_window(real_embedder, text, wording, list(window))
                or second_chance(real_embedder, text, wording, list(window)))

    plan = plan_offline(message, list(window), classify=classify)
    assert plan.constraint_domains == () and not plan.need_retrieval, plan


@pytest.mark.model
def test_a_statement_gets_no_second_chance(real_embedder: Embedder) -> None:
    """News worded as a wish reads as near a request as an unclassified request does."""
    from memfs.constraint_second_chance import second_chance

    assert second_chance(real_embedder, "i could really do with a treat tonight", "statement",
                         ["work was brutal", "Sorry to hear that."]) == ()
