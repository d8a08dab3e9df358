"""Issue 12, fourth round, with the real model: a request for a suggestion is matched by
what it is about, not by how it is asked.

"Can you suggest a hobby I could try?" and the user's earlier, unrelated "Can you suggest a
gift I could buy for my sister?" share their framing, and a whole-sentence embedding sees
that first. The query's vector is moved half-way towards its topic words alone
("hobby try"), so the user's own words about what they love come first. The scenes were
written for this test (not taken from LongMemEval); with the change off, the unrelated
request wins in both, which is what the second assertion checks.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from memfs import history
from memfs.app import MemoryStore
from memfs.embed import Embedder
from memfs.search import with_weights

pytestmark = pytest.mark.model

BACKGROUND: list[str] = json.loads(
    (Path(__file__).parent / "data" / "retrieval_pairs.json").read_text("utf-8"))["background"]
START = dt.datetime(2026, 10, 1, 9, 0, tzinfo=dt.timezone.utc)
SCENES = [
    ("Can you suggest a hobby I could try?",
     "Can you suggest a gift I could buy for my sister?",
     "I've always loved working with my hands, like woodwork or clay."),
    ("Any ideas for a hobby I could start?",
     "Any ideas for a gift I could buy my sister?",
     "I love making things with my hands, like woodwork or pottery."),
]


def test_a_request_is_matched_by_its_topic_not_its_framing(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    store = MemoryStore(isolated_env, embedder=real_embedder)
    for n, (query, other_request, taste) in enumerate(SCENES):
        pair = store.pair("alex", f"topic-{n}")
        lines = [*BACKGROUND[:6], other_request, taste]
        for m, text in enumerate(lines):
            history.append(pair.root, "s-20261001-01", "user", text,
                           START + dt.timedelta(minutes=m))
        now = START + dt.timedelta(days=2)
        hits = pair.search(query, k=3, now=now)
        assert hits[0].text == taste, [h.text for h in hits]
        assert hits[0].signals["topic_query"] == pytest.approx(0.5)
        plain = pair.search(query, k=3, now=now, weights=with_weights(request_topic=0.0))
        assert plain[0].text == other_request, [h.text for h in plain]
        assert "topic_query" not in plain[0].signals
