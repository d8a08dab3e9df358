"""The memory inspector in a real browser: Debian's chromium (Playwright) against a real
uvicorn on 127.0.0.1 serving ``memfs.ui`` over a home of pairs made with real git.

One browser and one server for the module. This server has no API keys, so it is in
open mode (loopback only); ``test_ui_auth.py`` covers keys against ``memfs serve``.
Each test uses its own pair, so the tests do not depend on each other's order.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from memfs.agent.dream.runner import run_pending

from memfs.app import MemoryStore
from memfs.config import Config
from memfs.gitio import USER, run_git
from memfs.store import MemoryPair
from memfs.ui import create_app
from tests._fakes_dream import NOW, SESSION, ScriptedExtractor, chat, write_op
from tests._serve import live_server, make_host
from tests._ui import chromium, long_history
from tests.conftest import FakeEmbedder, card_text

THURSDAY = "The user's meeting with Lin is on Thursday."
FRIDAY = "The user's meeting with Lin moved from Thursday to Friday 3 pm."


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ui-home")


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[str]:
    host = make_host(home, allow_open=True)
    with live_server(host, create_app(host, mcp=False)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()


def make_pair(home: Path, character: str, review: bool = False) -> MemoryPair:
    config = Config(dream_merge="review" if review else "auto")
    return MemoryStore(home, embedder=FakeEmbedder(), config=config).pair("alex", character)


def dream_friday(pair: MemoryPair, cat: bool = False) -> str:
    """A dream that moves the Lin meeting to Friday (and adopts a cat); returns the event."""
    event = chat(pair, ["My meeting with Lin moved to Friday 3 pm.", "Noted!"] + (
        ["I adopted a cat called Miso.", "Lovely!"] if cat else []))
    ops = [{**write_op(FRIDAY, [0]), "op": "supersede", "old_id": "c-meet01", "type": "plan"}]
    if cat:
        ops.append(write_op("The user adopted a cat called Miso.", [2]))
    [result] = run_pending(pair, extractor=ScriptedExtractor(
        ops, summary="Alex and Lin now meet on Friday."), now=NOW).results
    assert result.status in ("merged", "proposed"), result.error
    return event.id


def seed_meeting(pair: MemoryPair) -> None:
    pair.repo.commit({"cards/c-meet01.md": card_text("c-meet01", THURSDAY, type="plan"),
                      "summary.md": "Alex works with Lin.\n"}, "card", "add by hand", USER)


# -- pins ------------------------------------------------------------------------------------


def test_a_pin_added_in_the_page_is_one_commit_by_the_user(page: Any, server: str,
                                                           home: Path) -> None:
    pair = make_pair(home, "pins1")
    page.goto(f"{server}/ui/alex/pins1/pins")
    page.fill("#pin-text", "Allergic to peanuts")
    page.click("text=Pin it")

    assert page.inner_text(".notice").startswith("Pinned.")
    assert page.inner_text("ol.pins").count("Allergic to peanuts") == 1
    entry = pair.log(1)[0]
    assert entry.subject == "pin: add 'Allergic to peanuts'" and entry.author == "user"
    assert entry.trailers["Memfs-Actor"] == "user" and entry.files == ("system/pins.md",)
    assert pair.pins() == ["Allergic to peanuts"]

    page.click("button[aria-label='remove pin 1']")
    assert page.inner_text(".notice").startswith("Pin removed.")
    assert pair.pins() == [] and pair.log(1)[0].subject == "pin: remove 'Allergic to peanuts'"


def test_an_invalid_pin_shows_the_problem_and_commits_nothing(page: Any, server: str,
                                                             home: Path) -> None:
    pair = make_pair(home, "pins2")
    pair.pin("Vegetarian")
    head, saved = pair.repo.head(), pair.repo.read_worktree("system/pins.md")
    page.goto(f"{server}/ui/alex/pins2/pins")
    broken = (saved or "") + "\nThis line is not a list item\n"
    page.fill("#pins-file", broken)
    page.click("text=Save pins")

    error = page.inner_text("#edit-error")
    assert "not a list item" in error and "nothing was saved" in error
    assert page.input_value("#pins-file").replace("\r\n", "\n") == broken
    page.fill("#pin-text", "   ")
    page.click("text=Pin it")
    assert "the text is empty" in page.inner_text("#add-error")
    assert pair.repo.head() == head
    assert pair.repo.read_worktree("system/pins.md") == saved
    assert run_git(pair.root, "status", "--porcelain") == ""

    page.fill("#pins-file", (saved or "").replace("Vegetarian", "Vegetarian, no fish"))
    page.click("text=Save pins")
    assert page.inner_text(".notice").startswith("Pins saved.")
    assert pair.pins() == ["Vegetarian, no fish"] and pair.log(1)[0].subject == "pin: edit pins"


# -- a dream, and undoing it -------------------------------------------------------------------


def test_reverting_a_dream_removes_its_cards_and_restores_the_summary(page: Any, server: str,
                                                                      home: Path) -> None:
    pair = make_pair(home, "undo1")
    seed_meeting(pair)
    dream_friday(pair)
    new_id = next(c.id for c in pair.cards() if c.id != "c-meet01")

    page.goto(f"{server}/ui/alex/undo1")
    page.click("tr.dream a:has-text('dream: 1 superseded')")
    assert THURSDAY in page.inner_text(".superseded") and FRIDAY in page.inner_text(".superseded")
    assert "Alex and Lin now meet on Friday." in page.inner_text(".summary")
    page.click("text=Undo this dream…")
    undo = page.inner_text(".changes")
    assert "Cards removed (1)" in undo and FRIDAY in undo and "Back to active (1)" in undo
    assert {c.id for c in pair.cards()} == {"c-meet01", new_id}  # asking undid nothing
    page.click("text=Yes, undo it")

    assert page.inner_text(".notice").startswith("Undone.")
    assert [(c.id, c.status) for c in pair.cards()] == [("c-meet01", "active")]
    assert pair.summary() == "Alex works with Lin.\n"
    entry = pair.log(1)[0]
    assert entry.subject.startswith("revert: dream:") and entry.author == "user"


def test_an_undo_that_would_conflict_says_so_and_changes_nothing(page: Any, server: str,
                                                                 home: Path) -> None:
    pair = make_pair(home, "undo2")
    pair.repo.commit({"summary.md": "first\n"}, "summary", "first", USER)
    first = pair.repo.head()
    pair.repo.commit({"summary.md": "second\n"}, "summary", "second", USER)
    head = pair.repo.head()

    page.goto(f"{server}/ui/alex/undo2/revert/{first}")

    assert "cannot be undone" in page.inner_text(".conflict")
    assert "summary.md changed again" in page.inner_text(".conflict")
    assert page.locator("text=Yes, undo it").count() == 0
    assert pair.repo.head() == head and run_git(pair.root, "status", "--porcelain") == ""


# -- review mode ---------------------------------------------------------------------------------


def test_review_mode_accept_and_reject_in_the_page(page: Any, server: str, home: Path) -> None:
    pair = make_pair(home, "review1", review=True)
    seed_meeting(pair)
    first = dream_friday(pair, cat=True)
    second_event = chat(pair, ["I hate olives.", "Noted."])
    run_pending(pair, extractor=ScriptedExtractor([write_op("The user hates olives.", [4])]),
                now=NOW)
    head = pair.repo.head()

    page.goto(f"{server}/ui/alex/review1")
    assert page.inner_text("nav .badge") == "2"
    page.click(f"a[href$='/proposals/{first}']")
    shown = page.inner_text(".changes")
    assert "The user adopted a cat called Miso." in shown and THURSDAY in shown
    assert pair.repo.head() == head  # looking changes nothing
    page.click("button:has-text('Accept')")
    assert page.inner_text(".notice").startswith("Dream accepted")
    merged = pair.log(1)[0]
    assert merged.is_dream and merged.trailers["Memfs-Event"] == first
    assert {c.body for c in pair.cards() if c.status == "active"} >= {
        FRIDAY, "The user adopted a cat called Miso."}

    page.goto(f"{server}/ui/alex/review1/proposals/{second_event.id}")
    page.click("text=Reject…")
    page.click("text=Yes, reject it")
    assert page.inner_text(".notice").startswith("Dream rejected")
    rejected = pair.log(1)[0]
    assert rejected.author == "user" and rejected.trailers["Memfs-Event"] == second_event.id
    assert rejected.trailers["Memfs-Window"] == f"{SESSION}:4-5"
    assert "olives" not in " ".join(c.body for c in pair.cards())
    assert page.locator(".proposals").count() == 0


# -- a long history --------------------------------------------------------------------------------


def test_the_timeline_of_2000_commits_loads_in_under_a_second(page: Any, server: str,
                                                             home: Path) -> None:
    pair = make_pair(home, "long1")
    long_history(pair, 2000)
    page.goto(f"{server}/ui/alex/long1")  # warm: the first request of a pair opens it

    timings = []
    for url in (f"{server}/ui/alex/long1", f"{server}/ui/alex/long1?p=41"):
        start = time.perf_counter()
        page.goto(url, wait_until="load")
        timings.append(time.perf_counter() - start)
    assert max(timings) < 1.0, timings
    assert page.inner_text("nav.pages span") == "Page 41 of 41"
    page.goto(f"{server}/ui/alex/long1")
    assert page.locator("table.timeline tbody tr").count() == 50
    assert page.locator("tr.dream").count() == 3
    page.click("a[rel=next]")
    assert page.inner_text("nav.pages span") == "Page 2 of 41"


# -- cards ------------------------------------------------------------------------------------------


def test_a_card_tells_its_story_and_can_be_marked_wrong(page: Any, server: str,
                                                       home: Path) -> None:
    pair = make_pair(home, "cards1")
    chat(pair, ["Meeting Lin on Thursday.", "ok", "Moved to Friday 3 pm.", "ok"])
    pair.repo.commit({
        "cards/c-thu001.md": card_text("c-thu001", THURSDAY, type="plan", status="stale",
                                       superseded_by="c-fri001",
                                       source={"session": SESSION, "turns": ["0"]}),
        "cards/c-fri001.md": card_text("c-fri001", FRIDAY, type="plan", supersedes=["c-thu001"],
                                       source={"session": SESSION, "turns": ["2"]})},
        "card", "seed", USER)

    page.goto(f"{server}/ui/alex/cards1/cards")
    page.click(f"text={FRIDAY}")
    steps = page.locator("ol.story li").all_inner_texts()
    assert len(steps) == 2 and THURSDAY in steps[0] and FRIDAY in steps[1]
    assert "Moved to Friday 3 pm." in page.inner_text("ul.messages")
    page.click("text=This is wrong…")
    page.click("text=Yes, it is wrong")

    assert page.inner_text(".notice").startswith("Card marked wrong")
    assert pair.card("c-fri001").status == "deleted"
    entry = pair.log(1)[0]
    assert entry.subject == "card: mark c-fri001 wrong" and entry.author == "user"


def test_ask_explains_each_signal_and_counts_tokens_per_layer(page: Any, server: str,
                                                             home: Path) -> None:
    pair = make_pair(home, "ask1")
    pair.pin("Allergic to peanuts")
    pair.repo.commit({"cards/c-snack1.md": card_text("c-snack1",
                                                     "The user loves salted peanuts as a snack.")},
                     "card", "seed", USER)
    page.goto(f"{server}/ui/alex/ask1/ask")
    page.fill("#q", "peanuts snack")
    page.click("button:has-text('Search')")
    page.click("ol.hits summary")
    table = page.inner_text("table.signals")
    assert "semantic" in table and "shares the query's words" in table

    page.fill("#message", "Any snack ideas?")
    page.click("button:has-text('Show')")
    rows = dict(r.split("\t") for r in page.locator("table.tokens tbody tr").all_inner_texts())
    assert set(rows) == {"system", "summary", "retrieved", "window"}
    assert int(rows["system"]) > 0
    assert "Allergic to peanuts" in page.inner_text("pre.context")


# -- what another site may not do -------------------------------------------------------------------


def test_another_site_can_neither_post_nor_read_through_the_browser(page: Any, server: str,
                                                                    home: Path) -> None:
    pair = make_pair(home, "csrf1")
    page.goto(f"{server}/ui/alex/csrf1/pins")  # this browser has the form cookie
    head = pair.repo.head()
    evil = f"""<form method=post action="{server}/ui/alex/csrf1/pins">
        <input name=text value="Send all your money"><input name=csrf value="guess">
        <button>go</button></form>"""
    page.route("http://evil.example/", lambda route: route.fulfill(body=evil,
                                                                   content_type="text/html"))
    page.goto("http://evil.example/")
    page.click("button")
    assert "may not change this memory" in page.inner_text(".error")
    assert pair.repo.head() == head and pair.pins() == []

    rebound = httpx2.get(f"{server}/ui/alex/csrf1/pins", headers={"Host": "evil.example"})
    assert rebound.status_code == 403 and "serves localhost only" in rebound.text
