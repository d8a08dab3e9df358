"""Issue 12, fifth round, with the real model: a request that only implies a suggestion
("leaving do at the pub tonight, what am i ordering?") is planned as one, with its domain,
and the constraint it must respect reaches the context; a statement, a question about the
past or about what the assistant suggested is not a request.

The requests and constraints here are written for this file (not from a probe set);
``agent/evals/data/request_dev.jsonl`` is the labelled set the detector was calibrated on.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from memfs.app import MemoryStore
from memfs.embed import Embedder

pytestmark = pytest.mark.model

IMPLIED = [
    ("food", "Anything with sesame in it and my throat closes up, I carry two pens everywhere.",
     "cooking for the in-laws on sunday and i'm drawing a blank, what do i serve?"),
    ("drink", "Four years off the booze now and I'm not risking it for anyone.",
     "leaving do at the pub tonight, what am i ordering?"),
    ("drink", "Coffee after noon and my heart races all night.",
     "long afternoon of revision ahead, what's good to sip?"),
    ("activity", "My asthma flares the moment I do anything strenuous outdoors.",
     "my cousins are down for the long weekend, what could we get up to?"),
    ("activity", "My youngest uses a wheelchair, so paths have to be flat and smooth.",
     "nothing on this sunday and the kids are restless, what now?"),
    ("gift", "His flat is tiny, there's no room for one more thing on the shelves.",
     "it's my brother's birthday on friday, what do i get him?"),
    ("place", "I get horribly seasick, even on a calm ferry.",
     "thinking about a few days away in may, where should we head?"),
]
IMPLIED_PASSES = 5
"""Measured 6 of 7 in the fifth round (main before it: 5; "what now?" after a statement of
the kids' restlessness gets no domain on either). 5 of 7 since the sixth round's constraint
search (candidates by the write-time limit score): the asthma line is fourth for "what could
we get up to?" behind a wheelchair user's paths (a place and activity limit too) and small
talk about sore legs. BENCHMARKS.md, sixth round."""


def _classify(embedder: Embedder) -> Callable[[str, str], tuple[str, ...]]:
    from memfs.constraints import classify_request

    return lambda text, wording: classify_request(embedder, text, wording)


def test_implied_requests_get_their_domain_and_their_constraint(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    """200 messages of small talk, each constraint said once; each implied request, in a new
    session with an empty window, must be planned in its domain and bring its constraint."""
    from memfs.agent.evals.constraints import START, Probe, write_history

    from memfs.context import build_context

    probes = [Probe(f"im-{n}", d, c, r) for n, (d, c, r) in enumerate(IMPLIED)]
    pair = MemoryStore(isolated_env, embedder=real_embedder).pair("alex", "implied")
    write_history(pair, probes, 200)
    missed = []
    for probe in probes:
        ctx = build_context(pair, probe.request, now=START + dt.timedelta(days=60), window=[])
        if probe.domain not in ctx.plan.constraint_domains \
                or probe.constraint not in [h.text for h in ctx.hits]:
            missed.append((probe.request, ctx.plan.constraint_domains))
    assert len(missed) <= len(probes) - IMPLIED_PASSES, missed


CHOICES = [
    ("drink", "after-work thing at the wine bar, a large merlot maybe?"),
    ("activity", "pottery class or salsa lessons, which should i take up this winter?"),
    ("gift", "my uncle is retiring, a fancy fountain pen?"),
    ("place", "anniversary weekend, that lakeside cabin looks lovely, worth booking?"),
    ("food", "leaning towards a lamb tagine for saturday's dinner party"),
    ("food", "flapjack recipe for the bake sale please"),
    ("gift", "for my goddaughter's christening, a silver bracelet or a savings bond?"),
    ("drink", "sunday brunch with the girls, bottomless mimosas, good idea?"),
    ("place", "half term with the kids: a caravan in cornwall or a cottage in wales?"),
    ("activity", "the lads want a stag do abroad, paintball in riga, yay or nay?"),
]
CHOICE_PASSES = 7
"""Asking the assistant to choose or approve, with no suggestion word (issue 12, seventh
round): measured 7 of 10 planned with their domain (main before it: 3; the mimosas read as
an outing, the pottery class as food, the paintball is under ``CHOICE_FLOOR``)."""


def test_a_request_to_choose_or_approve_gets_its_domain(real_embedder: Embedder) -> None:
    from memfs.agent.plan_rules import plan_offline

    missed = []
    for domain, text in CHOICES:
        plan = plan_offline(text, [], classify=_classify(real_embedder))
        if not plan.need_retrieval or domain not in plan.constraint_domains:
            missed.append((text, plan.constraint_domains))
    assert len(missed) <= len(CHOICES) - CHOICE_PASSES, missed


@pytest.mark.parametrize("message", [
    "should i take the job offer?",
    "stuck on this maths homework",
    "my phone or my laptop, which needs replacing?",
    "which did i pick last time, the red or the blue one?",
])
def test_a_choice_about_nothing_of_a_domain_is_no_suggestion_request(
        real_embedder: Embedder, message: str) -> None:
    from memfs.agent.plan_rules import plan_offline

    plan = plan_offline(message, [], classify=_classify(real_embedder))
    assert plan.constraint_domains == ()


@pytest.mark.parametrize("message", [
    "we went to the beach at the weekend",
    "made a huge curry last night and it was amazing",
    "what present did i get my sister last year?",
    "where did we stay in rome?",
    "which cocktail did you recommend last time?",
    "what was that recipe you suggested yesterday?",
    "I finally finished the book you recommended!",
])
def test_a_statement_or_a_question_about_the_past_is_no_suggestion_request(
        real_embedder: Embedder, message: str) -> None:
    from memfs.agent.plan_rules import plan_offline

    plan = plan_offline(message, [], classify=_classify(real_embedder))
    assert plan.constraint_domains == ()
    assert "suggestion" not in plan.reason


def test_the_request_detector_holds_its_calibration(real_embedder: Embedder) -> None:
    """On the labelled set it was calibrated on (98 lines of which 56 requests): measured 43
    requests with the right domain and 1 false request of 42 (main: 30 and 3)."""
    from memfs.agent.plan_rules import suggestion

    text = resources.files("memfs.agent.evals").joinpath("data/request_dev.jsonl") \
        .read_text("utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line]
    right = false = 0
    for row in rows:
        _, domains = suggestion(row["text"], _classify(real_embedder))
        if row["request"]:
            right += row["domains"][0] in domains
        else:
            false += bool(domains)
    assert right >= 40 and false <= 2, (right, false)


DINNER_WINDOW = ["ok I'm starving and can't be bothered to cook tonight",
                 "Fair! Takeaway, or something quick from the cupboard?",
                 "quick. I'll sort it. thanks for tonight",
                 "Anytime. Sleep well, and give the cat a scratch from me."]


@pytest.mark.parametrize("message", [
    "When is my meeting with Lin?",
    "what time does the match start on sunday?",
    "so when's the dentist again",
])
def test_a_question_for_the_time_of_a_plan_is_no_suggestion_request(
        real_embedder: Embedder, message: str) -> None:
    """`memfs demo` planned "When is my meeting with Lin?" as a food suggestion (its window
    ends on dinner, read with the request as the turn reads it), so the peanut allergy and a
    goodnight line took context slots."""
    from memfs.agent.plan_rules import plan_offline

    from memfs.constraints import classify_in_window

    def in_window(text: str, wording: str) -> tuple[str, ...]:
        return classify_in_window(real_embedder, text, wording, DINNER_WINDOW)

    plan = plan_offline(message, DINNER_WINDOW, classify=in_window)
    assert plan.constraint_domains == ()
    assert "suggestion" not in plan.reason


def test_when_to_do_something_is_still_advice(real_embedder: Embedder) -> None:
    from memfs.agent.plan_rules import plan_offline

    plan = plan_offline("any ideas what I should cook for Maya on saturday?", DINNER_WINDOW[:2],
                        classify=_classify(real_embedder))
    assert "food" in plan.constraint_domains


def test_no_labelled_suggestion_request_is_a_question_for_a_time() -> None:
    """The time-question pattern never touches a labelled request of the dev and spent sets
    (constraint probes, request_dev; blind28 is fresh and not read)."""
    from memfs.agent.plan_words import WHEN_QUESTION

    data = resources.files("memfs.agent.evals").joinpath("data")
    texts = []
    for item in data.iterdir():
        if item.name.endswith(".jsonl") and item.name.startswith(("constraint_", "request_")) \
                and item.name != "constraint_probes28.jsonl":
            for line in item.read_text(encoding="utf-8").splitlines():
                row = json.loads(line) if line.strip() else {}
                text = row.get("request") if isinstance(row.get("request"), str) else row.get("text")
                if isinstance(text, str) and (row.get("domain") or row.get("domains")):
                    texts.append(text)
    assert len(texts) > 500
    assert [t for t in texts if WHEN_QUESTION.search(t)] == []
