"""A message whose memory was superseded is as outdated as its card."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from memfs import history
from memfs.app import MemoryStore
from memfs.gitio import USER
from tests.conftest import FakeEmbedder, card_text

NOW = dt.datetime(2026, 11, 26, 12, 0, tzinfo=dt.timezone.utc)


def test_messages_behind_a_stale_card_are_hidden_unless_asked(isolated_env: Path, fresh_indexes: None) -> None:
    pair = MemoryStore(isolated_env, embedder=FakeEmbedder()).pair("alex", "mira")
    t0 = dt.datetime(2026, 11, 24, 18, 0, tzinfo=dt.timezone.utc)
    for turn, (role, text) in enumerate([
            ("user", "My portfolio review with Lin is on Thursday at 3."),
            ("assistant", "Good luck with the review on Thursday!"),
            ("user", "Update: the review with Lin moved to Friday at 3."),
            ("assistant", "Friday it is.")]):
        history.append(pair.root, "s-1", role, text, t0 + dt.timedelta(minutes=turn))
    pair.repo.commit({
        "cards/c-thu.md": card_text("c-thu", "The user's review with Lin is on Thursday at 3.",
                                    type="plan", status="stale", superseded_by="c-fri",
                                    source={"session": "s-1", "turns": [0]}),
        "cards/c-fri.md": card_text("c-fri", "The user's review with Lin is on Friday at 3.",
                                    type="plan", supersedes=["c-thu"],
                                    source={"session": "s-1", "turns": [2]}),
        "history/s-1.jsonl": (pair.root / "history" / "s-1.jsonl").read_text(),
    }, "card", "review moved", USER)

    ids = [h.id for h in pair.search("review with Lin Thursday", k=10, now=NOW)]
    assert "s-1:0" not in ids, "the message behind the stale Thursday card is outdated"
    assert "c-thu" not in ids
    assert "c-fri" in ids and "s-1:2" in ids
    assert "s-1:1" not in ids, "the reply that echoes an outdated message goes with it"
    assert "s-1:3" in [h.id for h in pair.search("Friday", k=10, now=NOW)], \
        "the reply to a live message stays"

    with_stale = {h.id: h for h in pair.search("review with Lin Thursday", k=10, now=NOW,
                                               include_stale=True)}
    assert with_stale["s-1:0"].status == "stale"
    assert with_stale["c-thu"].status == "stale"
