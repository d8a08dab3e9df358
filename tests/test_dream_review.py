"""Review mode (``dream_merge = review``): a finished dream waits as a proposal; the user
accepts it (the usual dream merge) or rejects it (its window counts as dreamed)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from memfs.agent.dream import review, worktree
from memfs.agent.dream.runner import run_pending

from memfs.app import MemoryStore
from memfs.compaction import pending_events
from memfs.config import Config, load_config
from memfs.errors import BadInputError, ConflictError
from memfs.gitio import USER, run_git
from memfs.store import MemoryPair
from memfs.window import current_window
from tests._fakes_dream import NOW, SESSION, ScriptedExtractor, chat, write_op
from tests.conftest import card_text

LINES = ["My meeting with Lin moved to Friday.", "Noted!",
         "I adopted a cat called Miso.", "Lovely!"]


@pytest.fixture
def rpair(isolated_env: Path) -> MemoryPair:
    store = MemoryStore(isolated_env, config=Config(dream_merge="review"))
    pair = store.pair("alex", "mira")
    pair.repo.commit({"cards/c-meet01.md": card_text(
        "c-meet01", "The user's meeting with Lin is on Thursday.", type="plan")},
        "card", "add by hand", USER)
    return pair


def dream(pair: MemoryPair) -> str:
    """Chat, then dream: one supersede, one new card, a new summary. Returns the event id."""
    event = chat(pair, LINES)
    extractor = ScriptedExtractor([
        {**write_op("The user's meeting with Lin moved from Thursday to Friday.", [0]),
         "op": "supersede", "old_id": "c-meet01", "type": "plan"},
        write_op("The user adopted a cat called Miso.", [2]),
    ], summary="Alex moved the Lin meeting to Friday and adopted Miso.")
    head = pair.repo.head()
    [result] = run_pending(pair, extractor=extractor, now=NOW).results
    assert pair.repo.head() == head, "main moved"
    assert result.status == "proposed", result.error
    assert result.proposal == f"dream/review/{event.id}"
    return event.id


def test_a_proposal_shows_what_it_would_do_and_accept_is_the_usual_merge(
        rpair: MemoryPair) -> None:
    event_id = dream(rpair)

    assert [c.status for c in rpair.cards()] == ["active"]
    [proposal] = review.proposals(rpair)
    assert proposal.id == event_id
    assert proposal.subject == "1 new card, 1 superseded, summary rewritten"
    change = proposal.changes(rpair.repo)
    assert sorted(c.body for c in change.written) == [
        "The user adopted a cat called Miso.",
        "The user's meeting with Lin moved from Thursday to Friday."]
    [sup] = change.superseded
    assert sup.old.id == "c-meet01" and sup.by is not None and "Friday" in sup.by.body
    assert change.summary_before == "" and "Miso" in change.summary_after
    assert "+The user adopted a cat called Miso." in proposal.diff(rpair.repo)
    # the window stays evicted while it waits, and a second run does not dream it again
    assert current_window(rpair) == []
    assert run_pending(rpair, extractor=ScriptedExtractor([]), now=NOW).results == []

    merge = review.accept(rpair, event_id[:12])

    entry = rpair.log(1)[0]
    assert entry.sha == merge and entry.is_dream and entry.author == "memfs-dream"
    assert entry.subject == "dream: 1 new card, 1 superseded, summary rewritten"
    assert entry.trailers["Memfs-Event"] == event_id
    assert entry.trailers["Memfs-Window"] == f"{SESSION}:0-3"
    assert {c.id: c.status for c in rpair.cards()}["c-meet01"] == "stale"
    assert "Miso" in rpair.summary()
    assert review.proposals(rpair) == [] and pending_events(rpair.root) == []
    assert worktree.dream_branches(rpair.root) == []


def test_reject_drops_the_branch_and_marks_the_window_dreamed(rpair: MemoryPair) -> None:
    event_id = dream(rpair)
    tip = review.get(rpair, event_id).tip
    (rpair.root / "cards" / "c-hand01.md").write_text(card_text("c-hand01", "Staged by hand."))
    run_git(rpair.root, "add", "cards/c-hand01.md")

    sha = review.reject(rpair, event_id)

    entry = rpair.log(1)[0]
    assert entry.sha == sha and entry.author == "user" and not entry.is_dream
    assert entry.subject.startswith(f"dream: rejected {event_id}")
    assert entry.trailers["Memfs-Actor"] == "user"
    assert entry.trailers["Memfs-Event"] == event_id
    assert entry.trailers["Memfs-Window"] == f"{SESSION}:0-3"
    assert entry.trailers["Memfs-Rejected"] == tip
    # an empty commit: what the user had staged is neither in it nor lost
    assert run_git(rpair.root, "diff", "--name-only", f"{sha}~1", sha) == ""
    assert run_git(rpair.root, "diff", "--cached", "--name-only").split() == ["cards/c-hand01.md"]
    assert [c.status for c in rpair.cards()] == ["active"] and rpair.summary() == ""
    assert worktree.dream_branches(rpair.root) == [] and pending_events(rpair.root) == []
    assert worktree.already_merged(rpair.root, event_id) == sha
    # the messages left the window for good: deleting .memfs/ does not bring them back
    shutil.rmtree(rpair.root / ".memfs")
    assert current_window(rpair) == []
    assert run_pending(rpair, extractor=ScriptedExtractor([]), now=NOW).results == []


def test_a_user_edit_since_the_dream_wins_at_accept(rpair: MemoryPair) -> None:
    event_id = dream(rpair)
    rpair.repo.commit({"cards/c-meet01.md": card_text(
        "c-meet01", "The meeting with Lin is cancelled.", type="plan")}, "card", "fix", USER)
    head = rpair.repo.head()

    with pytest.raises(ConflictError, match="cards/c-meet01.md: changed on main"):
        review.accept(rpair, event_id)

    assert rpair.repo.head() == head
    assert review.proposals(rpair) == []
    # the window is pending again: the next dream reads the user's version and proposes anew
    extractor = ScriptedExtractor([write_op("The user adopted a cat called Miso.", [2])])
    [again] = run_pending(rpair, extractor=extractor, now=NOW).results
    assert again.status == "proposed" and again.event == event_id
    assert "cancelled" in " ".join(c.body for c in extractor.calls[0][1])


def test_recovery_keeps_proposals_and_an_empty_dream_is_merged_anyway(
        rpair: MemoryPair) -> None:
    event_id = dream(rpair)
    run_git(rpair.root, "branch", "dream/20260101-000000")  # a dead dream's leftover

    chat(rpair, ["hi", "hello"])
    [result] = run_pending(rpair, extractor=ScriptedExtractor([], summary=""), now=NOW).results

    assert worktree.dream_branches(rpair.root) == [f"dream/review/{event_id}"]
    # a dream that keeps nothing has nothing to approve: it is merged as in auto mode
    assert result.status == "merged" and [p.id for p in review.proposals(rpair)] == [event_id]


def test_the_setting_is_validated(tmp_path: Path) -> None:
    assert load_config({"MEMFS_DREAM_MERGE": "review"}, str(tmp_path)).dream_merge == "review"
    assert load_config({}, str(tmp_path)).dream_merge == "auto"
    with pytest.raises(BadInputError, match="dream_merge: must be one of auto, review"):
        load_config({"MEMFS_DREAM_MERGE": "sometimes"}, str(tmp_path))


def test_the_cli_lists_accepts_and_rejects(rpair: MemoryPair, run_cli: Any,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMFS_DREAM_MERGE", "review")
    first = dream(rpair)
    chat(rpair, ["I started learning Portuguese.", "Boa sorte!"])
    # (scripted, not `memfs dream`: the offline extractor would load the embedding model)
    [result] = run_pending(rpair, extractor=ScriptedExtractor(
        [write_op("The user is learning Portuguese.", [4])]), now=NOW).results
    second = result.to_json()
    assert second["status"] == "proposed"

    listed = run_cli("-u", "alex", "-c", "mira", "dream", "--list", "--json").json()
    by_id = {p["id"]: p for p in listed["proposals"]}
    assert set(by_id) == {first, second["event"]}  # same second: either order
    assert by_id[first]["changes"]["superseded"][0]["old"]["id"] == "c-meet01"
    human = run_cli("-u", "alex", "-c", "mira", "dream", "--list")
    assert "~ c-meet01 -> " in human.out and "+ new card" in human.out

    accepted = run_cli("-u", "alex", "-c", "mira", "dream", "--accept", first, "--json").json()
    assert accepted == {"proposal": first, "action": "accepted", "commit": rpair.log(1)[0].sha}
    rejected = run_cli("-u", "alex", "-c", "mira", "dream", "--reject", second["event"])
    assert rejected.code == 0 and f"rejected {second['event']}" in rejected.out
    assert rpair.log(1)[0].author == "user" and rpair.log(2)[1].is_dream

    again = run_cli("-u", "alex", "-c", "mira", "dream", "--accept", first)
    assert again.code == 2 and "no such dream waiting for review" in again.err
    both = run_cli("-u", "alex", "-c", "mira", "dream", "--list", "--reject", first)
    assert both.code == 2
    with pytest.raises(BadInputError, match="no such dream waiting for review"):
        review.reject(rpair, "e-nope")
