"""The inspector's view models (storage layer): timeline pages, what a change did, what an
undo would do, supersede stories, source messages, mark wrong, the pins editor."""

from __future__ import annotations

import pytest
from memfs.agent.dream.runner import run_pending

from memfs.changes import commit_changes
from memfs.errors import BadInputError, ConflictError
from memfs.explain import explain
from memfs.gitio import AGENT, USER, run_git
from memfs.ranking import Weights
from memfs.search import SearchHit
from memfs.store import MemoryPair
from memfs.stories import source_messages, story
from memfs.timeline import timeline
from memfs.undo import preview_revert
from tests._fakes_dream import NOW, SESSION, ScriptedExtractor, chat, write_op
from tests.conftest import card_text

THURSDAY = "The user's meeting with Lin is on Thursday."
FRIDAY = "The user's meeting with Lin moved from Thursday to Friday 3 pm."


def clean(pair: MemoryPair) -> str:
    return run_git(pair.root, "status", "--porcelain")


def test_a_dream_as_a_person_reads_it_and_what_undoing_it_would_do(pair: MemoryPair) -> None:
    pair.repo.commit({"cards/c-meet01.md": card_text("c-meet01", THURSDAY, type="plan"),
                      "summary.md": "Alex works with Lin.\n"}, "card", "by hand", USER)
    chat(pair, ["My meeting with Lin moved to Friday 3 pm.", "Noted!"])
    extractor = ScriptedExtractor([
        {**write_op(FRIDAY, [0]), "op": "supersede", "old_id": "c-meet01", "type": "plan"}],
        summary="Alex works with Lin; their meeting is now on Friday.")
    [result] = run_pending(pair, extractor=extractor, now=NOW).results
    assert result.merge is not None

    did = commit_changes(pair.repo, result.merge)
    [sup] = did.superseded
    assert sup.old.id == "c-meet01" and sup.old.status == "stale"
    assert sup.by is not None and sup.by.body == FRIDAY and [c.body for c in did.written] == [FRIDAY]
    assert (did.summary_before, did.summary_after) == (
        "Alex works with Lin.\n", "Alex works with Lin; their meeting is now on Friday.\n")

    head = pair.repo.head()
    undo = preview_revert(pair.repo, result.merge)
    assert undo.possible and undo.changes is not None
    assert [c.body for c in undo.changes.removed] == [FRIDAY]
    assert [c.id for c in undo.changes.restored] == ["c-meet01"]
    assert undo.changes.summary_after == "Alex works with Lin.\n"
    assert f"-{FRIDAY}" in undo.diff
    assert pair.repo.head() == head and clean(pair) == ""

    pair.revert(result.merge)
    assert {c.id: c.status for c in pair.cards()} == {"c-meet01": "active"}
    assert pair.summary() == "Alex works with Lin.\n"


def test_an_undo_that_would_conflict_is_named_and_nothing_changes(pair: MemoryPair) -> None:
    pair.repo.commit({"summary.md": "one\n"}, "summary", "first", USER)
    first = pair.repo.head()
    pair.repo.commit({"summary.md": "two\n"}, "summary", "second", USER)
    head = pair.repo.head()

    undo = preview_revert(pair.repo, first)

    assert not undo.possible and undo.conflicted == ["summary.md"]
    assert undo.conflict is not None and "summary.md changed again" in undo.conflict
    assert pair.repo.head() == head and clean(pair) == ""
    with pytest.raises(ConflictError):
        pair.revert(first)
    assert pair.repo.head() == head and clean(pair) == ""


def test_an_old_pin_commit_is_previewed_as_pin_operations(pair: MemoryPair) -> None:
    first = pair.pin("Allergic to peanuts")
    pair.pin("Vegetarian")
    assert first is not None

    undo = preview_revert(pair.repo, first)

    assert undo.possible and undo.as_pin_ops and undo.changes is not None
    assert undo.changes.pins_removed == ["Allergic to peanuts"]
    assert undo.changes.pins_after == ["Vegetarian"]
    (pair.root / "system" / "pins.md").write_text("- half-typed\n")
    assert preview_revert(pair.repo, first).blocked is not None


def test_timeline_pages_and_who_made_each_change(pair: MemoryPair) -> None:
    pair.pin("Tea, no sugar")
    pair.repo.commit({"cards/c-agent1.md": card_text("c-agent1", "The user likes jazz.")},
                     "card", "remember jazz", AGENT)
    for n in range(3):
        pair.repo.commit({"summary.md": f"v{n}\n"}, "summary", f"v{n}", USER)

    first = timeline(pair.repo, 1, per_page=2)
    assert first.total == 6 and first.pages == 3 and first.has_next and not first.has_prev
    assert [e.subject for e in first.entries] == ["summary: v2", "summary: v1"]
    third = timeline(pair.repo, 3, per_page=2)
    assert [(e.kind, e.who) for e in third.entries] == [("pin", "user"), ("edit", "user")]
    assert [e.who for e in timeline(pair.repo, 2, per_page=2).entries] == ["user", "agent"]
    assert timeline(pair.repo, 9, per_page=2).entries == []
    with pytest.raises(BadInputError):
        timeline(pair.repo, 0)


def test_a_supersede_chain_reads_as_a_story_with_its_sources(pair: MemoryPair) -> None:
    chat(pair, ["Meeting Lin on Thursday.", "ok", "Moved to Friday.", "ok"])
    cards = {
        "c-thu001": card_text("c-thu001", THURSDAY, type="plan", status="stale",
                              superseded_by="c-fri001",
                              source={"session": SESSION, "turns": ["0"]}),
        "c-fri001": card_text("c-fri001", FRIDAY, type="plan", supersedes=["c-thu001"],
                              source={"session": SESSION, "turns": ["2"]}),
        "c-other1": card_text("c-other1", "The user likes tea."),
    }
    pair.repo.commit({f"cards/{k}.md": v for k, v in cards.items()}, "card", "seed", USER)
    all_cards = pair.cards()

    assert [[c.id for c in step] for step in story(all_cards, "c-fri001")] == [
        ["c-thu001"], ["c-fri001"]]
    assert story(all_cards, "c-thu001") == story(all_cards, "c-fri001")
    assert [[c.id for c in s] for s in story(all_cards, "c-other1")] == [["c-other1"]]
    assert [m.content for m in source_messages(pair, pair.card("c-fri001"))] == [
        "Moved to Friday."]


def test_mark_wrong_is_a_user_commit_and_spares_a_hand_edit(pair: MemoryPair) -> None:
    pair.repo.commit({"cards/c-wrong1.md": card_text("c-wrong1", "The user hates cats."),
                      "cards/c-hand01.md": card_text("c-hand01", "The user has a cat.")},
                     "card", "seed", USER)

    sha = pair.mark_wrong("c-wrong1")

    entry = pair.log(1)[0]
    assert entry.sha == sha and entry.author == "user" and entry.subject == "card: mark c-wrong1 wrong"
    assert pair.card("c-wrong1").status == "deleted"
    assert commit_changes(pair.repo, sha).deleted[0].id == "c-wrong1"
    (pair.root / "cards" / "c-hand01.md").write_text(card_text("c-hand01", "Two cats."))
    with pytest.raises(ConflictError, match="uncommitted changes"):
        pair.mark_wrong("c-hand01")
    with pytest.raises(BadInputError, match="already marked wrong"):
        pair.mark_wrong("c-wrong1")


def test_the_pins_editor_refuses_invalid_text_and_stale_forms(pair: MemoryPair) -> None:
    pair.pin("Allergic to peanuts")
    start = pair.repo.read_worktree("system/pins.md") or ""
    head = pair.repo.head()

    with pytest.raises(BadInputError, match=r"line \d+: not a list item"):
        pair.edit_pins(start + "\nnot a pin\n", expected=start)
    assert pair.repo.head() == head and pair.repo.read_worktree("system/pins.md") == start

    sha = pair.edit_pins(start.replace("peanuts", "peanuts and cashews"), expected=start)
    assert sha is not None and pair.pins() == ["Allergic to peanuts and cashews"]
    assert pair.log(1)[0].subject == "pin: edit pins"
    with pytest.raises(ConflictError, match="changed since the editor opened it"):
        pair.edit_pins(start, expected=start)


def test_explain_puts_each_signal_in_words_with_its_share() -> None:
    hit = SearchHit("c-1", "card", "cards/c-1.md", "stale", 0.5, "t",
                    signals={"semantic": 0.25, "bm25": 1.0, "status_factor": 0.6})
    lines = explain(hit, Weights(semantic=0.6, bm25=0.3))
    assert [(s.name, s.contribution) for s in lines] == [
        ("bm25", pytest.approx(0.3)), ("semantic", pytest.approx(0.15)),
        ("status_factor", None)]
    assert "meaning" in lines[1].meaning and "stale" in lines[2].meaning
