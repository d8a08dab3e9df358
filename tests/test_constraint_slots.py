"""Stop 28: with more domains than constraint slots, the request's own domain (the plan's
first) keeps its best limit; the other domains' bests follow by score. No model: the order
is arithmetic on the candidates' per-domain scores (``memfs.constraints._interleave``)."""

from __future__ import annotations

import numpy as np

from memfs.constraints import _interleave, _nearest_first


def test_the_first_domains_best_leads_even_when_it_scores_lowest() -> None:
    # candidates x domains (food, drink, activity, place): each row is one domain's limit,
    # the food limit scores below the three others'
    scores = np.array([[1.0, 0.2, 0.2, 0.2], [0.1, 1.4, 0.1, 0.1], [0.1, 0.1, 1.3, 0.1],
                       [0.1, 0.1, 0.1, 1.2], [0.9, 0.1, 0.1, 0.1]], dtype=np.float32)
    assert _interleave(scores)[:3] == [0, 1, 2]
    # drink first: its best leads, then the others' bests by score (activity, place, food)
    assert _interleave(scores[:, [1, 0, 2, 3]])[:4] == [1, 2, 3, 0]


def test_one_domain_is_ranked_by_score() -> None:
    scores = np.array([[0.5], [0.9], [0.7]], dtype=np.float32)
    assert _interleave(scores) == [1, 2, 0]


def test_domains_are_named_nearest_first() -> None:
    best = {"food": 0.69, "drink": 0.58, "activity": 0.51, "gift": 0.39, "place": 0.47}
    assert _nearest_first(best, ["food", "drink", "activity", "place"]) == \
        ("food", "drink", "activity", "place")
    assert _nearest_first({**best, "place": 0.7}, ["food", "place"]) == ("place", "food")
    assert _nearest_first({d: 0.5 for d in best}, ["place", "food"]) == ("food", "place")
