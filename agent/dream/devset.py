"""The dev windows of the extraction set: what fitting, calibration and the LOSO estimate may read.

Every split but the blind ones (``extraction_eval.BLIND``) is dev. A blind split stays out of
every fit and every score until it has been measured once; after that it is ``MEASURED`` and
becomes dev like blind7 did (round two) — blind8 was measured once in issue 13's second round,
blind9 in its third, blind10 in its fourth, blind11 in its fifth, blind12 in its sixth, blind13 in
its seventh, blind14 in its eighth, blind15 and blind16 at stops 23 and 24, blind17 at stop 26, blind18 at stop 29,
blind19, blind20 and blind21 at stop 31, blind22 at stop 32, blind23, blind24 and blind25 at stop 33, blind26, blind27 and blind28 at stop 34, blind29 to blind32 at stop 37, blind33 and blind34 at stop 38 (all dev
now); a blind split written for a later round is never read until its first measurement.
"""

from __future__ import annotations

from memfs.agent.dream import extraction_eval as ev

MEASURED = frozenset({"blind8", "blind9", "blind10", "blind11", "blind12", "blind13", "blind14", "blind15",
                      "blind16", "blind17", "blind18", "blind19", "blind20", "blind21", "blind22",
                      "blind23", "blind24", "blind25", "blind26", "blind27", "blind28", "blind29", "blind30",
                      "blind31", "blind32", "blind33", "blind34", "blind35", "blind36", "blind37", "blind38", "blind39"})
"""Blind splits already measured once (their first numbers are in BENCHMARKS.md): dev now."""


def never() -> frozenset[str]:
    """Splits no fit, calibration or estimate may read."""
    return ev.BLIND - MEASURED


def dev_windows() -> list[ev.EvalWindow]:
    """Every window of a dev split, in file order."""
    hidden = never()
    return [w for w in ev.load_dataset() if w.split not in hidden]
