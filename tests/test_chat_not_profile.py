"""Chat is not who the user is (issue 13, stop 34, x-bank): a day's small talk in the register of
the profile sets' banks must not become a profile card, while a standing fact said in the same
register still does. The sentences are new (in no set, bank or split), so this is a behaviour
check, not a tuned score; the scores are in BENCHMARKS.md."""

from __future__ import annotations

import datetime as dt

from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.fit_learned import BANK_SPLITS
from memfs.agent.dream.ops import MergeOp, SupersedeOp, WriteOp
from memfs.agent.dream.summary import PROFILE_TYPES
from memfs.agent.evals.splits import PROFILE_FILES

from memfs.embed import Embedder
from memfs.history import Message

UTC = dt.UTC
CHAT = ["update: my cousin's new boyfriend is a blacksmith apparently",
        "btw the upstairs neighbours got a parrot that only says hello darling",
        "bought a lava lamp off marketplace for a fiver lol",
        "oh and my mate's sister is moving to perth in april"]
FACTS = {"paramedic": "i'm a paramedic, mostly night shifts on the ambulance",
         "dunedin": "i live in dunedin, right at the bottom of new zealand"}


def _window(lines: list[str]) -> list[Message]:
    ts = dt.datetime(2027, 3, 1, 18, 0, tzinfo=UTC)
    out = []
    for i, line in enumerate(lines):
        out += [Message("s-1", 2 * i, "user", line, ts + dt.timedelta(minutes=4 * i)),
                Message("s-1", 2 * i + 1, "assistant", "Ha, go on.", ts + dt.timedelta(minutes=4 * i + 1))]
    return out


def test_a_days_chat_is_not_carded_as_the_user_but_a_job_and_a_home_are(real_embedder: Embedder) -> None:
    window = _window([CHAT[0], CHAT[1], FACTS["paramedic"], CHAT[2], FACTS["dunedin"], CHAT[3]])
    ops = OfflineExtractor(real_embedder)(window, [], "", window[-1].ts).ops
    profile = [op for op in ops if isinstance(op, (WriteOp, SupersedeOp, MergeOp)) and op.type in PROFILE_TYPES]
    bodies = " | ".join(op.body for op in profile).lower()
    assert "paramedic" in bodies and "dunedin" in bodies, bodies
    for line in CHAT:
        assert not any(word in bodies for word in line.split()[1:] if len(word) > 5), (line, bodies)


def test_the_fit_reads_only_spent_profile_banks() -> None:
    assert set(BANK_SPLITS) <= set(PROFILE_FILES)
    assert "blind11" not in BANK_SPLITS


def test_a_banked_standing_fact_keeps_its_weight_under_any_forbidden_weight() -> None:
    """A bank's standing fact weighs 3 (more than 1, the forbidden negatives' marker): a fit with
    another forbidden weight (``fit_learned --grid``) must not take it for a forbidden negative."""
    import numpy as np
    from memfs.agent.dream.fit_learned import BANK_FACT_WEIGHT, FORBIDDEN_WEIGHT, Hyper, reweighted

    weight = np.array([1.0, FORBIDDEN_WEIGHT, 0.3, BANK_FACT_WEIGHT])
    kept = np.array([False, False, True, True])
    out = reweighted(weight, Hyper(1.0, 1.5, False), kept)
    assert out.tolist() == [1.0, 1.5, 0.3, BANK_FACT_WEIGHT]
