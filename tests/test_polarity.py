"""A plan's polarity read from its embedding (issue 13, eighth round): ``polarity.off_score``
compares a sentence with prototypes of a plan that is on and of one that is off."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from memfs.agent.dream import learned, polarity


class _TwoWayEmbedder:
    """ON prototypes point one way, OFF prototypes the other, anything else between them."""

    name, dim = "two-way", 2

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        for t in texts:
            out.append([1.0, 0.0] if t in polarity.ON else [0.0, 1.0] if t in polarity.OFF else [0.7071, 0.7071])
        return np.asarray(out, dtype=np.float32)


def test_off_score_is_positive_for_a_plan_that_is_off_and_negative_for_one_that_is_on() -> None:
    e = _TwoWayEmbedder()
    scores = polarity.off_score(np.array([[1.0, 0.0], [0.0, 1.0], [0.7071, 0.7071]], dtype=np.float32), e)
    assert scores.shape == (3,)
    assert scores[0] < 0 < scores[1]
    assert abs(scores[2]) < 1e-4


def test_the_prototypes_are_general_and_the_gate_is_a_setting() -> None:
    assert len(polarity.ON) >= 8 and len(polarity.OFF) >= 8
    assert not set(polarity.ON) & set(polarity.OFF)
    assert learned.PLAN_OFF_MARGIN is None or 0.0 <= learned.PLAN_OFF_MARGIN <= 0.2
