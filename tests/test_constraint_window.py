"""Issue 12, point 3, mid-conversation: a constraint probe may carry the live conversation
before its request (``before``) and whether its constraint is said plainly (``kind``); the
probe files are checked when they load. (The planner change that read the window, measured
on blind11 at stop 26 and reverted, had its behaviour tests here: see git history, c-win.)
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from memfs.errors import BadInputError


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
