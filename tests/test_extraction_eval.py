"""The extraction eval: the labelled set, the matcher, and the offline extractor's floors."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

import pytest
from memfs.agent.dream import devset
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream.extract_offline import extract_offline
from memfs.agent.dream.ops import CloseOp, Extraction, MergeOp, Op, SupersedeOp, WriteOp

from memfs.cards import Card

# Blind splits (``ev.BLIND``: blind8 onwards) are each run once, by the lead, at the end of a round
# (which is when, and their first numbers: BENCHMARKS.md); none is tuned on, and all are left out
# of every floor here so that no test run shows their numbers.
BLIND = ev.BLIND  # the eval's own list: a split added there is left out here too
DATASET = [w for w in ev.load_dataset() if w.split not in BLIND]

# The honest figures are each blind split's FIRST measurement, taken before any rule was
# written for it: blind 1.0/0.471, blind2 0.857/0.429, blind3 0.812/0.619, blind4 0.857/0.353,
# blind5 1.0/0.5, blind6 0.385/0.417 (reminders that say "something/that", hedged speculation,
# a relative's health news; before the rules for them). Every split has since been tuned on, so
# the numbers below (all P 0.994 R 0.994; tune 1.0/0.974 since "I might go up to Leeds this
# weekend" is no longer a plan; blind3 0.955/1.0; the rest 1.0/1.0) only guard against
# regressions; they are not an estimate of quality on new text.
FLOORS = {"all": (0.94, 0.8), "tune": (0.97, 0.96), "heldout": (0.94, 0.94), "blind": (0.94, 0.94),
          "blind2": (0.92, 0.92), "blind3": (0.93, 0.95), "blind4": (0.94, 0.94), "blind5": (0.94, 0.94),
          "blind6": (0.9, 0.9)}
SPLITS = {"tune", "heldout", "blind", "blind2", "blind3", "blind4", "blind5", "blind6", "blind7", "misleading"}


def test_the_set_is_big_and_varied_enough() -> None:
    assert len(DATASET) >= 34
    assert sum(len(w.messages) for w in DATASET) >= 550
    assert sum(len(w.expected["cards"]) for w in DATASET) >= 140
    assert {w.split for w in DATASET} >= SPLITS
    assert len({m.content for w in DATASET for m in w.messages}) > 0.97 * sum(len(w.messages) for w in DATASET)
    kinds = {k for w in DATASET for k in ("supersede", "retire", "merge") if w.expected.get(k)}
    assert kinds == {"supersede", "retire", "merge"}
    assert any(r.get("expires") for w in DATASET for r in w.expected["cards"])


def test_every_target_names_an_existing_active_card() -> None:
    for w in DATASET:
        ids = {c.id for c in w.cards if c.status == "active"}
        targets = {*w.expected.get("supersede", []), *w.expected.get("retire", []),
                   *(i for m in w.expected.get("merge", []) for i in m)}
        assert targets <= ids, w.id


@pytest.mark.parametrize("split,prefix", [("blind21", "x21"), ("blind22", "x22"), ("blind23", "x23"),
                                          ("blind24", "x24"), ("blind25", "x25"), ("blind26", "x26"),
                                          ("blind27", "x27"), ("blind28", "x28"), ("blind29", "x29"),
                                          ("blind30", "x30"), ("blind31", "x31"), ("blind32", "x32"),
                                          ("blind33", "x33"), ("blind34", "x34"),
                                          ("blind35", "x35")])
def test_the_blind21_to_blind35_windows_load(split: str, prefix: str) -> None:
    """blind21 to blind35 load and are well formed (read only: each is measured once, by the
    lead, never run, scored or tuned on here). blind34 and blind35 have eight windows, the others six."""
    windows = [w for w in ev.load_dataset() if w.split == split]
    count = 8 if split in ("blind34", "blind35") else 6
    assert split in ev.BLIND and [w.id[:6] for w in windows] == [f"{prefix}-0{n}" for n in range(1, count + 1)]
    assert sum(len(w.expected["cards"]) for w in windows) >= 40
    assert all(w.expected["forbidden"] for w in windows)
    assert all(r.get("expires") for w in windows for r in w.expected["cards"] if r["type"] == "plan")
    for w in windows:
        ids = {c.id for c in w.cards if c.status == "active"}
        targets = {*w.expected["supersede"], *w.expected["retire"], *(i for m in w.expected["merge"] for i in m)}
        assert targets <= ids and all(m.ts < w.now for m in w.messages), w.id
    assert all(any(w.expected[k] for w in windows) for k in ("supersede", "retire", "merge"))


def test_blind36_loads() -> None:
    """blind36 (written at stop 39 about knowing which fact is still true: changes of job, home,
    partner, name, pronouns and habits beside decoys that mention the same things; measured once at
    stop 40) loads and has the size it was written to. It has no retired plan or merge, so it is not
    in the load test above."""
    assert "blind36" in ev.BLIND
    assert not any(w.split == "blind36" for w in ev.select(ev.load_dataset(), ""))
    windows = [w for w in ev.load_dataset() if w.split == "blind36"]
    assert [w.id[:6] for w in windows] == [f"x36-0{n}" for n in range(1, 9)]
    assert sum(len(w.expected["supersede"]) for w in windows) >= 20
    assert sum(len(w.expected["forbidden"]) for w in windows) >= 40
    assert sum(len(w.expected["cards"]) for w in windows) >= 45
    assert all(r.get("expires") for w in windows for r in w.expected["cards"] if r["type"] == "plan")
    assert all(m.ts <= w.now for w in windows for m in w.messages)


WRITTEN_AS = {
    # split: (reference cards, supersedes, forbidden entries) at least, and what it was written about
    "blind37": (45, 12, 30, "stop 40, measured at stop 40: standing facts said in passing and changes to them told "
                            "sideways (job, home, partner, name, pronouns, habits that end) beside other people's facts, "
                            "reported speech, hypotheticals, sarcasm, temporary stays, workplaces named after people and "
                            "questions to the assistant"),
    "blind38": (50, 16, 40, "stop 40, measured at stop 41: as blind37, several changes told while talking about a second "
                            "card's subject, trips among the temporary stays"),
    "blind39": (60, 24, 60, "stop 41, measured at stop 41: standing facts that mostly do not change (over half of each "
                            "window's user messages ordinary talk about the existing cards) beside changes told sideways"),
    "blind40": (60, 24, 60, "stop 41, measured at stop 41: as blind39, preferences that flip among the changes, set in 2071"),
}


@pytest.mark.parametrize("split", sorted(WRITTEN_AS))
def test_the_measured_blind37_to_blind40_load(split: str) -> None:
    """blind37 to blind40 (each written and measured once as ``WRITTEN_AS`` says) load and have the
    size they were written to."""
    cards, supersedes, forbidden, _ = WRITTEN_AS[split]
    assert split in ev.BLIND
    assert not any(w.split == split for w in ev.select(ev.load_dataset(), ""))
    _assert_written_as(split, cards=cards, supersedes=supersedes, forbidden=forbidden)


def test_blind41_loads_and_is_unmeasured() -> None:
    """blind41 (written at stop 41 like blind40, about standing facts that mostly do not change:
    at least half of each window's user messages are ordinary talk about the existing cards, health
    limits and medication in passing included, beside changes of job, home, partner, name, pronouns,
    habits and preferences told sideways, other people's facts, reported speech, hypotheticals,
    sarcasm, temporary stays, workplaces named after people and questions to the assistant; set in
    2072) loads, is blind and not yet measured, and has the size it was written to."""
    assert "blind41" in ev.BLIND and "blind41" in devset.never() and "blind41" not in devset.MEASURED
    assert not any(w.split == "blind41" for w in ev.select(ev.load_dataset(), ""))
    _assert_written_as("blind41", cards=60, supersedes=24, forbidden=60)


def _assert_written_as(split: str, cards: int, supersedes: int, forbidden: int) -> None:
    """The shape blind37 to blind41 were written to: eight windows of 25 to 35 messages, at least
    ``cards`` reference cards, ``supersedes`` changes and ``forbidden`` entries, a retired plan and
    a merge, every plan dated, every message before the window's ``now``, every target an active card."""
    windows = [w for w in ev.load_dataset() if w.split == split]
    assert [w.id[:6] for w in windows] == [f"x{split[5:]}-0{n}" for n in range(1, 9)]
    assert all(25 <= len(w.messages) <= 35 for w in windows)
    assert sum(len(w.expected["cards"]) for w in windows) >= cards
    assert sum(len(w.expected["supersede"]) for w in windows) >= supersedes
    assert sum(len(w.expected["forbidden"]) for w in windows) >= forbidden
    assert any(w.expected["retire"] for w in windows) and any(w.expected["merge"] for w in windows)
    assert all(r.get("expires") for w in windows for r in w.expected["cards"] if r["type"] == "plan")
    assert all(m.ts < w.now for w in windows for m in w.messages)
    for w in windows:
        ids = {c.id for c in w.cards if c.status == "active"}
        targets = {*w.expected["supersede"], *w.expected["retire"], *(i for m in w.expected["merge"] for i in m)}
        assert targets <= ids, w.id


@pytest.mark.parametrize("split", ["blind22", "blind23", "blind24", "blind25", "blind26", "blind27",
                                   "blind28", "blind29", "blind30", "blind31", "blind32", "blind33", "blind34",
                                   "blind35", "blind36", "blind37", "blind38", "blind39", "blind40"])
def test_measured_blind_splits_are_dev_now(split: str) -> None:
    """blind22 to blind28 (each measured once, at stops 32 to 34), blind29 to blind32 (at stop 37),
    blind33 and blind34 (at stop 38), blind35 to blind37 (at stop 40), blind38 to blind40 (at stop 41) are dev now: fits and
    estimates may read them, and the default run still leaves them out (they are in ``BLIND``)."""
    assert split in devset.MEASURED and split not in devset.never()
    assert any(w.split == split for w in devset.dev_windows())
    assert not any(w.split == split for w in ev.select(ev.load_dataset(), ""))


def draft(type_: str, body: str, expires: str | None = None, entities: Sequence[str] = ("user",)) -> WriteOp:
    return WriteOp(type=type_, body=body, entities=tuple(entities),
                   expires=dt.date.fromisoformat(expires) if expires else None)


@pytest.mark.parametrize("op,ref,ok", [
    (draft("fact", "The user has a corgi named Biscuit."), {"type": "fact", "keywords": ["biscuit", "corgi"]}, True),
    (draft("fact", "The user has a dog named Biscuit."), {"type": "fact", "keywords": ["biscuit", "corgi"]}, False),
    (draft("relationship", "The user is engaged to Chris."), {"type": "relationship", "keywords": ["chris", "propos|engaged"]}, True),
    (draft("relationship", "The user's sister is Maya."), {"type": "fact", "keywords": ["maya"]}, True),
    (draft("plan", "Maya visits."), {"type": "fact", "keywords": ["maya"]}, False),
    (draft("event", "Pepper died."), {"type": "fact", "keywords": ["pepper"], "types": ["event", "fact"]}, True),
    (draft("fact", "x", entities=("user", "Lin")), {"type": "fact", "keywords": ["lin"]}, True),
    (draft("plan", "Dentist.", "2026-11-05"), {"type": "plan", "keywords": ["dentist"], "expires": "2026-11-05"}, True),
    (draft("plan", "Dentist.", "2026-11-06"), {"type": "plan", "keywords": ["dentist"], "expires": "2026-11-05"}, False),
    (draft("plan", "Dentist."), {"type": "plan", "keywords": ["dentist"], "expires": "2026-11-05"}, False),
])
def test_card_matching(op: WriteOp, ref: dict[str, Any], ok: bool) -> None:
    assert ev.card_matches(op, ref) is ok


def oracle(window: ev.EvalWindow) -> Extraction:
    """An extractor that writes exactly the references: the scorer must give it 1.0."""
    ops: list[Op] = []
    for ref in window.expected["cards"]:
        body = " ".join(k.split("|")[0] for k in ref["keywords"])
        exp = dt.date.fromisoformat(ref["expires"]) if ref.get("expires") else None
        ops.append(WriteOp(type=ref.get("types", [ref["type"]])[0], body=body, entities=("user",), expires=exp))
    first = window.expected["cards"][0] if window.expected["cards"] else {"type": "fact"}
    ops += [SupersedeOp(old_id=i, type="fact", body="old", entities=("user",)) for i in window.expected["supersede"]]
    ops += [CloseOp(id=i) for i in window.expected["retire"]]
    ops += [MergeOp(ids=tuple(m), type=first["type"], body="m") for m in window.expected["merge"]]
    return Extraction("", ops)


def test_scoring_an_oracle_a_silent_and_a_noisy_extractor() -> None:
    by_id = {w.id: w for w in DATASET}

    def perfect(msgs: Sequence[Any], cards: Sequence[Card], summary: str, now: dt.datetime) -> Extraction:
        return oracle(next(w for w in by_id.values() if w.messages == tuple(msgs)))

    report = ev.score_extraction(perfect, DATASET)
    cards = report.cards()
    assert cards.fn == 0 and cards.tp == sum(len(w.expected["cards"]) for w in DATASET)
    assert report.targets("retire").fn == 0 and report.targets("merge").precision == 1.0

    silent = ev.score_extraction(lambda *a: Extraction("", []), DATASET)
    assert silent.cards().recall == 0.0 and silent.cards().precision == 1.0

    junk = [draft("fact", f"The user said thing {i}.") for i in range(5)]
    noisy = ev.score_extraction(lambda *a: Extraction("", list(junk)), DATASET)
    assert noisy.cards().precision == 0.0 and noisy.windows[0].unmatched_produced


def test_offline_extractor_stays_above_its_floors() -> None:
    # dev13 (issue 13's fourth round) is training text for the learned extractor, which no rule
    # was written from (the rules alone: 0.667 / 0.176 on it); the floors are the rules' own
    numbers = ev.score_extraction(extract_offline, [w for w in DATASET if w.split != "dev13"]).as_json()
    for split, (p_floor, r_floor) in FLOORS.items():
        assert numbers[split]["precision"] >= p_floor, (split, numbers[split])
        assert numbers[split]["recall"] >= r_floor, (split, numbers[split])
    assert numbers["all"]["supersede_accuracy"] >= 0.88  # blind7 (1 of 3 supersedes for the rules) is in "all" now
    assert numbers["all"]["retire_accuracy"] >= 0.95
    assert numbers["blind5"]["supersede_accuracy"] >= 0.85
    assert numbers["misleading"]["false_cards"] == 0  # the rules on the regression set (tuned: see BENCHMARKS)


def test_module_entry_prints_a_table_and_one_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert ev.main(["--extractor", "rules"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[0].startswith("window") and any(line.startswith("w01-") for line in out)
    last = json.loads(out[-1])
    assert last["extractor"] == "rules" and {"all", *SPLITS} <= set(last)
    assert {"false_cards", "false_rate"} <= set(last["blind7"])


def test_a_keyword_matches_at_a_word_start_not_inside_a_word() -> None:
    """A stem still matches its forms, but a short keyword no longer counts a card about a
    trip "tomorrow" as the forbidden card about a rowing club (stop 27's eval artefact)."""
    assert ev.has_word("allerg", "the user is allergic to sesame")
    assert ev.has_word("row", "the user joined a row club")
    assert not ev.has_word("row", "the user flies tomorrow")
    assert ev.has_word("Ex-boss", "her ex-boss called")


def test_a_supersede_counts_as_right_by_a_card_only_when_that_card_is_right() -> None:
    """The plain supersede score looks at the replaced card alone: a sentence that says nothing of
    the user's home still "rightly" supersedes it. ``supersede_matched`` asks for the new card too."""
    now = dt.datetime(2027, 5, 1, 12, tzinfo=dt.UTC)
    window = ev.EvalWindow(id="w", split="unit", now=now, summary="", messages=(), cards=(), expected={
        "cards": [{"type": "fact", "keywords": ["leeds"]}], "supersede": ["c-home", "c-job"]})
    junk = SupersedeOp(old_id="c-home", type="fact", body="The user tried the neighbour's raki once.")
    move = SupersedeOp(old_id="c-home", type="fact", body="The user moved to Leeds.")
    wrong = SupersedeOp(old_id="c-pet", type="fact", body="The user moved to Leeds.")
    by_junk = ev.score_window(Extraction(summary="", ops=[junk]), window).targets
    assert (by_junk["supersede"].tp, by_junk["supersede_matched"].tp, by_junk["supersede_matched"].fp) == (1, 0, 1)
    by_move = ev.score_window(Extraction(summary="", ops=[move]), window).targets["supersede_matched"]
    assert (by_move.tp, by_move.fp, by_move.fn) == (1, 0, 1)  # c-job was never replaced
    off = ev.score_window(Extraction(summary="", ops=[wrong]), window).targets["supersede_matched"]
    assert (off.tp, off.fp, off.fn) == (0, 1, 2)
