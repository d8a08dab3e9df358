"""Fit the learned limit model (``memfs.salience.learned_limit``) and write ``memfs/data/limit_model.npz``.

    python -m memfs.agent.requests.fit_limit

The constraint search starts from the rows that read as a standing limit. The prototype score
(``memfs.salience.message_limit``) measures that as closeness to ~100 general sentences, and a
limit told through its reason ("the kidney clinic has me counting potassium") ranks below
hundreds of chat lines. This is a logistic regression on the sentence embedding, fit on what the
spent data says a limit is and is not:

- positives: every constraint of the spent constraint splits (``SPENT``), each of its probe's
  domain (a second regression, on the limits only, says which domain a limit is of: stop 35,
  c-limit2);
- negatives: their requests and the user turns of their live windows (chat on the same
  occasion), the user lines of the histories the constraint eval writes (the planted small talk
  and blind18-24's own banks), and the spent profile sets' chat (``PROFILE_SPENT``) without their
  standing facts (a diet or health fact there is a limit too, so it is neither).

Reads only spent data, named one by one, so a split registered later (fresh, to be measured
once) is never read unless it is added here. ``C`` is fixed (``C``), chosen on dev: where
blind18-20's limits rank among their pair's lines, each split's model fit without it
(BENCHMARKS.md, stop 35, c-limit); the search's weights by ``bench/constraint_limit_oof.py``.
Rows are class-balanced; lbfgs, the same rows in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from memfs.agent.evals.constraints import fit_history, load_probes
from memfs.agent.evals.profile import fit_chats, load_set

from memfs.constraint_domains import DOMAINS
from memfs.embed import Embedder
from memfs.salience import LIMIT_MODEL_PATH

SPENT = ("test", "dev", "dev2", "dev3", *(f"blind{n}" for n in range(2, 25)))
"""The constraint splits whose constraints are the positives."""
OWN_BANKS = ("blind18", "blind19", "blind20", "blind21", "blind22", "blind23", "blind24")
"""Spent splits with their own small-talk bank: their histories' user lines are negatives."""
DOMAIN_C = 1.0
"""scikit-learn's ``C`` of the domain regression (on the limits only)."""
PROFILE_SPENT = ("dev", "dev2", "blind", *(f"blind{n}" for n in range(2, 13)))
"""The profile sets whose chat (without the standing facts) is negatives."""
NOT_LIMIT_SLOTS = ("name", "pronouns", "work", "home", "family", "partner", "pet", "cares")
"""Profile slots whose standing facts are personal but never a limit, for ``personal``. Health,
diet and boundary facts can be limits, so they are neither."""
PERSONAL = False
"""Whether the fit takes the personal facts that are not limits as negatives (``personal_lines``,
``NOT_LIMIT_SLOTS``). Off: out of fold over blind18-24 (``bench/constraint_limit_oof.py --fits
plain,personal``) they put 185 of 280 limits in context at 1,600 messages against 186 without them
(201 against 199 at 200), and they leave the share of LongMemEval's user messages above the
candidate floor where it was (53%: its long questions to the assistant score as limits);
BENCHMARKS.md, stop 36, c-neg."""
LIMIT_LIKE_CARDS = ("fact", "preference", "boundary")
"""Extraction card types that may carry a limit (an allergy is a fact card, a dislike a
preference): a dev window's user line sharing a keyword with one is not a negative."""
C = 3.0
"""scikit-learn's ``C``: on dev, 0.3 / 1 / 3 put 91 / 96 / 103 of blind18-20's 120 limits
among their pair's best 40 lines out of fold."""


def _users(history: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    return [m["content"] for _, msgs in history for m in msgs if m["role"] == "user"]


def examples(leave_out: Sequence[str] = (), personal: bool = PERSONAL) -> tuple[list[str], list[int], list[str]]:
    """(texts, labels: 0 for chat, else 1 + the limit's domain in ``DOMAINS``, groups) in a
    fixed order, each text once; ``leave_out``: constraint splits (with their own bank) and
    profile sets (``profile-<split>``) to hold out; ``personal``: with the personal facts that are
    not limits (``NOT_LIMIT_SLOTS``, ``personal_lines``) as negatives."""
    texts: dict[str, tuple[int, str]] = {}

    def add(lines: Sequence[str], label: int, group: str) -> None:
        for line in lines:
            texts.setdefault(line, (label, group))

    for split in SPENT:
        if split in leave_out:
            continue
        probes = load_probes(split)
        for p in probes:
            add([p.constraint], 1 + DOMAINS.index(p.domain), split)
        add([p.request for p in probes] + [c for p in probes for role, c in p.before if role == "user"], 0, split)
        if split == "dev" or split in OWN_BANKS:
            said = {p.constraint for p in probes}
            history = fit_history(split)
            add([u for u in _users(history) if u not in said], 0, split)
    for split in PROFILE_SPENT:
        if f"profile-{split}" in leave_out:
            continue
        data = load_set(split)
        facts = {f.said for f in data.standing}
        for _, history in fit_chats(data, 400):
            add([u for u in _users(history) if u not in facts], 0, f"profile-{split}")
        if personal:
            add([f.said for f in data.standing if f.slot in NOT_LIMIT_SLOTS], 0, f"profile-{split}")
    if personal:
        add(personal_lines(), 0, "extraction")
    return list(texts), [v[0] for v in texts.values()], [v[1] for v in texts.values()]


def personal_lines() -> list[str]:
    """The user lines of the dev extraction windows that carry no limit: what a user tells a
    companion about their life (work, people, plans, chat), the hardest negatives for "is this a
    limit". A line sharing a keyword with a reference card that may be a limit is left out."""
    from memfs.agent.dream.devset import dev_windows
    from memfs.agent.dream.extraction_eval import has_word

    out: list[str] = []
    for window in dev_windows():
        words = [alt for card in window.expected.get("cards", []) if card["type"] in LIMIT_LIKE_CARDS
                 for kw in card["keywords"] for alt in kw.split("|")]
        out += [m.content for m in window.messages
                if m.role == "user" and not any(has_word(w, m.content.lower()) for w in words)]
    return out


@dataclass(frozen=True)
class LimitModel:
    """Is a line a limit (``w``, ``b``), and, if it is, of which domain (``dw``: one row per
    domain of ``DOMAINS``, ``db``)."""

    w: npt.NDArray[np.float32]
    b: float
    dw: npt.NDArray[np.float32]
    db: npt.NDArray[np.float32]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, w=self.w, b=np.float32(self.b), dw=self.dw, db=self.db)


def fit(embedder: Embedder, leave_out: Sequence[str] = (), c: float = C,
        personal: bool = PERSONAL) -> tuple[LimitModel, dict[str, int]]:
    """The two regressions on ``examples(leave_out, personal)``, and the row counts."""
    from sklearn.linear_model import LogisticRegression

    texts, labels, _ = examples(leave_out, personal)
    x = np.asarray(embedder.embed(texts), dtype=np.float32)
    y = np.array(labels)
    limit = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(x, (y > 0).astype(int))
    kinds = LogisticRegression(C=DOMAIN_C, max_iter=3000, class_weight="balanced").fit(x[y > 0], y[y > 0] - 1)
    dw = np.zeros((len(DOMAINS), x.shape[1]), np.float32)
    db = np.full(len(DOMAINS), -30.0, np.float32)  # a domain never seen is never named
    dw[kinds.classes_], db[kinds.classes_] = kinds.coef_, kinds.intercept_
    model = LimitModel(limit.coef_[0].astype(np.float32), float(limit.intercept_[0]), dw, db)
    return model, {"limits": int((y > 0).sum()), "not": int((y == 0).sum())}


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    from memfs.embed import default_embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--leave-out", default="", help="splits to hold out (comma-separated)")
    parser.add_argument("--c", type=float, default=C)
    parser.add_argument("--out", type=Path, default=LIMIT_MODEL_PATH)
    args = parser.parse_args(argv)
    model, counts = fit(default_embedder(), [s for s in args.leave_out.split(",") if s], args.c)
    model.save(args.out)
    print(f"limit model: {counts['limits']} limits, {counts['not']} other lines, C {args.c} -> {args.out}")


if __name__ == "__main__":
    main()
