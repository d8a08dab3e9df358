"""Issue 12, point 3, mid-conversation: a suggestion request comes after turns that set up
its occasion ("my niece turns 3 on saturday" ... "no, any ideas?"). The planner takes the
domain from the recent window when the request names none, the constraint search reads the
request with it, and a request that names its domain keeps it whatever the window is about
(stop 27: the window's nearest domain is added to it, ``test_constraint_long.py``).
The probe files' optional ``before`` and ``kind`` are checked when they load.

The conversations and constraints here are written for this file (not from a probe set).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from memfs.app import MemoryStore
from memfs.embed import Embedder
from memfs.errors import BadInputError

OCCASIONS = [
    ("gift", "My niece still puts everything in her mouth, so nothing with small parts.",
     (("user", "my niece turns 3 on saturday, big party at my sister's"),
      ("assistant", "How lovely! Have you sorted anything for her yet?")),
     "not yet, any ideas?"),
    ("drink", "Since the liver scare I haven't touched a drop, and I'm keeping it that way.",
     (("user", "work do at the rooftop bar tonight, first one in ages"),
      ("assistant", "Sounds fun! Are you looking forward to it?")),
     "kind of! what do i get when i'm up there?"),
]


def _probes(rows: list[tuple[str, str, tuple[tuple[str, str], ...], str]]) -> list[Any]:
    from memfs.agent.evals.constraints import Probe

    return [Probe(f"win-{n}", d, c, r, before) for n, (d, c, before, r) in enumerate(rows)]


@pytest.mark.model
def test_a_request_that_names_no_domain_takes_it_and_its_constraint_from_the_window(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    """200 messages of small talk, each constraint said once; asked after its occasion, the
    request is planned in its domain and brings the constraint."""
    from memfs.agent.evals.constraints import START, live_window, write_history

    from memfs.context import build_context

    probes = _probes(OCCASIONS)
    pair = MemoryStore(isolated_env, embedder=real_embedder).pair("alex", "window")
    write_history(pair, probes, 200)
    now = START + dt.timedelta(days=60)
    for probe in probes:
        ctx = build_context(pair, probe.request, now=now, window=live_window(probe, now))
        assert probe.domain in ctx.plan.constraint_domains, (probe.request, ctx.plan)
        assert probe.constraint in [h.text for h in ctx.hits], probe.request


@pytest.mark.model
@pytest.mark.parametrize(("domain", "window", "message"), [
    ("drink", ["we're off to lisbon for three nights next month", "Lovely! Where are you staying?"],
     "first things first, which cocktail should i order tonight?"),
    ("place", ["my sister's birthday is on friday", "Nice! Have you got her a present?"],
     "sorted. where should we go on holiday this summer?"),
])
def test_a_request_that_names_its_domain_is_not_overridden_by_the_window(
        real_embedder: Embedder, domain: str, window: list[str],
        message: str) -> None:
    """The named domain stays; the window's nearest domain may join it (stop 27), never
    replace it."""
    from memfs.agent.plan_rules import plan_offline

    from memfs.constraints import classify_in_window

    plan = plan_offline(message, window,
                        classify=lambda t, w: classify_in_window(real_embedder, t, w, window))
    assert plan.need_retrieval and domain in plan.constraint_domains
    assert len(plan.constraint_domains) <= 2, plan.constraint_domains


@pytest.mark.model
@pytest.mark.parametrize("message", [
    "we went to the beach at the weekend",
    "i bought my dad a watch for his birthday",
    "my partner cooked tonight for once",
])
def test_a_reply_that_is_news_is_no_suggestion_request(real_embedder: Embedder, message: str) -> None:
    """The assistant asked a question; the user answers with news, not a request."""
    from memfs.agent.plan_rules import plan_offline

    from memfs.constraints import classify_in_window

    window = ["my sister is visiting next week", "How lovely! How long is she staying?"]
    plan = plan_offline(message, window,
                        classify=lambda t, w: classify_in_window(real_embedder, t, w, window))
    assert plan.constraint_domains == ()
    assert "suggestion" not in plan.reason


def _line(**changes: Any) -> dict[str, Any]:
    line: dict[str, Any] = {"id": "p-1", "domain": "gift", "constraint": "c", "request": "r",
                            "kind": "plain",
                            "before": [{"role": "user", "content": "hi"},
                                       {"role": "assistant", "content": "hello"}]}
    return {**line, **changes}


def test_a_probe_line_with_before_and_kind_loads() -> None:
    from memfs.agent.evals.constraints import live_window, probe_from

    probe = probe_from(_line())
    assert probe.before == (("user", "hi"), ("assistant", "hello")) and probe.kind == "plain"
    now = dt.datetime(2026, 11, 1, 12, tzinfo=dt.timezone.utc)
    window = live_window(probe, now)
    assert [m.role for m in window] == ["user", "assistant"]
    assert all(m.ts < now for m in window) and window[0].session == window[1].session
    assert probe_from({k: v for k, v in _line().items() if k not in ("before", "kind")}).before == ()


@pytest.mark.parametrize("before", [
    "hi",
    [{"role": "user", "content": "hi"}],
    [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "hello"}],
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}],
    [{"role": "user", "content": "hi"}, {"role": "assistant"}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}] * 3,
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
     {"role": "user", "content": "c"}],
])
def test_a_bad_before_is_one_error_naming_the_field_and_the_probe(before: Any) -> None:
    from memfs.agent.evals.constraints import probe_from

    with pytest.raises(BadInputError, match=r"probe p-1: before: "):
        probe_from(_line(before=before))


def test_a_bad_kind_is_one_error_naming_the_field_and_the_probe() -> None:
    from memfs.agent.evals.constraints import probe_from

    with pytest.raises(BadInputError, match=r"probe p-1: kind: "):
        probe_from(_line(kind="sneaky"))


def test_the_dev2_probes_carry_their_windows() -> None:
    from memfs.agent.evals.constraints import load_probes

    probes = load_probes("dev2")
    assert len(probes) == 40 and len({p.id for p in probes}) == 40
    assert all(p.before and p.before[0][0] == "user" and p.kind for p in probes)
    probes = load_probes("dev3")
    assert len(probes) == 40 and len({p.id for p in probes}) == 40
    assert all(p.before and p.before[0][0] == "user" and p.kind for p in probes)



@pytest.mark.parametrize("split,prefix,per_domain,shortest", [("blind16", "c16", 6, 2), ("blind17", "c17", 8, 4),
                                                          ("blind18", "c18", 8, 4), ("blind19", "c19", 8, 2),
                                                          ("blind20", "c20", 8, 2), ("blind21", "c21", 8, 2),
                                                          ("blind22", "c22", 8, 2), ("blind23", "c23", 8, 2),
                                                          ("blind24", "c24", 8, 2), ("blind25", "c25", 8, 2),
                                                          ("blind26", "c26", 8, 2), ("blind27", "c27", 8, 2),
                                                          ("blind28", "c28", 8, 2)])
def test_a_blind_set_loads_with_windows_evenly_per_domain_half_plain(
        split: str, prefix: str, per_domain: int, shortest: int) -> None:
    """blind16 to blind28 load (read only: each is measured once, never run or tuned on
    here): ``per_domain`` probes in each of the five domains, half plain, and a window of
    ``shortest`` to 4 turns that opens on the user and ends on the assistant."""
    from memfs.agent.evals.constraints import load_probes

    probes = load_probes(split)
    n = 5 * per_domain
    assert len(probes) == n and [p.id for p in probes] == [f"{prefix}-{k:02d}" for k in range(1, n + 1)]
    assert all(sum(p.domain == d for p in probes) == per_domain
               for d in ("food", "drink", "activity", "gift", "place"))
    assert sum(p.kind == "plain" for p in probes) == n // 2
    assert sum(p.kind == "indirect" for p in probes) == n // 2
    assert all(shortest <= len(p.before) <= 4 and p.before[0][0] == "user" and p.before[-1][0] == "assistant"
               for p in probes)
    assert all(p.constraint.strip() and p.request.strip() for p in probes)
