"""Retrieval quality with the real model (all-MiniLM-L6-v2, loaded once per session)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from memfs import history
from memfs.app import MemoryStore
from memfs.embed import Embedder
from memfs.gitio import DREAM
from memfs.store import MemoryPair
from tests.conftest import card_text

pytestmark = pytest.mark.model

NOW = dt.datetime(2026, 11, 6, 10, 0, tzinfo=dt.timezone.utc)

DISTRACTORS = {
    "c-hike": "The user goes hiking in the Peak District most weekends.",
    "c-sister": "The user's sister Priya lives in Manchester and visits at Christmas.",
    "c-job": "The user works as a nurse on a children's ward.",
    "c-dog": "The user has a dog called Biscuit who hates the rain.",
    "c-band": "The user's favourite band is Fleetwood Mac.",
    "c-food": "The user's favourite restaurant is a small Italian place near the station.",
    "c-horror": "The user does not want horror film suggestions: they cause nightmares.",
    "c-bike": "The user cycles to work when it is not raining.",
    "c-flat": "The user moved into a flat in Bristol in October.",
    "c-lang": "The user is learning Spanish with an app before a trip to Seville.",
    "c-plant": "The user keeps killing basil plants on the kitchen windowsill.",
    "c-sleep": "The user often sleeps badly before early shifts.",
}


def cards(pair: MemoryPair, items: dict[str, tuple[str, dict[str, object]]]) -> None:
    changes: dict[str, str | None] = {
        f"cards/{cid}.md": card_text(cid, body, **fields) for cid, (body, fields) in items.items()}
    pair.repo.commit(changes, "dream", "cards for the test", DREAM)


@pytest.fixture
def rpair(isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> MemoryPair:
    pair = MemoryStore(isolated_env, embedder=real_embedder).pair("alex", "mira")
    cards(pair, {cid: (body, {}) for cid, body in DISTRACTORS.items()})
    return pair


def test_the_moved_meeting_ranks_first_and_the_stale_one_is_hidden(rpair: MemoryPair) -> None:
    cards(rpair, {
        "c-meet-thu": ("The user has a meeting with Lin on Thursday at 3 pm.",
                       {"type": "plan", "status": "stale", "superseded_by": "c-meet-fri",
                        "entities": ["user", "Lin"]}),
        "c-meet-fri": ("The user's meeting with Lin moved from Thursday to Friday 3 pm.",
                       {"type": "plan", "supersedes": ["c-meet-thu"], "entities": ["user", "Lin"],
                        "updated": "2026-11-05T09:12:00Z"}),
    })
    hits = rpair.search("When is my meeting with Lin?", k=5, now=NOW)
    assert hits[0].id == "c-meet-fri"
    assert "c-meet-thu" not in [h.id for h in hits]
    marked = {h.id: h for h in rpair.search("When is my meeting with Lin?", k=5, now=NOW,
                                            include_stale=True)}
    assert marked["c-meet-thu"].status == "stale"
    assert marked["c-meet-fri"].score > marked["c-meet-thu"].score


def test_a_snack_question_finds_the_peanut_allergy(rpair: MemoryPair) -> None:
    cards(rpair, {"c-peanut": ("The user is allergic to peanuts.",
                               {"salience": 0.9, "entities": ["user"]})})
    hits = rpair.search("Can you suggest a snack?", k=3, now=NOW)
    assert "c-peanut" in [h.id for h in hits]


def test_the_vet_story_400_turns_back_is_found(rpair: MemoryPair) -> None:
    from memfs.agent.evals.planted_data import generate_planted

    talk = generate_planted().messages()[:440]
    story = ("The funniest thing happened at the vet today: Biscuit jumped off the table, "
             "stole the vet's sandwich and hid under a chair, and everyone was in stitches.")
    talk.insert(20, {"role": "user", "content": story, "ts": talk[20]["ts"],
                     "session": talk[20]["session"]})
    for msg in talk:
        history.append(rpair.root, msg["session"], msg["role"], msg["content"],
                       history.parse_ts(msg["ts"]))
    hits = rpair.search("remember the vet story?", k=5, now=NOW)
    assert story in [h.text for h in hits]
    assert len(talk) - 20 >= 400


def test_another_pairs_card_is_never_returned(isolated_env: Path, real_embedder: Embedder,
                                              fresh_indexes: None) -> None:
    store = MemoryStore(isolated_env, embedder=real_embedder)
    alex, sam = store.pair("alex", "mira"), store.pair("sam", "mira")
    cards(alex, {"c-lin": ("The user's friend Lin loves board games.", {}),
                 "c-peanut": ("The user is allergic to peanuts.", {})})
    cards(sam, {"c-lin": ("The user's colleague Lin is allergic to shellfish.", {}),
                "c-sam-only": ("The user is allergic to peanuts and sesame.", {})})
    for query in ("Is Lin allergic to anything?", "peanuts and sesame allergy"):
        for hit in alex.search(query, k=10, include_stale=True):
            assert hit.id != "c-sam-only" and "shellfish" not in hit.text
            assert "sesame" not in hit.text
    assert any(h.id == "c-sam-only" for h in sam.search("peanuts and sesame allergy", k=3))
