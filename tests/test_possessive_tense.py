"""A possessive "'s" before a word in -ing is not the present progressive (stop 32).

The tense test read "emre's wedding" as "emre is wedding", a future marker, so a story told in
the past became a plan for the coming Saturday. The sentences here are new."""

from __future__ import annotations

import datetime as dt

from memfs.agent.dream.dates import looks_past
from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.ops import SupersedeOp, WriteOp

from memfs.embed import Embedder
from memfs.history import Message


def test_a_possessive_is_not_a_future_marker_but_a_pronouns_progressive_is() -> None:
    assert looks_past("at my cousin's christening sunday they passed round the baby and I cried")
    assert looks_past("nana's baking won first prize at the fete on saturday, I ate three scones")
    assert not looks_past("she's leaving on friday, we went shopping for a card")  # the progressive wins
    assert not looks_past("my brother's wedding is on saturday")


def test_a_story_from_a_wedding_last_saturday_is_no_plan(real_embedder: Embedder) -> None:
    said = dt.datetime(2027, 6, 14, 19, 0, tzinfo=dt.UTC)  # a Monday
    window = [Message("s-1", 0, "user", "at my cousin's wedding saturday they served a whole roast lamb and I ate "
                      "way too much", said),
              Message("s-1", 1, "assistant", "Sounds like a feast!", said + dt.timedelta(minutes=1))]
    ops = OfflineExtractor(real_embedder)(window, [], "", said).ops
    plans = [op for op in ops if isinstance(op, (WriteOp, SupersedeOp)) and op.type == "plan"]
    assert plans == [], plans
