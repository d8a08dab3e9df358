"""Issue 13, point 1: the profile holds standing facts, not small talk, within its budget.

With the real embedding model (the session fixture): the admission decision on sentences of
its own (none from the profile set or the small-talk bank), the profile eval on a quick run
(one pair, 200 messages), and the dreamed constraint eval (one pair of the dev probes).
"""

from __future__ import annotations

import datetime as dt
import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memfs.agent.dream import standing
from memfs.agent.dream.cardtext import write_body
from memfs.agent.dream.ops import WriteOp
from memfs.agent.dream.prototypes import load_prototypes
from memfs.agent.dream.summary import PROFILE_TYPES, compose_summary, parse_summary
from memfs.agent.evals import profile as profile_eval
from memfs.agent.evals.constraints import groups_of, load_probes

from memfs.embed import Embedder
from memfs.errors import BadInputError

DAY = dt.date(2027, 3, 10)
STANDING = ["I'm a pharmacist at the hospital in town.", "I'm allergic to penicillin.", "I use he/him pronouns.",
            "I don't eat pork.", "Please never joke about my weight.", "We have a spaniel called Nutmeg.",
            "I adore sea swimming.", "My wife Ingrid is a dentist.", "We moved to Galway last weekend."]
HAPPENED = ["Watched a film with my cousin last night.", "I made pancakes this morning, they were great.",
            "Went for a run earlier today.", "We had pizza yesterday, so good.", "Bumped into Sara at the shops.",
            "Spent the evening doing a crossword.", "Tried a new ramen place on Friday, loved it."]


def test_admission_keeps_standing_facts_and_turns_away_what_happened(real_embedder: Embedder) -> None:
    """A standing slot (work, health, pronouns, diet, a boundary, a pet, a taste, a partner;
    a move told as news) is a profile line; a one-off event of the day is not, even when it
    names a person or a taste ("loved it")."""
    protos = load_prototypes(real_embedder)
    texts = STANDING + HAPPENED
    scores = protos.score(np.asarray(real_embedder.embed(texts), dtype=np.float32))
    decided = {t: standing.admit(s, protos.classes, t, DAY, "fact") for t, s in zip(texts, scores, strict=True)}
    assert [t for t in STANDING if not decided[t]] == []
    assert [t for t in HAPPENED if decided[t]] == []
    assert not standing.admit(scores[0], protos.classes, STANDING[0], DAY, "event")


def test_told_as_event_reads_tense_and_dates() -> None:
    assert standing.told_as_event("Oh, and caught up with Aisha over a coffee", DAY)
    assert standing.told_as_event("Omar moved the rota without warning", DAY)
    assert standing.told_as_event("made soup earlier today", DAY)
    assert not standing.told_as_event("I go climbing every Saturday", DAY)
    assert not standing.told_as_event("I've been vegan for years", DAY)
    assert not standing.told_as_event("My mum lives two streets away", DAY)


def test_a_card_that_is_no_standing_fact_is_told_in_the_story_not_the_profile() -> None:
    """The summary admits by the extractor's decision; a card with none is admitted by type
    (the rules, a model), and a line already there stays."""
    talk = WriteOp(type="preference", body="The user finally tried cooking a curry.", profile=False)
    fact = WriteOp(type="fact", body="The user is a pharmacist.", profile=True)
    ruled = WriteOp(type="fact", body="The user lives in Galway.")
    previous = "## Profile\n- Alex (they/them) writes the user's notes by hand.\n\n## Recent story\n"
    text = compose_summary(previous, [], [talk, fact, ruled], [], DAY)
    summary = parse_summary(text)
    assert summary.profile == ["Alex (they/them) writes the user's notes by hand.", "The user is a pharmacist.",
                               "The user lives in Galway."]
    assert "fact" in PROFILE_TYPES


def test_bodies_drop_opening_interjections_and_fragment_context() -> None:
    assert write_body("Oh, and can't decide if I like this podcast", None) == "Can't decide if the user likes this podcast."
    assert write_body("Honestly, honestly the worst part was the rota", None) == "Honestly the worst part was the rota."
    assert write_body("it's a serious allergy", None, "Thanks.") == "It's a serious allergy."
    assert write_body("she's a ranger", None, "My wife, sorry!") == "The user's wife, sorry! She's a ranger."
    assert write_body("honestly i hate mornings lol", None) == "Honestly the user hates mornings lol."


def test_set_files_are_checked_and_an_inline_bank_is_accepted() -> None:
    dev = json.loads(resources.files("memfs.agent.evals").joinpath(profile_eval.FILES["dev"]).read_text("utf-8"))
    inline = profile_eval.parse_set(dev, "dev")
    assert len(inline.standing) == 24 and "topics" in inline.bank
    bank = dict(inline.bank)
    loaded = profile_eval.parse_set({**dev, "bank": bank}, "dev")
    assert loaded.bank == inline.bank
    groups = profile_eval.groups_of(loaded.standing)
    assert all(len({f.slot for f in g}) == len(g) for g in groups)
    assert sorted(f.id for g in groups for f in g) == sorted(f.id for f in loaded.standing)
    with pytest.raises(BadInputError, match="slot"):
        profile_eval.parse_set({**dev, "standing": [{**dev["standing"][0], "slot": "hobby"}]}, "dev")
    with pytest.raises(BadInputError, match="bank"):
        profile_eval.parse_set({**dev, "bank": "../secrets.json"}, "dev")
    with pytest.raises(BadInputError, match="split"):
        profile_eval.load_set("test")


def test_profile_eval_quick_run_keeps_standing_facts_and_no_small_talk(real_embedder: Embedder,
                                                                     tmp_path: Path) -> None:
    """One pair of the dev set (8 standing facts) in 200 messages of small talk: the summary
    is within budget after every dream, no fact leaves the profile once in it, most of the
    facts are there at the end, and no profile line comes from small talk other than a limit
    carded as a boundary (``limits.py`` decides those; the profile keeps every boundary)."""
    from memfs.agent.dream.summary import from_card
    from memfs.agent.services import wired_store

    report = profile_eval.run_set(profile_eval.load_set("dev"), 200, embedder=real_embedder, pairs=1,
                                  home=tmp_path / "home")
    d = report.to_dict()
    pair = wired_store(tmp_path / "home", embedder=real_embedder).pair("eval", "profile-1")
    boundaries = [c.body for c in pair.cards() if c.type == "boundary"]
    assert d["dreams"] >= 1 and d["standing"] == 8
    assert all(p.chars <= report.budget for r in report.pairs for p in r.points)
    assert d["standing_lost"] == []
    assert d["standing_in_profile"] >= 6, d["standing_missing"]
    assert [line for line in d["small_talk_line_texts"] if not any(from_card(line, b) for b in boundaries)] == []
    assert d["small_talk_cards_total"] >= 1  # small talk still writes (retrievable) cards
    assert report.passed


def test_dreamed_constraint_eval_reaches_the_context_by_a_route(real_embedder: Embedder, tmp_path: Path) -> None:
    """One pair of the dev probes (one constraint per domain) dreamed through 200 messages:
    most constraints reach a request's context by the summary, a card or the message."""
    from memfs.agent.evals.constraint_dream import DreamStats, limit_bar, probe_row, replay, tally
    from memfs.agent.services import wired_store

    group = groups_of(load_probes("dev"), 5)[0]
    store = wired_store(tmp_path / "home", embedder=real_embedder)
    pair = store.pair("eval", "group-1")
    said = replay(pair, group, 200)
    rows = [probe_row(pair, p, said[p.id]) for p in group]
    stats = DreamStats(bar=limit_bar())
    tally(stats, pair, said, real_embedder)
    passed = [r for r in rows if r.in_context]
    assert len(passed) >= 3, [(r.probe.id, r.routes) for r in rows]
    assert all(r.routes for r in passed) and not any(r.routes for r in rows if not r.in_context)
    summary: dict[str, Any] = stats.to_dict()
    assert summary["dreams"] >= 1 and summary["summary_chars_max"] <= 1600


def test_over_budget_the_plans_give_way_before_any_profile_line() -> None:
    """Fourteen long standing facts and ten open plans: the summary fits its budget, every
    profile line is still there (condensed), and the plans that left are the furthest off."""
    words = [f"{a}{b}{c}" for a in "bcdfg" for b in "aeiou" for c in "lmnprst"]
    ops: list[WriteOp] = [WriteOp(type="fact", body="The user " + " ".join(words[i * 14:(i + 1) * 14]) + ".",
                                  profile=True) for i in range(14)]
    ops += [WriteOp(type="plan", body="The user will " + " ".join(words[-(i + 1) * 14:][:14]),
                    expires=DAY + dt.timedelta(days=i + 1)) for i in range(10)]
    text = compose_summary("", [], ops, [], DAY)
    assert len(text + "\n") <= 1600  # as summary.md is written
    assert len(parse_summary(text).profile) == 14
    kept = [line for line in text.splitlines() if "(until " in line]
    assert 0 < len(kept) < 10 and f"(until {(DAY + dt.timedelta(days=1)).isoformat()})" in kept[0]


def test_the_story_tells_events_before_cards_that_were_no_standing_fact() -> None:
    """A dream's story lines (four at most) put what happened first: a relative's news is
    not crowded out by small talk that was no profile line."""
    from memfs.history import Message

    when = dt.datetime(2027, 3, 10, 18, 0, tzinfo=dt.UTC)
    window = [Message("s-20270310-01", 0, "user", "long day", when)]
    talk = [WriteOp(type="preference", body=f"The user tried dish number {i}.", profile=False) for i in range(4)]
    news = WriteOp(type="event", body="The user's dad needs to be near a hospital for his heart.")
    story = parse_summary(compose_summary("", window, [*talk, news], [], DAY)).story
    assert story[0].endswith(news.body) and len(story) == 4
