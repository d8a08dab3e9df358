"""Stop 35, c-limit: the learned limit score (``memfs.salience.learned_limit``) puts a limit told
through its reason ahead of chat, and the constraint search takes its best rows as candidates
beside the prototype score's (``ConstraintWeights.learned_pool``).

The sentences here are written for this file (not from a probe set or a bank).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from memfs.constraints import ConstraintWeights
from memfs.embed import Embedder
from memfs.salience import NOT_LEARNED, learned_limit
from memfs.store import MemoryPair
from tests._chat import user_lines_pair

LIMITS = [
    "the renal team has me weighing every gram of potassium these days, so bananas and spuds are rationed",
    "since the stent went in the cardiologist wants my pulse kept well under 140, whatever the occasion",
    "my probation terms keep me inside the county line until next spring",
    "with the twins on the way the midwife's list of what's off the menu keeps growing",
    "the mortgage payment doubled in june so anything over twenty quid is a no from me now",
]
"""Limits told through a clinician, a court, a pregnancy and money: no label word."""
TALK = [
    "morning! slept badly again", "the cat has decided my keyboard is her bed", "just put a wash on",
    "watching a documentary about octopuses, wild", "my sister sent me a photo of her new kitchen",
    "rain all day here", "finally sorted the spare room", "had toast for breakfast, living the dream",
    "the bus was twenty minutes late", "my plants are thriving for once", "work was quiet today",
    "thinking of repainting the hallway", "my phone screen cracked, typical", "heading to bed soon",
    "the neighbours got a puppy", "my knees ached after the long walk on sunday",
    "we tried that new ramen place, the broth was unreal", "i'm shattered, the week has been endless",
    "my brother's band played a gig last night, they were loud", "the boiler made that noise again",
    "can't stop listening to that new album", "our team lost again, of course",
    "i burnt the rice, classic me", "the gym was packed this morning", "got my hair cut, feels lighter",
    "my mum rang for an hour about her neighbours", "found an old photo album in the loft",
    "the kids next door are learning the trumpet", "my flatmate ate my leftover pizza",
    "i've been getting into crosswords lately", "went for a swim, the water was freezing",
    "my dad's obsessed with his new barbecue", "the train was cancelled so i worked from home",
    "bought a new plant, named it kevin", "tried yoga, nearly fell over", "the wifi keeps dropping",
    "coffee number three already", "my nephew lost his first tooth", "the supermarket was out of eggs",
    "just finished a really long book",
]


def test_only_the_users_messages_get_a_learned_score() -> None:
    vectors = np.ones((3, 384), dtype=np.float32) / np.sqrt(384)
    for asked in (False, True):  # both regressions
        out = learned_limit(["user", "assistant", "card"], vectors, asked=asked)
        assert out[1] == out[2] == NOT_LEARNED
        assert out[0] != NOT_LEARNED  # the shipped model is in the package
    assert np.all(learned_limit(["user"], np.ones((1, 8), dtype=np.float32)) == NOT_LEARNED)  # other width


@pytest.mark.model
def test_limits_told_through_their_reason_outrank_all_chat(real_embedder: Embedder) -> None:
    """Measured at stop 35: the learned score puts all five limits above all 40 chat lines
    (their logits 0.5-3.7, the chat's best 0.27); the prototype score put the probation and
    the midwife 4th and 6th, below chat about aching knees and a barbecue."""
    texts = LIMITS + TALK
    vectors = np.asarray(real_embedder.embed(texts), dtype=np.float32)
    score = learned_limit(["user"] * len(texts), vectors)
    assert score[:len(LIMITS)].min() > score[len(LIMITS):].max(), score


def _pair(home: Path, embedder: Embedder) -> tuple[MemoryPair, dt.datetime]:
    lines = list(TALK)
    lines.insert(17, LIMITS[2])  # the probation terms, once
    return user_lines_pair(home, embedder, lines, "robin", "learned")


@pytest.mark.model
def test_the_learned_candidates_bring_a_limit_the_prototype_pool_leaves_out(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    """With a prototype pool of 3 (the shipped 80, scaled to a 41-line history) the probation
    terms are not a candidate; the learned model's 3 best bring them into the place slots."""
    from memfs.constraints import rank_constraints
    from memfs.search import open_index, refresh
    from memfs.search_types import make_query

    pair, now = _pair(isolated_env, real_embedder)
    index = open_index(pair.root, pair.store.embedder)
    refresh(index)
    q = make_query("a long weekend away in april, where should we go?", 3, now=now)
    without = [h.text for h in rank_constraints(index, q, ["place"],
                                                ConstraintWeights(pool=3, learned_pool=0, ask_pool=0))]
    with_ = [h.text for h in rank_constraints(index, q, ["place"],
                                              ConstraintWeights(pool=3, learned_pool=3, ask_pool=0))]
    assert LIMITS[2] not in without, without
    assert with_[0] == LIMITS[2], with_


PLAIN = {"i'm allergic to peanuts, even a trace": "food", "i don't drink alcohol at all": "drink",
         "rollercoasters and bungee jumps are a hard no for me": "activity",
         "please never buy me perfume, it gives me a headache": "gift",
         "i won't fly anywhere, long train rides are fine": "place"}
"""Plain limits, one per domain, written before the model's answers were seen."""


@pytest.mark.model
def test_the_learned_model_names_the_domain_of_a_plain_limit(real_embedder: Embedder) -> None:
    """Stop 35, c-limit2: the domain regression (``limit_domains``) is wired to the right
    domains. (Of the five limits told through a reason above, it names two right: the heart-rate
    ceiling reads as drink, the midwife's list as a present, the budget as a place; the eval
    sets measure what that costs.)"""
    from memfs.constraint_domains import DOMAINS
    from memfs.salience import limit_domains

    kinds = limit_domains(np.asarray(real_embedder.embed(list(PLAIN)), dtype=np.float32))
    assert kinds is not None
    assert [DOMAINS[int(i)] for i in kinds.argmax(axis=1)] == list(PLAIN.values())


def test_the_limit_fit_reads_no_fresh_split() -> None:
    """``fit_limit`` reads spent splits only, named one by one: no constraint, request or window
    line of a split outside ``SPENT`` is among its rows (unless a spent probe says it too)."""
    from memfs.agent.evals.constraints import load_probes
    from memfs.agent.evals.splits import CONSTRAINT_FILES
    from memfs.agent.requests.fit_limit import PROFILE_SPENT, SPENT, examples

    texts, _, groups = examples(ask=False)
    assert set(groups) <= {*SPENT, *(f"profile-{s}" for s in PROFILE_SPENT)}
    spent = {t for s in SPENT for p in load_probes(s)
             for t in (p.constraint, p.request, *(c for _, c in p.before))}
    read = set(texts) - spent
    fresh = set(CONSTRAINT_FILES) - set(SPENT)
    if not fresh:
        pytest.skip("every constraint split is spent")
    for split in fresh:
        for p in load_probes(split):
            assert not {p.constraint, p.request, *(c for _, c in p.before)} & read, p.id


ASKS = [
    "can you walk me through setting up a budget spreadsheet? i keep losing track of where my salary goes each month",
    "what's the difference between a fixed and a tracker mortgage, and which makes more sense if rates might fall?",
    "i'm redoing the garden this spring, could you suggest some low-maintenance shrubs that cope with clay soil and shade?",
    "how do i write a cover letter for a job that's a step up from my current role without overselling myself?",
    "could you explain how compound interest works with a simple example? my nephew asked me and i fumbled it",
    "my laptop has been running really slowly lately, what can i check before paying someone to look at it?",
]
"""Long questions to the assistant about the user's life that rule nothing out, written for this
file before the c-ask model existed (stop 36)."""


@pytest.mark.model
def test_long_questions_to_the_assistant_are_not_limits(real_embedder: Embedder) -> None:
    """Stop 36, c-ask: in LongMemEval's real chat the first model's best-scored lines were long
    questions to the assistant, and half of all lines passed its candidate floor (logit 0); three
    of these six do. The second model (stop 38, c-mix), fit with such chat as negatives, keeps
    these questions below the floor and the limits above it."""
    texts = LIMITS + ASKS
    vectors = np.asarray(real_embedder.embed(texts), dtype=np.float32)
    first = learned_limit(["user"] * len(texts), vectors)
    second = learned_limit(["user"] * len(texts), vectors, asked=True)
    assert (first[len(LIMITS):] >= 0.0).sum() >= 2, first
    assert second[:len(LIMITS)].min() >= 0.0, second
    assert second[len(LIMITS):].max() < 0.0, second


def test_the_assistant_chat_halves_share_nothing() -> None:
    """What the fit reads of LongMemEval (``assistant_chat(0)``) and where the bench plants limits
    (``assistant_chat(1)``) share no user message, and neither reads a test question's haystack.
    LongMemEval's slice is never shipped: this runs where a checkout sits next to ../shared."""
    from memfs.agent.requests.fit_limit import LONGMEMEVAL, assistant_chat

    if not LONGMEMEVAL.exists():
        pytest.skip("LongMemEval's slice is not next to this checkout")
    from memfs.agent.evals.longmemeval import load_questions

    fit = {u for s in assistant_chat(0) for u, _ in s}
    bench = {u for s in assistant_chat(1) for u, _ in s}
    test = {t["content"] for q in load_questions(LONGMEMEVAL) if q["split"] == "test"
            for s in q["haystack_sessions"] for t in s if t["role"] == "user"}
    dev = {t["content"] for q in load_questions(LONGMEMEVAL) if q["split"] == "dev"
           for s in q["haystack_sessions"] for t in s if t["role"] == "user"}
    assert fit and bench and not fit & bench
    assert not (fit | bench) - dev  # dev haystacks only (a filler session may also sit in a test one)
    assert len(test - dev) > 1000


MORE_ASKS = [
    "i'm hosting my in-laws for the first time next month, can you help me plan a menu that won't take all day?",
    "what should i look for when choosing a running shoe? i've started doing 5k three times a week and my shins hurt",
    "we're thinking about a trip to lisbon in october, what neighbourhoods would you recommend for a first visit?",
    "can you recommend a few podcasts about history? i have a long commute and i'm sick of music",
    "how do i get better sleep? i've been waking at 4am most nights and can't get back off",
    "i need a gift idea for my boss who's retiring, something thoughtful but not too personal, any thoughts?",
]
"""More long questions to the assistant, written for this file (stop 38)."""


@pytest.mark.model
def test_in_chat_with_an_assistant_the_second_pool_brings_the_limit(
        isolated_env: Path, real_embedder: Embedder, fresh_indexes: None) -> None:
    """Stop 38, c-mix: in a history of questions to the assistant the first model's best rows are
    questions (the shrubs and the sleep question score above the mortgage limit), so with a
    prototype pool of 1 (the shipped 80, scaled to this 33-line history) and its pool of 2 the
    limit is not a candidate; the second model's pool of 2 holds it, and it reaches the gift
    slots."""
    from memfs.constraints import rank_constraints
    from memfs.search import open_index, refresh
    from memfs.search_types import make_query

    lines = [*TALK[:20], *ASKS, *MORE_ASKS]
    lines.insert(12, LIMITS[4])  # the mortgage: anything over twenty quid is a no, once
    pair, now = user_lines_pair(isolated_env, real_embedder, lines, "robin", "asked")
    index = open_index(pair.root, pair.store.embedder)
    refresh(index)
    first = {index.items[int(r)].text for r in np.argsort(-index.learned)[:2]}
    assert LIMITS[4] not in first, first  # the first model's best two are questions
    q = make_query("my sister's birthday is on saturday, what should i get her?", 3, now=now)
    one = ConstraintWeights(pool=1, learned_pool=2, ask_pool=0)
    both = ConstraintWeights(pool=1, learned_pool=2, ask_pool=2)
    without = [h.text for h in rank_constraints(index, q, ["gift"], one)]
    with_ = [h.text for h in rank_constraints(index, q, ["gift"], both)]
    assert LIMITS[4] not in without, without
    assert LIMITS[4] in with_, with_
