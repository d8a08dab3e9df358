"""The learned offline extractor (issue 13, third round): what it may be fitted on, and what it
must never turn into a card. The sentences below are new (in no split of the extraction set and
not in the planted scenario), so these are behaviour checks, not a tuned score."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream.dates import find_date
from memfs.agent.dream.devset import dev_windows, never
from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.fit_learned import THRESHOLDS
from memfs.agent.dream.learned import (
    TYPES,
    LearnedExtractor,
    Model,
    Row,
    entities,
    features,
    shipped_model,
)
from memfs.agent.dream.ops import MergeOp, SupersedeOp, WriteOp
from memfs.agent.dream.prototypes import load_prototypes
from memfs.agent.evals.planted_data import generate_planted

from memfs.embed import Embedder
from memfs.history import Message

UTC = dt.UTC


def test_the_fit_never_reads_a_blind_split_or_the_planted_scenario() -> None:
    assert never() <= ev.BLIND and not {"blind9", "blind10", "blind11", "blind12", "blind13", "blind14", "blind15",
                                         "blind16"} & never()
    windows = dev_windows()
    assert windows and not {w.split for w in windows} & never()
    said = {m.content.lower() for w in windows for m in w.messages}
    for plant in generate_planted(7, 1000).planted:
        assert plant.content.lower() not in said, plant.content


def test_the_shipped_weights_fit_the_features(real_embedder: Embedder) -> None:
    model = shipped_model()
    ts = dt.datetime(2027, 1, 1, tzinfo=UTC)
    said = ["I've worked as a paediatric nurse for six years", "had pasta for lunch, it was fine"]
    rows = [Row(Message("s-1", i, "user", t, ts), t, "", "So, tell me about yourself.") for i, t in enumerate(said)]
    x = features(rows, real_embedder, load_prototypes(real_embedder))
    first = model.hidden_w if model.hidden_w is not None else model.card_w
    assert x.shape[1] == first.shape[0] == model.type_w.shape[0]
    job, lunch = model.card(x)
    assert min(THRESHOLDS) <= model.threshold < 1 and job > model.threshold > lunch, (job, lunch)


def test_the_card_network_round_trips_and_a_regression_file_still_loads(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    types = np.zeros((4, len(TYPES)), dtype=np.float32), np.zeros(len(TYPES), dtype=np.float32)
    net = Model(rng.normal(size=3).astype(np.float32), 0.2, *types, 0.7,
                rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=3).astype(np.float32))
    net.save(tmp_path / "net.npz")
    back = Model.load(tmp_path / "net.npz")
    h = np.maximum(x @ net.hidden_w + net.hidden_b, 0.0)  # type: ignore[operator]
    assert np.allclose(back.card(x), 1 / (1 + np.exp(-(h @ net.card_w + 0.2))))
    linear = Model(rng.normal(size=4).astype(np.float32), -0.1, *types, 0.7)
    linear.save(tmp_path / "linear.npz")
    back = Model.load(tmp_path / "linear.npz")
    assert back.hidden_w is None and np.allclose(back.card(x), 1 / (1 + np.exp(-(x @ linear.card_w - 0.1))))


def _window(lines: list[str]) -> list[Message]:
    ts = dt.datetime(2027, 3, 1, 18, 0, tzinfo=UTC)
    return [Message("s-1", i, "user" if i % 2 == 0 else "assistant", t, ts + dt.timedelta(minutes=i))
            for i, t in enumerate(lines)]


def _cards(embedder: Embedder, lines: list[str],
           expires: bool = False) -> tuple[list[WriteOp | SupersedeOp | MergeOp], str]:
    """The cards the offline extractor writes from a window of ``lines``, and their text."""
    window = _window(lines)
    ops = OfflineExtractor(embedder)(window, [], "", window[-1].ts).ops
    cards = [op for op in ops if isinstance(op, (WriteOp, SupersedeOp, MergeOp))]
    return cards, " | ".join(f"{op.type}: {op.body}" + (f" {op.expires}" if expires else "") for op in cards).lower()


def test_conditionals_reported_speech_and_routines_are_not_the_users_facts_or_plans(
        real_embedder: Embedder) -> None:
    cards, text = _cards(real_embedder, [
        "if we ever had a spare room we'd get a piano", "Nice dream.",
        "my landlord reckons we're getting a rent rise in june", "Ugh.",
        "i do spin class every tuesday, it's brutal", "Respect.",
        "my cousin ravi says i should retrain as a pilot", "Would you?",
        "im allergic to shellfish btw, proper hives", "Noted, thank you.",
    ])
    assert "piano" not in text, text
    assert not any(op.type == "plan" and ("rent" in op.body.lower() or "spin" in op.body.lower())
                   for op in cards), text
    assert "pilot" not in text or "ravi" in text, text  # only as who Ravi is, never the user's job
    assert "shellfish" in text, text


def test_a_lowercase_name_after_my_friend_is_a_person() -> None:
    assert "Deepa" in entities("my friend deepa is moving to leeds")
    assert entities("my friend and I went out") == ("user",)


def test_a_request_verb_that_opens_the_sentence_is_no_person() -> None:
    """The demo's plan card had ``entities: [user, Remind]``."""
    assert entities("Remind me to book something by Wednesday.") == ("user",)
    assert entities("Tell Maya I said hi.") == ("user", "Maya")
    assert entities("Lin moved the review to Friday.") == ("user", "Lin")


def test_a_day_number_after_a_month_is_a_day_of_that_month() -> None:
    hit = find_date("we fly out in may, on the 21st", dt.date(2027, 3, 1))
    assert hit is not None and hit.start == dt.date(2027, 5, 21)
    assert find_date("it's the 21st", dt.date(2027, 3, 1)).start == dt.date(2027, 3, 21)  # type: ignore[union-attr]


def test_the_learned_extractor_runs_alone_on_an_empty_and_an_assistant_only_window(real_embedder: Embedder) -> None:
    extractor = LearnedExtractor(real_embedder)
    assert extractor([], [], "", dt.datetime(2027, 1, 1, tzinfo=UTC)).ops == []
    only = [Message("s-1", 0, "assistant", "How was your day?", dt.datetime(2027, 1, 1, tzinfo=UTC))]
    assert not [op for op in extractor(only, [], "", only[0].ts).ops if isinstance(op, WriteOp)]
    assert np.isfinite(shipped_model().card_w).all()


def test_a_break_up_and_a_chat_date_become_the_right_cards(real_embedder: Embedder) -> None:
    """An ended relationship is about that person, never a plan dated next year; a plan said as
    "saturday week" carries the Saturday after this one."""
    cards, text = _cards(real_embedder, [
        "me and jo split up in february, it was for the best", "I'm sorry, that sounds hard.",
        "my cousin's wedding is saturday week and i'm doing a reading", "Oh lovely!",
    ], expires=True)
    assert not any(op.type == "plan" and "jo" in op.body.lower().split() for op in cards), text
    assert any(op.type == "plan" and "wedding" in op.body.lower() and op.expires == dt.date(2027, 3, 13)
               for op in cards), text


def test_an_anniversary_month_a_weekly_habit_and_a_bare_emoji_are_not_plans_or_facts(
        real_embedder: Embedder) -> None:
    """A month that closes a past duration ("two years in april") and a habit told with a plural
    day ("saturday mornings") write no plan; a message with no word in it writes no card; a plan
    moved "from the 9th to the 16th" expires on the 16th."""
    cards, text = _cards(real_embedder, [
        "i'm a sous chef at the harbour bistro, two years in april", "Nice!",
        "saturday mornings me and dev do the parkrun at the common, he always wins", "Ha!",
        "🎉🎉", "What's that for?",
        "my optician appointment got moved from the 9th to the 16th", "Noted.",
    ], expires=True)
    assert not any(op.type == "plan" and ("sous chef" in op.body.lower() or "parkrun" in op.body.lower())
                   for op in cards), text
    assert not any("🎉" in op.body for op in cards), text
    assert not any(op.type == "plan" and op.expires == dt.date(2027, 3, 9) for op in cards), text


def test_requests_questions_and_a_called_off_plan_write_no_card_but_real_facts_do(real_embedder: Embedder) -> None:
    """A request or a question typed without "?" is said to the assistant, and a plan said in the
    negative is no plan; the user's own job and boundary in the same window still are cards."""
    cards, text = _cards(real_embedder, [
        "ok give me three fun facts about axolotls", "Sure! ...",
        "do you think it's weird to talk to my plants", "Not at all.",
        "the pottery taster on the 14th isn't happening, they shut the studio", "Oh no.",
        "i'm a night-shift radiographer at the county hospital", "That's a big job.",
        "please don't ever bring up my old job at the bank", "Understood.",
    ])
    assert "axolotl" not in text and "plants" not in text, text
    assert not any(op.type == "plan" and "pottery" in op.body.lower() for op in cards), text
    assert "radiographer" in text, text


def test_a_person_named_in_passing_becomes_who_they_are_to_the_user(real_embedder: Embedder) -> None:
    """"my flatmate oren reckons ..." says who Oren is even though the sentence is about
    something else; what Oren reckons is never the user's fact."""
    cards, text = _cards(real_embedder, [
        "my flatmate oren reckons I should quit and go travelling", "What do you think?",
        "honestly no idea, work's fine for now", "Fair enough.",
    ])
    assert any(op.type == "relationship" and "oren" in op.body.lower() for op in cards), text
    assert not any(op.type != "relationship" and "travelling" in op.body.lower() for op in cards), text
