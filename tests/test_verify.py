"""The learned extractor's second stage (issue 13, seventh round): the verifier decides per
proposed card, and is off unless ``data/verifier.npz`` is shipped (it is not: BENCHMARKS.md)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
from memfs.agent.dream import verify
from memfs.agent.dream.extract_semantic import Cand
from memfs.agent.dream.learned import N_FLAGS, TYPES
from memfs.agent.dream.verify import Proposal, Verifier, verifier_features

from memfs.history import Message


class _NoEmbedder:
    name, dim = "none", 0

    def embed(self, texts: object) -> np.ndarray:
        raise AssertionError("a verifier without the body's embedding embeds nothing")


def _proposal(kind: str, card_p: float) -> Proposal:
    msg = Message("s-1", 0, "user", "I moved to Leeds in May", dt.datetime(2027, 1, 1, tzinfo=dt.UTC))
    cand = Cand("home", kind, "The user moved to Leeds in May.", msg, 0.65, np.zeros(3, dtype=np.float32),
                entities=("user", "Leeds"))
    return Proposal(cand, card_p, 0.65, np.eye(len(TYPES))[TYPES.index(kind)], np.zeros(N_FLAGS, dtype=np.float32))


def test_the_features_are_the_card_not_its_wording() -> None:
    x = verifier_features([_proposal("fact", 0.8), _proposal("plan", 0.4)], _NoEmbedder(), TYPES, body=False)
    assert x.shape == (2, len(TYPES) + 7 + N_FLAGS)
    assert x[0, TYPES.index("fact")] == 1 and x[1, TYPES.index("plan")] == 1
    assert x[0, len(TYPES)] == np.float32(0.8) and x[1, len(TYPES) + 1] < 0  # below the first stage's threshold


def test_the_verifier_keeps_what_it_scores_above_its_threshold_and_round_trips(tmp_path: Path) -> None:
    props = [_proposal("fact", 0.9), _proposal("fact", 0.35)]
    width = len(TYPES) + 7 + N_FLAGS
    w = np.zeros(width, dtype=np.float32)
    w[len(TYPES)] = 20.0  # the first stage's probability decides, for this check
    v = Verifier(w, -12.0, 0.5, 0.3, False)
    assert [p.card_p for p in v.keep(props, _NoEmbedder(), TYPES)] == [0.9]
    v.save(tmp_path / "v.npz")
    back = Verifier.load(tmp_path / "v.npz")
    assert (back.threshold, back.floor, back.body) == (0.5, 0.3, False) and np.allclose(back.w, w)


def test_no_verifier_is_shipped_so_the_first_stage_decides_alone() -> None:
    assert not verify.DATA_PATH.exists() and verify.shipped_verifier() is None
