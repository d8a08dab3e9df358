"""Fit the learned extractor with the profile banks at several weights, features computed once.

    python bench/bank_weights.py --leave blind7,blind8,blind9 --weights 0.1,0.3,1 --out DIR

Stop 34, x-bank's dev step: each weight's model is written to ``DIR/learned_w<W>.npz`` (and the
fit without any bank to ``DIR/learned_w0.npz``) for the profile eval of the left-out sets and
the extraction eval of the splits the 84-window fit never read (copy one over the package's
``data/learned.npz`` to run it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from memfs.agent.dream.devset import dev_windows
from memfs.agent.dream.fit_learned import (
    BANK_SPLITS,
    FIT_SPLITS,
    SHIPPED_GRID,
    Bank,
    _Memo,
    _value,
    bank_rows,
    choose,
    fit_model,
    training_set,
)

from memfs.embed import SentenceTransformerEmbedder


def main(argv: list[str]) -> int:
    leave = set(_value(argv, "--leave", "").split(",")) - {""}
    weights = [float(w) for w in _value(argv, "--weights", "0.1,0.3,1").split(",")]
    fact_weight = float(_value(argv, "--fact-weight", "0"))
    """0: a standing fact weighs as the chat; else its own weight."""
    out = Path(_value(argv, "--out", "."))
    out.mkdir(parents=True, exist_ok=True)
    embedder = _Memo(SentenceTransformerEmbedder())
    windows = [w for w in dev_windows() if w.split in FIT_SPLITS]
    x, y, weight, groups = training_set(windows, embedder)
    bank = bank_rows(embedder, [s for s in BANK_SPLITS if s not in leave], 1.0)
    print(f"extraction rows {len(y)} ({int((y > 0).sum())} cards); bank rows {len(bank.y)} "
          f"({int((bank.y > 0).sum())} standing facts)", flush=True)
    for w in [0.0, *weights]:
        b = Bank(bank.x, bank.y, np.where(bank.y > 0, fact_weight or w, w)) if w else None
        hyper, threshold, f_half = choose(x, y, weight, groups, SHIPPED_GRID, b)
        model = fit_model(x, y, weight, threshold, hyper, b)
        model.save(out / (f"learned_w{w:g}" + (f"_f{fact_weight:g}" if fact_weight else "") + ".npz"))
        bank_p = model.card(bank.x)
        chat = bank.y == 0
        print(f"weight {w:g}: threshold {threshold}, inner-CV F0.5 {f_half:.3f}; bank chat carded "
              f"{int((bank_p[chat] >= threshold).sum())} of {int(chat.sum())}, standing facts carded "
              f"{int((bank_p[~chat] >= threshold).sum())} of {int((~chat).sum())} (in sample)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
