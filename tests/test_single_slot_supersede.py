"""A single-valued slot (name, pronouns, job, home, partner) is replaced by a new card whatever
their similarity, so the new sentence must itself read as that slot (issue 13, point 1).

Seen on main (stop 26, ``memfs eval profile --split dev --messages 1600``): four standing facts
left the profile, superseded by small talk the learned extractor had carded and whose slot was
only the nearest of weak prototype scores: "The user tried ordering food in Welsh on holiday and
panicked." (home 0.30) replaced "The user lives in Cardiff."; the same sentence in Italian (job
0.34) replaced "works as a paramedic"; "German grammar is breaking the user's brain." (pronouns
0.27) replaced the pronouns."""

from __future__ import annotations

import datetime as dt

import numpy as np
from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.extract_semantic import Cand, _replaced
from memfs.agent.dream.ops import SupersedeOp
from memfs.agent.dream.prototypes import Thresholds

from memfs.cards import Card
from memfs.embed import Embedder
from memfs.history import Message

TS = dt.datetime(2027, 3, 1, 18, 0, tzinfo=dt.UTC)
HOME = Card(id="c-home01", type="fact", body="The user lives in Cardiff.", created=TS)


def _cand(slot_score: float | None) -> Cand:
    msg = Message("s-2", 0, "user", "tried ordering food in Welsh on holiday and panicked", TS)
    return Cand("home", "fact", "The user tried ordering food in Welsh on holiday and panicked.", msg, 0.65,
                np.zeros(4, dtype=np.float32), slot_score=slot_score)


def test_a_weak_slot_score_never_replaces_the_users_home() -> None:
    th = Thresholds(accept=0.38)
    low_similarity = np.array([0.3], dtype=np.float32)
    assert _replaced(_cand(0.30), [HOME], low_similarity, ["home"], th, set()) is None
    assert _replaced(_cand(0.55), [HOME], low_similarity, ["home"], th, set()) is HOME
    # a class the prototypes accepted the card by (the embedding extractor) keeps the old rule
    assert _replaced(_cand(None), [HOME], low_similarity, ["home"], th, set()) is HOME


def test_a_real_move_still_supersedes_the_home(real_embedder: Embedder) -> None:
    when = TS + dt.timedelta(days=30)
    window = [Message("s-2", 0, "user", "we finally moved to Leeds last month, new flat is tiny", when),
              Message("s-2", 1, "assistant", "Ha, nice.", when + dt.timedelta(minutes=1))]
    ops = OfflineExtractor(real_embedder)(window, [HOME], "", window[-1].ts).ops
    moved = [op for op in ops if isinstance(op, SupersedeOp)]
    assert [op.old_id for op in moved] == [HOME.id] and "Leeds" in moved[0].body
