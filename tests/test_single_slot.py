"""A single-valued slot (name, pronouns, job, home, partner) is replaced only by a sentence that
reads as a change of it (issue 13: the profile never loses a standing fact to small talk).

Found on the spent profile set ``dev`` (stop 32): small talk whose prototype scores were all weak
took the user's home as its argmax slot, and a single slot was replaced whatever the similarity,
so "The user lives in Cardiff." went stale. The moves below are new sentences."""

from __future__ import annotations

import datetime as dt

from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.ops import SupersedeOp

from memfs.cards import Card, Source
from memfs.embed import Embedder
from memfs.history import Message

UTC = dt.UTC
SAID = dt.datetime(2027, 3, 1, 18, 0, tzinfo=UTC)


def _active() -> list[Card]:
    return [Card(id="c-home01", type="fact", body="The user lives in Cardiff.", entities=("user", "Cardiff"),
                 created=SAID - dt.timedelta(days=30), salience=0.7, source=Source("s-0", (4,))),
            Card(id="c-job001", type="fact", body="The user works as a paramedic for the ambulance service.",
                 entities=("user",), created=SAID - dt.timedelta(days=30), salience=0.7, source=Source("s-0", (8,)))]


def _replaced(embedder: Embedder, lines: list[str]) -> set[str]:
    window = [Message("s-1", i, "user" if i % 2 == 0 else "assistant", t, SAID + dt.timedelta(minutes=i))
              for i, t in enumerate(lines)]
    ops = OfflineExtractor(embedder)(window, _active(), "", window[-1].ts).ops
    return {op.old_id for op in ops if isinstance(op, SupersedeOp)}


def test_small_talk_that_only_leans_towards_a_slot_replaces_nothing(real_embedder: Embedder) -> None:
    """Profile dev's sentences: on main before stop 32 the first replaced the home, the second the job."""
    assert _replaced(real_embedder, ["I tried ordering food in Welsh on holiday and panicked.", "Ha, brave!"]) == set()
    assert _replaced(real_embedder, ["I tried ordering food in Italian on holiday and panicked.", "Oh no!"]) == set()


def test_a_move_and_a_new_job_still_replace_the_old_ones(real_embedder: Embedder) -> None:
    assert "c-home01" in _replaced(real_embedder, [
        "big news, we finally moved into our new flat in bristol at the weekend", "Congratulations!"])
    assert "c-job001" in _replaced(real_embedder, [
        "handed in my notice, i start as a driving instructor next month", "Exciting!"])
