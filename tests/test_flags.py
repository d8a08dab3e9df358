"""Stop 41, x-flag: a possible change is flagged beside the card, never acted on.

What a person sees: the card stays active and says, in its front matter, what the user said later
and when; the context shows those words beside the card (retrieved, or as its profile line); a dream
lists the card as questioned; clearing the field by hand clears it everywhere at the next dream.
The sentences are written for this file (not from an extraction split or a change bank)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pytest
from memfs.agent.dream.ops import Extraction, FlagOp, WriteOp
from memfs.agent.dream.runner import run_pending
from memfs.agent.dream.summary import compose_summary

from memfs import gitio
from memfs.cards import Card, PossibleChange, Source
from memfs.changes import commit_changes
from memfs.errors import CardParseError
from memfs.history import Message
from memfs.store import MemoryPair
from tests._fakes_dream import NOW, SESSION, chat
from tests.conftest import card_text

SAID = dt.datetime(2026, 11, 5, 9, 2, tzinfo=dt.UTC)
JOB = "The user works as a nurse at St Mary's."


def _job_card(pair: MemoryPair) -> None:
    (pair.root / "cards").mkdir(exist_ok=True)
    (pair.root / "cards" / "c-job001.md").write_text(card_text("c-job001", JOB), encoding="utf-8")
    pair.repo.commit_paths(pair.root, ["cards/c-job001.md"], gitio.message("edit", "job by hand", gitio.USER), gitio.USER)


class _Flagging:
    """An extractor that flags the job card from the window's third message (as the judge would)."""

    def __call__(self, window: Sequence[Message], cards: Sequence[Card], summary: str,
                 now: dt.datetime) -> Extraction:
        said = window[2]
        return Extraction("They said good morning.", [
            WriteOp(type="fact", body="The user starts at the vet clinic on Monday.", entities=("user",),
                    turns=(said.turn,), session=said.session),
            FlagOp(id="c-job001", words=said.content, said=said.ts, session=said.session, turn=said.turn)])


def test_a_flag_keeps_the_card_active_and_records_what_was_said_and_when(pair: MemoryPair) -> None:
    _job_card(pair)
    chat(pair, ["morning!", "Morning.", "last shift at the ward ever, i start at the vet clinic on monday",
                "Big change!"])

    [result] = run_pending(pair, extractor=_Flagging(), now=NOW).results

    card = pair.card("c-job001")
    assert card.status == "active" and card.body == JOB
    assert card.possible_change == PossibleChange(
        said=SAID, words="last shift at the ward ever, i start at the vet clinic on monday", source=Source(SESSION, (2,)))
    text = (pair.root / "cards" / "c-job001.md").read_text(encoding="utf-8")
    assert Card.from_text(text) == card  # a person's editor and the next dream read the same field
    assert pair.log(n=1)[0].subject == "dream: 1 new card, 1 may have changed, summary rewritten"
    dreamed = gitio.run_git(pair.root, "log", "--format=%s", f"{result.merge}^1..{result.merge}^2").splitlines()
    assert any(s.startswith("card: flag c-job001: may have changed 'last shift") for s in dreamed), dreamed
    change = commit_changes(pair.repo, result.merge)
    assert [c.id for c in change.questioned] == ["c-job001"] and change.edited == []
    assert change.to_json()["questioned"][0]["possible_change"]["words"].startswith("last shift")


def test_clearing_the_flag_by_hand_is_an_ordinary_edit_the_hook_accepts(pair: MemoryPair) -> None:
    _job_card(pair)
    chat(pair, ["morning!", "Morning.", "last shift at the ward ever, i start at the vet clinic on monday", "Oh!"])
    run_pending(pair, extractor=_Flagging(), now=NOW)
    path = pair.root / "cards" / "c-job001.md"
    path.write_text("\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                              if not line.startswith("possible_change:")) + "\n", encoding="utf-8")
    pair.repo.commit_paths(pair.root, ["cards/c-job001.md"], gitio.message("edit", "not a change", gitio.USER), gitio.USER)
    assert pair.card("c-job001").possible_change is None


@pytest.mark.parametrize("field", ['{said: 2026-11-05T09:02:00Z}', '{words: "moved out"}', '"moved out"',
                                   '{said: yesterday, words: "moved out"}'])
def test_a_malformed_flag_is_refused_naming_the_field(field: str) -> None:
    text = card_text("c-job001", JOB).replace("---\nThe", f"possible_change: {field}\n---\nThe")
    with pytest.raises(CardParseError) as err:
        Card.from_text(text, "cards/c-job001.md")
    assert "possible_change" in str(err.value) and "cards/c-job001.md" in str(err.value)


def _card(cid: str, body: str, change: PossibleChange | None = None) -> Card:
    return Card(id=cid, type="fact", body=body, entities=("user",), created=SAID - dt.timedelta(days=30),
                possible_change=change)


def test_the_profile_line_of_a_flagged_card_carries_the_words_until_the_flag_is_cleared() -> None:
    job, home = _card("c-job001", JOB), _card("c-home01", "The user lives in Leeds.")
    window = [Message(SESSION, 2, "user", "last shift at the ward ever", SAID)]
    flag = FlagOp(id=job.id, words="last shift at the ward ever", said=SAID, session=SESSION, turn=2)
    before = f"## Profile\n- {JOB}\n- The user lives in Leeds.\n\n## Recent story\n- 2026-11-01: They met."

    after = compose_summary(before, window, [flag], [job, home], NOW.date())
    assert f'- {JOB} (may have changed: on 2026-11-05 the user said "last shift at the ward ever")' in after
    assert "- The user lives in Leeds.\n" in after

    flagged = job.evolve(possible_change=PossibleChange(SAID, "last shift at the ward ever"))
    again = compose_summary(after, [], [], [flagged, home], NOW.date())  # a later dream keeps it
    assert again.count("may have changed") == 1 and "ward ever" in again
    cleared = compose_summary(again, [], [], [job, home], NOW.date())  # the person cleared the card's field
    assert "may have changed" not in cleared and f"- {JOB}\n" in cleared


def test_a_supersede_of_a_flagged_card_replaces_its_line_and_the_note_goes_with_it() -> None:
    from memfs.agent.dream.ops import SupersedeOp

    flagged = _card("c-job001", JOB, PossibleChange(SAID, "last shift at the ward ever"))
    before = (f'## Profile\n- {JOB} (may have changed: on 2026-11-05 the user said "last shift at the ward ever")'
              "\n\n## Recent story\n- 2026-11-01: They met.")
    new = SupersedeOp(old_id=flagged.id, type="fact", body="The user works at a vet clinic.", entities=("user",),
                      turns=(4,), session=SESSION)
    after = compose_summary(before, [], [new], [flagged], NOW.date())
    assert "- The user works at a vet clinic." in after and "may have changed" not in after and JOB not in after


@pytest.mark.model
def test_the_context_shows_the_flag_beside_a_retrieved_card(pair: MemoryPair) -> None:
    _job_card(pair)
    chat(pair, ["morning!", "Morning.", "last shift at the ward ever, i start at the vet clinic on monday", "Oh!"])
    run_pending(pair, extractor=_Flagging(), now=NOW)

    hits = pair.search("where does the user work as a nurse", k=5)
    [hit] = [h for h in hits if h.id == "c-job001"]
    assert hit.text.startswith(JOB) and '(may have changed: on 2026-11-05 the user said "last shift' in hit.text
    system = pair.context("Do you remember where I work?").system_text
    assert "may have changed: on 2026-11-05" in system


@pytest.mark.model
def test_the_shipped_judge_flags_changes_told_sideways_and_not_talk_about_the_same_thing() -> None:
    """At the shipped threshold. The last three pairs are what the first judge of stop 41 flagged in
    `memfs demo` (0.58, 0.95, 0.96), before it was refit with ordinary chat: a walk, a loaf and a
    cup of tea are not changes."""
    from memfs.agent.dream.change import FLAG_THRESHOLD, JUDGE_PATH, CrossJudge

    cards = ["The user works as a nurse at St Mary's.", "The user lives in Glasgow.", "The user's boyfriend is Jonas."]
    changes = ["last shift at st mary's ever, i start at the vet clinic on monday",
               "the landlord finally gave back the deposit on the glasgow flat, we're all unpacked in dundee",
               "jonas and i called it quits last week, he's kept the cat"]
    same = ["st mary's put me on nights again this month, ugh", "glasgow rain again, third day running",
            "jonas made risotto tonight and it was actually good",
            "Rainy Sunday, Pepper refused to go further than the end of the road.",
            "I finally baked my first loaf with Doughy though!",
            "I finally baked my first loaf with Doughy though! It's a bit flat but it tastes amazing."]
    demo = ["Pepper is Alex's dog, a rescue greyhound who is terrified of pigeons.",
            "Alex started a sourdough starter in late November 2026 and named it Doughy.",
            "Alex drinks Earl Grey tea with no sugar and calls it the only correct tea."]
    judge = CrossJudge(JUDGE_PATH)
    assert all(judge(changes, cards) >= FLAG_THRESHOLD)
    assert all(judge(same, cards + demo) < FLAG_THRESHOLD)
