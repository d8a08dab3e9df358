"""Issue 12, stop 34 (c-dom3): when the cosine thresholds plan a request in the wrong domain
and the learned request model is confident of another, the model's domain is searched alone,
so the limit the user said in that domain reaches the context.

The conversation and the limits here are written for this file (not from a probe set).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from memfs.app import MemoryStore
from memfs.embed import Embedder

PLACE_LIMIT = "Our money's tight till the new year, so nothing that needs a passport or a flight."
ACTIVITY_LIMIT = "My left knee is still strapped up, so nothing where I'm on my feet for hours."
WINDOW = (("user", "it's our tenth anniversary on saturday"),
          ("assistant", "Congratulations! Any plans?"))
REQUEST = "thinking a weekend away. where do we go"


@pytest.mark.model
def test_a_request_the_thresholds_plan_in_the_wrong_domain_brings_the_right_limit(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    """"where do we go" for an anniversary weekend reads as an outing to the thresholds; the
    model reads a place to go, and the money limit on travel is in the context (with the
    thresholds' outing alone, among 200 messages, it is not: checked when this was written)."""
    from memfs.agent.evals.constraints import START, Probe, live_window, write_history
    from memfs.agent.plan_rules import suggestion

    from memfs.constraints import classify_in_window
    from memfs.context import build_context

    window = [c for _, c in WINDOW]
    thresholds = suggestion(REQUEST, lambda t, w: classify_in_window(real_embedder, t, w, window),
                            answers=True)[1]
    assert thresholds and "place" not in thresholds, thresholds  # the premise: a wrong domain

    probes = [Probe("place", "place", PLACE_LIMIT, REQUEST, WINDOW),
              Probe("activity", "activity", ACTIVITY_LIMIT, "so what do we do on sunday?")]
    pair = MemoryStore(isolated_env, embedder=real_embedder).pair("alex", "second-opinion")
    write_history(pair, probes, 200)
    now = START + dt.timedelta(days=60)
    ctx = build_context(pair, REQUEST, now=now, window=live_window(probes[0], now))
    assert ctx.plan.constraint_domains == ("place",), ctx.plan
    assert PLACE_LIMIT in [h.text for h in ctx.hits]


def test_the_model_replaces_the_thresholds_only_when_confident() -> None:
    """Confident: its domain alone. Unsure: the thresholds' domains. The thresholds quiet: the
    model's domain at its own (lower) threshold, as before."""
    from memfs.agent.requests.model import SECOND_OPINION, with_model

    sure = np.array([0.02, 0.0, 0.0, 0.08, 0.0, 0.9])  # none, food, drink, activity, gift, place
    unsure = np.array([0.3, 0.0, 0.0, 0.3, 0.0, SECOND_OPINION - 0.01])
    assert with_model(("activity",), sure, 0.3) == ("place",)
    assert with_model(("food", "drink"), unsure, 0.3) == ("food", "drink")
    assert with_model((), unsure, 0.3) == ("place",)
    assert with_model((), np.array([0.9, 0.0, 0.0, 0.05, 0.0, 0.05]), 0.3) == ()
