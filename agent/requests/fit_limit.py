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
  and blind18-22's own banks), and the spent profile sets' chat (``PROFILE_SPENT``) without their
  standing facts (a diet or health fact there is a limit too, so it is neither).

A second limit regression is fit on the same rows plus, as chat, the user messages of LongMemEval's
even dev half (``assistant_chat(0)``: real chat with an assistant, where the first regression's best
rows are long questions to it): ``aw``, ``ab`` in the file (stop 38, c-mix). ``main`` refits only the
second and keeps the shipped first regression and domains (``--refit-first`` refits them too); so a
fit from a checkout without ``../shared`` raises ``BadInputError`` naming the missing file.

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
from memfs.errors import BadInputError
from memfs.salience import LIMIT_MODEL_PATH

SPENT = ("test", "dev", "dev2", "dev3", *(f"blind{n}" for n in range(2, 25)))
"""The constraint splits whose constraints are the positives."""
OWN_BANKS = ("blind18", "blind19", "blind20", "blind21", "blind22", "blind23", "blind24")
"""Spent splits with their own small-talk bank: their histories' user lines are negatives."""
DOMAIN_C = 1.0
"""scikit-learn's ``C`` of the domain regression (on the limits only)."""
PROFILE_SPENT = ("dev", "dev2", "blind", *(f"blind{n}" for n in range(2, 13)))
"""The profile sets whose chat (without the standing facts) is negatives."""
C = 3.0
"""scikit-learn's ``C``: on dev, 0.3 / 1 / 3 put 91 / 96 / 103 of blind18-20's 120 limits
among their pair's best 40 lines out of fold."""


LONGMEMEVAL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "longmemeval_s_60.json.gz"
"""LongMemEval's slice (never shipped): half of its dev questions' haystacks are real chat with an
assistant, the other half is where ``bench/constraint_limit_oof.py --history lme`` plants limits."""


def assistant_chat(half: int, path: Path = LONGMEMEVAL) -> list[list[tuple[str, str]]]:
    """The sessions (user, assistant) pairs of the haystacks of LongMemEval's **dev** questions
    whose ``question_id`` sha256 is even (``half`` 0, what the fit reads) or odd (1, what the bench
    plants limits in); each session once, and a session of half 1 sharing a user message with half 0
    is left out (the haystacks share filler sessions). A test question's haystack is never read."""
    import hashlib

    from memfs.agent.evals.longmemeval import load_questions

    if not path.exists():
        raise BadInputError(f"{path}: LongMemEval's slice is not here (it is never shipped; fit from a "
                            "checkout next to ../shared)")
    fitted = {u for session in assistant_chat(0, path) for u, _ in session} if half else set()
    seen: set[str] = set()
    out: list[list[tuple[str, str]]] = []
    for q in load_questions(path):
        if q["split"] != "dev" or int(hashlib.sha256(q["question_id"].encode()).hexdigest(), 16) % 2 != half:
            continue
        for session in q["haystack_sessions"]:
            turns = [t for t in session if t.get("content")]
            key = "\n".join(t["content"] for t in turns[:2])
            if key in seen:
                continue
            seen.add(key)
            pairs = [(u["content"], a["content"]) for u, a in zip(turns, turns[1:], strict=False)
                     if u["role"] == "user" and a["role"] == "assistant"]
            if pairs and not any(u in fitted for u, _ in pairs):  # shared filler: the fit's own half has it
                out.append(pairs)
    return out


def _users(history: list[tuple[str, list[dict[str, Any]]]]) -> list[str]:
    return [m["content"] for _, msgs in history for m in msgs if m["role"] == "user"]


ASK_WEIGHT = 1.0
"""The sample weight of ``assistant_chat(0)``'s rows in the limit regression (every other row 1)."""
ASK_GROUP = "longmemeval-dev-even"


def examples(leave_out: Sequence[str] = (), ask: bool = False) -> tuple[list[str], list[int], list[str]]:
    """(texts, labels: 0 for chat, else 1 + the limit's domain in ``DOMAINS``, groups) in a
    fixed order, each text once; ``leave_out``: constraint splits (with their own bank) and
    profile sets (``profile-<split>``) to hold out; ``ask``: with ``assistant_chat(0)``'s user
    messages as negatives too (the second regression's rows; they need ``../shared``)."""
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
    if ask:
        add([u for session in assistant_chat(0) for u, _ in session], 0, ASK_GROUP)
    return list(texts), [v[0] for v in texts.values()], [v[1] for v in texts.values()]


@dataclass(frozen=True)
class LimitModel:
    """Is a line a limit (``w``, ``b``), and, if it is, of which domain (``dw``: one row per
    domain of ``DOMAINS``, ``db``); and is it a limit to the second regression (``aw``,
    ``ab``: fit with real chat with an assistant as chat, stop 38)."""

    w: npt.NDArray[np.float32]
    b: float
    dw: npt.NDArray[np.float32]
    db: npt.NDArray[np.float32]
    aw: npt.NDArray[np.float32]
    ab: float

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, w=self.w, b=np.float32(self.b), dw=self.dw, db=self.db, aw=self.aw,
                 ab=np.float32(self.ab))


def fit(embedder: Embedder, leave_out: Sequence[str] = (), c: float = C,
        ask_weight: float = ASK_WEIGHT) -> tuple[LimitModel, dict[str, int]]:
    """The three regressions on ``examples(leave_out)``, and the row counts: the first limit
    regression without ``assistant_chat(0)``'s rows, the second with them (at ``ask_weight``),
    the domain regression on the limits."""
    from sklearn.linear_model import LogisticRegression

    texts, labels, groups = examples(leave_out, ask=True)
    x = np.asarray(embedder.embed(texts), dtype=np.float32)
    y = np.array(labels)
    asked = np.array(groups) == ASK_GROUP
    first = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(
        x[~asked], (y[~asked] > 0).astype(int))
    second = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(
        x, (y > 0).astype(int), sample_weight=np.where(asked, ask_weight, 1.0))
    kinds = LogisticRegression(C=DOMAIN_C, max_iter=3000, class_weight="balanced").fit(x[y > 0], y[y > 0] - 1)
    dw = np.zeros((len(DOMAINS), x.shape[1]), np.float32)
    db = np.full(len(DOMAINS), -30.0, np.float32)  # a domain never seen is never named
    dw[kinds.classes_], db[kinds.classes_] = kinds.coef_, kinds.intercept_
    model = LimitModel(first.coef_[0].astype(np.float32), float(first.intercept_[0]), dw, db,
                       second.coef_[0].astype(np.float32), float(second.intercept_[0]))
    return model, {"limits": int((y > 0).sum()), "not": int((y[~asked] == 0).sum()),
                   "assistant chat": int(asked.sum())}


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    from memfs.embed import default_embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--leave-out", default="", help="splits to hold out (comma-separated)")
    parser.add_argument("--c", type=float, default=C)
    parser.add_argument("--out", type=Path, default=LIMIT_MODEL_PATH)
    parser.add_argument("--refit-first", action="store_true",
                        help="refit the first regression and the domains too (by default they are "
                             "kept from --out: stop 35's fit, on blind2-22; a refit with blind23-24, "
                             "c-neg, was not shipped)")
    args = parser.parse_args(argv)
    model, counts = fit(default_embedder(), [s for s in args.leave_out.split(",") if s], args.c)
    if not args.refit_first:
        with np.load(args.out) as old:
            model = LimitModel(np.asarray(old["w"], np.float32), float(old["b"]),
                               np.asarray(old["dw"], np.float32), np.asarray(old["db"], np.float32),
                               model.aw, model.ab)
    model.save(args.out)
    print(f"limit model: {counts}, C {args.c}, first regression "
          f"{'refit' if args.refit_first else 'kept'} -> {args.out}")


if __name__ == "__main__":
    main()
