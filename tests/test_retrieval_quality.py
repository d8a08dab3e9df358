"""Issue 12 with the real model: k hits are k distinct pieces of information, filler never
outranks what the user said about themselves, "last month" means last month, and a
suggestion request brings the constraint that rules it out (the probe set).

Each scenario is a small synthetic pair from ``tests/data/retrieval_pairs.json``
(committed before the code it tests).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from memfs import history
from memfs.app import MemoryStore
from memfs.embed import Embedder
from memfs.history import OFFLINE_PLACEHOLDER
from memfs.store import MemoryPair

pytestmark = pytest.mark.model

DATA: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "retrieval_pairs.json").read_text("utf-8"))
START = dt.datetime(2026, 10, 1, 9, 0, tzinfo=dt.timezone.utc)


def new_pair(home: Path, embedder: Embedder, name: str) -> MemoryPair:
    return MemoryStore(home, embedder=embedder).pair("alex", name)


def say(pair: MemoryPair, lines: list[tuple[str, str]], start: dt.datetime = START,
        session: str = "s-20261001-01") -> None:
    for n, (role, text) in enumerate(lines):
        history.append(pair.root, session, role, text, start + dt.timedelta(minutes=n))


def background() -> list[tuple[str, str]]:
    return [("user", line) for line in DATA["background"]]


def test_a_fact_said_once_beats_thirty_repetitions(isolated_env: Path, real_embedder: Embedder,
                                                   fresh_indexes: None) -> None:
    scene = DATA["repeated"]
    pair = new_pair(isolated_env, real_embedder, "repeat")
    lines = background()
    for i in range(scene["times"]):
        lines.insert(i % len(lines), ("user", scene["repeated"][i % len(scene["repeated"])]))
    lines.insert(len(lines) // 2, ("user", scene["fact"]))
    say(pair, lines)
    hits = pair.search(scene["query"], k=5, now=START + dt.timedelta(days=1))
    texts = [h.text for h in hits]
    assert scene["fact"] in texts[:3]
    repeated = [h for h in hits if "hilarious" in h.text.lower()]
    assert len(repeated) <= 1
    if repeated:  # the one slot it takes says how often it was said, and when
        assert repeated[0].count == scene["times"]
        assert repeated[0].first_said is not None and repeated[0].last_said is not None
        assert repeated[0].to_json()["count"] == scene["times"]


def test_assistant_filler_never_outranks_a_user_fact(isolated_env: Path, real_embedder: Embedder,
                                                     fresh_indexes: None) -> None:
    scene = DATA["filler"]
    pair = new_pair(isolated_env, real_embedder, "filler")
    lines = background()
    for fact, _ in scene["facts"]:
        lines += [("user", fact), ("assistant", scene["assistant"][len(lines) % 8])]
    lines += [("assistant", line) for line in scene["assistant"]]
    lines += [("assistant", f"{OFFLINE_PLACEHOLDER} I remember: {f}.") for f, _ in scene["facts"]]
    say(pair, lines)
    for fact, question in scene["facts"]:
        hits = pair.search(question, k=6, now=START + dt.timedelta(days=1))
        ranks = {h.text: n for n, h in enumerate(hits)}
        assert fact in ranks, question
        filler = [ranks[t] for t in scene["assistant"] if t in ranks]
        assert all(r > ranks[fact] for r in filler), (question, [h.text for h in hits])
        assert not any(h.text.startswith(OFFLINE_PLACEHOLDER) for h in hits)


def test_last_month_prefers_last_months_message(isolated_env: Path, real_embedder: Embedder,
                                                fresh_indexes: None) -> None:
    scene = DATA["time"]
    pair = new_pair(isolated_env, real_embedder, "time")
    old_ts, old = scene["old"]
    new_ts, new = scene["recent"]
    # the year-old one is said again and again, the recent one once: time still decides
    say(pair, [("user", old)], history.parse_ts(old_ts), "s-20251014-01")
    say(pair, [("user", new)], history.parse_ts(new_ts), "s-20261016-01")
    now = history.parse_ts(scene["now"])
    hits = pair.search(scene["query"], k=2, now=now)
    assert [h.text for h in hits][0] == new
    assert hits[0].signals["time_match"] > hits[1].signals["time_match"]
    # without the time expression the two are close; with it, last month's is well ahead
    assert hits[0].score - hits[1].score > 0.1


def test_constraint_probes_pass_at_the_reported_rate(isolated_env: Path, real_embedder: Embedder,
                                                     fresh_indexes: None) -> None:
    from memfs.agent.evals.constraints import run_constraints

    report = run_constraints("test", 200, home=isolated_env / "probes", embedder=real_embedder)
    assert len(report.rows) == 25
    assert report.rate >= REPORTED_RATE_200, report.to_dict()["rows"]


def test_a_suggestion_brings_its_own_domains_limit_without_a_shared_word(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    """Weeks of small talk, one limit per domain said once; each request shares no word
    with its limit, and the user's limits of the other domains are as personal and as
    limit-like: each request's own limit must reach the context. Measured: 4 of 5 (the
    gift request's limit, "only wears things without leather", loses its slot to the
    user's own sesame allergy; round 2's code had 5 of 5); without the constraint
    search 1 of 5 (BENCHMARKS.md, issue 12, third round)."""
    from memfs.agent.evals.constraints import START as EVAL_START
    from memfs.agent.evals.constraints import Probe, write_history

    from memfs.context import build_context

    scene = json.loads((Path(__file__).parent / "data" / "constraint_scene.json")
                       .read_text("utf-8"))
    probes = [Probe(p["id"], p["domain"], p["constraint"], p["request"]) for p in scene["probes"]]
    pair = new_pair(isolated_env, real_embedder, "limits")
    write_history(pair, probes, scene["messages"])
    missed = []
    for probe in probes:
        ctx = build_context(pair, probe.request, now=EVAL_START + dt.timedelta(days=60),
                            window=[])
        if probe.constraint not in [h.text for h in ctx.hits]:
            missed.append((probe.id, ctx.plan.constraint_domains, [h.text for h in ctx.hits]))
    assert len(missed) <= len(probes) - SCENE_PASSES, missed


def test_a_request_without_suggestion_words_still_gets_its_domain(real_embedder: Embedder) -> None:
    """"Give me a recipe for …" and "what's a nice thing to drink …?" ask for a suggestion
    without saying so; a question about what happened does not get a domain."""
    from memfs.agent.plan_rules import plan_offline

    from memfs.constraints import classify_request

    def classify(text: str, wording: str) -> tuple[str, ...]:
        return classify_request(real_embedder, text, wording)

    recipe = plan_offline("Give me a recipe for a quick weeknight curry.", [], classify=classify)
    assert recipe.need_retrieval and "food" in recipe.constraint_domains
    recall = plan_offline("What did I eat at my cousin's wedding?", [], classify=classify)
    assert recall.constraint_domains == ()


SCENE_PASSES = 4
"""Of the scene's five requests, how many get their own limit (measured, third round)."""


def test_every_probe_set_can_be_chosen_from_the_cli_and_the_blind_sets_are_well_formed() -> None:
    """The CLI's --split choices are the probe files; blind2 to blind10 load (read only, never run here)."""
    from memfs.agent.evals.constraints import FILES, load_probes

    from memfs.cli.evals import constraints

    split = next(p for p in constraints.params if p.name == "split")
    assert set(split.type.choices) == set(FILES)  # type: ignore[attr-defined]
    for blind in ("blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "blind8",
                  "blind9", "blind10"):
        probes = load_probes(blind)
        assert len(probes) >= (25 if blind == "blind10" else 30)
        assert len({p.id for p in probes}) == len(probes)
        assert all(sum(p.domain == d for p in probes) >= 5 for d in ("food", "drink", "activity", "gift", "place"))


REPORTED_RATE_200 = 0.76
"""The first blind probe set (spent: tuned on since) at 200 messages of small talk: 19/25
in the context since issue 12's sixth round (20/25 after the third, 18/25 at its first
measurement; the sixth round's limit-score candidates lost one here and gained 3 on blind2,
3 on blind4 and 2 on blind5 at 200; BENCHMARKS.md)."""
