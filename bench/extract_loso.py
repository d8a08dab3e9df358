"""Leave-one-split-out (LOSO) estimate of an offline extractor: the number that predicts a fresh split.

Issue 13's dev numbers were overfitted (dev P 0.908 R 0.885, then a fresh split: P 0.750
R 0.349): thresholds and prototypes had been tuned on the splits they were scored on. Here,
for each dev split (``agent/dream/devset.py``: every split but the unmeasured blind ones), the
extractor is calibrated or fitted on the *other* dev splits only and scored on the held-out
one; the held-out windows' counts are pooled. Blind splits are never read.

    python bench/extract_loso.py --extractor shipped   # round two's: thresholds re-calibrated per fold
    python bench/extract_loso.py --extractor learned   # the learned extractor, refitted per fold
    python bench/extract_loso.py --extractor learned+rules   # ... fronted by the strict phrase rules
    python bench/extract_loso.py --extractor learned+rules --bank   # ... fit as the shipped file is (stop 34)
    python bench/extract_loso.py --extractor learned+rules --bank --linear   # ... the card regression before stop 35
    python bench/extract_loso.py --extractor learned+rules --bank --thresholds 0.75,0.85   # one fit per fold, each threshold
    python bench/extract_loso.py --extractor verified   # learned+rules without, then with, the verifier

Prints one row per held-out split, the pooled line, and the pooled line over the splits no
rule or prototype was written from (``UNTUNED``: blind7 to blind16, misleading), which is the
honest part for the shipped extractor (its rules and prototypes were written from the others;
LOSO re-calibrates thresholds, it cannot unwrite them). Embeddings are cached on disk
(``--cache``, default ``/tmp/memfs-loso-embeddings.npz``) so a rerun costs seconds.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream.devset import dev_windows

from memfs.embed import Embedder, Vectors

UNTUNED = frozenset({"blind7", "blind8", "blind9", "blind10", "blind11", "blind12", "blind13", "blind14", "blind15",
                     "blind16", "blind17", "misleading"})
Fit = Callable[[Sequence[ev.EvalWindow]], ev.Extractor]


class DiskCachedEmbedder:
    """The real embedder behind a text -> vector cache kept in one ``.npz`` file."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner, self.name, self.dim, self.path = inner, inner.name, inner.dim, path
        self.memo: dict[str, np.ndarray] = {}
        if path.exists():
            data = np.load(path, allow_pickle=False)
            self.memo = dict(zip((str(t) for t in data["texts"]), data["vectors"], strict=True))
        self.dirty = False

    def embed(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, np.asarray(self.inner.embed(missing), dtype=np.float32), strict=True))
            self.dirty = True
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.memo[t] for t in texts]).astype(np.float32)

    def save(self) -> None:
        if self.dirty:
            texts = list(self.memo)
            np.savez(self.path, texts=np.array(texts), vectors=np.stack([self.memo[t] for t in texts]))


def pooled(windows: Sequence[ev.WindowScore]) -> dict[str, object]:
    return ev.Report(list(windows)).as_json()["all"]


def loso(windows: Sequence[ev.EvalWindow], fit: Fit) -> list[ev.WindowScore]:
    """Each split scored by an extractor fitted on the other splits."""
    scored: list[ev.WindowScore] = []
    for split in dict.fromkeys(w.split for w in windows):
        extractor = fit([w for w in windows if w.split != split])
        held = [w for w in windows if w.split == split]
        scored += ev.score_extraction(extractor, held).windows
    return scored


def loso_verified(windows: Sequence[ev.EvalWindow], embedder: Embedder) -> tuple[list[ev.WindowScore],
                                                                                 list[ev.WindowScore]]:
    """The shipped offline extractor (learned + strict rules) per held-out split without, then
    with, the second-stage verifier (``verify.py``), in the same run. For each split the first
    stage is fitted on the other splits (``fit_learned.out_of_fold``, which also records the cards
    it proposes on the held-out split); the verifier of split S is fitted on the cards proposed
    on the splits other than S, by first stages that never saw those splits. (Those first stages
    saw S: S's labels shape the proposals the verifier learns from, never its own verdicts.)"""
    from memfs.agent.dream.fit_learned import fit_verifier, out_of_fold, with_rules
    from memfs.agent.dream.learned import LearnedExtractor

    models, proposed = out_of_fold(windows, embedder)
    before: list[ev.WindowScore] = []
    after: list[ev.WindowScore] = []
    for split, model in models.items():
        held = [w for w in windows if w.split == split]
        before += ev.score_extraction(with_rules(LearnedExtractor(embedder, model)), held).windows
        verifier = fit_verifier(proposed, [s for s in models if s != split])
        after += ev.score_extraction(with_rules(LearnedExtractor(embedder, model, verifier)), held).windows
    return before, after


GATES = {"none": frozenset(), "own": frozenset({"own"}), "episode": frozenset({"episode"}),
         "own+episode": frozenset({"own", "episode"})}


def loso_gate(windows: Sequence[ev.EvalWindow], embedder: Embedder) -> dict[str, list[ev.WindowScore]]:
    """learned+rules per held-out split with each set of card gates of ``GATES``
    (``LearnedExtractor(gates=...)``): the first stage fitted once per fold, so all are
    scored by the same models in the same run."""
    from memfs.agent.dream.fit_learned import fit, with_rules
    from memfs.agent.dream.learned import LearnedExtractor

    out: dict[str, list[ev.WindowScore]] = {g: [] for g in GATES}
    for split in dict.fromkeys(w.split for w in windows):
        model = fit([w for w in windows if w.split != split], embedder)
        held = [w for w in windows if w.split == split]
        for g, gates in GATES.items():
            out[g] += ev.score_extraction(with_rules(LearnedExtractor(embedder, model, gates=gates)), held).windows
    return out


def loso_thresholds(windows: Sequence[ev.EvalWindow], embedder: Embedder, thresholds: Sequence[float],
                    linear: bool = False) -> dict[float, list[ev.WindowScore]]:
    """learned+rules fit as the shipped file is (the banks beside the windows) per held-out split,
    scored at each card threshold of ``thresholds``: the model fitted once per fold, so every
    threshold is scored by the same models in the same run."""
    from dataclasses import replace

    from memfs.agent.dream.fit_learned import LINEAR_GRID, SHIPPED_GRID, bank_rows, fit, with_rules
    from memfs.agent.dream.learned import LearnedExtractor

    rows = bank_rows(embedder)
    out: dict[float, list[ev.WindowScore]] = {t: [] for t in thresholds}
    for split in dict.fromkeys(w.split for w in windows):
        model = fit([w for w in windows if w.split != split], embedder, grid=LINEAR_GRID if linear else SHIPPED_GRID,
                    bank=rows, threshold=thresholds[0])
        held = [w for w in windows if w.split == split]
        for t in thresholds:
            out[t] += ev.score_extraction(with_rules(LearnedExtractor(embedder, replace(model, threshold=t))),
                                          held).windows
            n = pooled([w for w in out[t] if w.split == split])
            print(f"  fold {split} threshold {t}: P {n['precision']} R {n['recall']} produced {n['produced']} "
                  f"reference {n['reference']} false {n['false_cards']}", flush=True)
    return out


PLAN_OFF_GRID = (0.0, 0.02, 0.04, 0.06, 0.08, 0.1)


def _f_half(scored: Sequence[ev.WindowScore]) -> tuple[float, int]:
    n = pooled(scored)
    p, r = float(n["precision"]), float(n["recall"])  # type: ignore[arg-type]
    return (1.25 * p * r / (0.25 * p + r) if p + r else 0.0), -int(n["false_cards"])  # type: ignore[call-overload]


def loso_polarity(windows: Sequence[ev.EvalWindow], embedder: Embedder,
                  grid: Sequence[float] = PLAN_OFF_GRID) -> tuple[list[ev.WindowScore], dict[float, list[ev.WindowScore]],
                                                                  list[ev.WindowScore], dict[str, str]]:
    """learned+rules per held-out split without the plan-polarity gate (``polarity.py``), with
    each margin of ``grid``, and with the margin chosen for that split on the *other* splits
    (best pooled F0.5, then fewest false cards): the first stage fitted once per fold, so all
    of them are scored by the same models in the same run."""
    from memfs.agent.dream.fit_learned import fit, with_rules
    from memfs.agent.dream.learned import LearnedExtractor

    wins = windows
    splits = list(dict.fromkeys(w.split for w in wins))
    without: list[ev.WindowScore] = []
    by_margin: dict[float, list[ev.WindowScore]] = {m: [] for m in grid}
    for split in splits:
        model = fit([w for w in wins if w.split != split], embedder)
        held = [w for w in wins if w.split == split]
        without += ev.score_extraction(with_rules(LearnedExtractor(embedder, model, plan_off=None)), held).windows
        for m in grid:
            by_margin[m] += ev.score_extraction(with_rules(LearnedExtractor(embedder, model, plan_off=m)),
                                                held).windows
    chosen: list[ev.WindowScore] = []
    notes: dict[str, str] = {}
    for split in splits:
        best = max(grid, key=lambda m: _f_half([w for w in by_margin[m] if w.split != split]))
        notes[split] = f"margin {best}"
        chosen += [w for w in by_margin[best] if w.split == split]
    return without, by_margin, chosen, notes


def loso_shipped(windows: Sequence[ev.EvalWindow], embedder: Embedder) -> tuple[list[ev.WindowScore], dict[str, str]]:
    """Round two's shipped extractor with its thresholds re-calibrated per fold (the grid of
    ``calibrate.py`` is scored once per window; each fold picks its best point on the rest)."""
    from memfs.agent.dream.calibrate import best_point, grid_reports

    reports = grid_reports(embedder, windows)
    splits = list(dict.fromkeys(w.split for w in windows))
    scored: list[ev.WindowScore] = []
    chosen: dict[str, str] = {}
    for split in splits:
        point, _ = best_point(reports, set(splits) - {split})
        chosen[split] = json.dumps(point)
        report = next(r for p, r in reports if p == point)
        scored += [w for w in report.windows if w.split == split]
    return scored, chosen


def format_rows(scored: Sequence[ev.WindowScore], notes: dict[str, str] | None = None) -> list[str]:
    rows = [f"{'held-out split':16} {'P':>6} {'R':>6} {'prod':>5} {'ref':>4} {'false':>5}"]
    for split in dict.fromkeys(w.split for w in scored):
        n = pooled([w for w in scored if w.split == split])
        rows.append(f"{split:16} {n['precision']:6.3f} {n['recall']:6.3f} {n['produced']:5} {n['reference']:4} "
                    f"{n['false_cards']:5}  {(notes or {}).get(split, '')}")
    for label, part in (("POOLED", scored), ("POOLED untuned", [w for w in scored if w.split in UNTUNED])):
        n = pooled(part)
        rows.append(f"{label:16} {n['precision']:6.3f} {n['recall']:6.3f} {n['produced']:5} {n['reference']:4} "
                    f"{n['false_cards']:5}  false rate {n['false_rate']:.1%}  f1 {n['f1']:.3f}")
    return rows


def _arg(args: Sequence[str], flag: str, default: str) -> str:
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else default


def main(argv: Sequence[str]) -> int:
    from memfs.embed import SentenceTransformerEmbedder

    name = _arg(argv, "--extractor", "learned")
    embedder = DiskCachedEmbedder(SentenceTransformerEmbedder(),
                                  Path(_arg(argv, "--cache", "/tmp/memfs-loso-embeddings.npz")))
    windows = dev_windows()
    notes: dict[str, str] = {}
    if name == "shipped":
        scored, notes = loso_shipped(windows, embedder)
    elif name == "verified":
        before, scored = loso_verified(windows, embedder)
        print("WITHOUT the verifier (learned+rules)")
        print("\n".join(format_rows(before)))
        print(json.dumps({"extractor": "learned+rules", "loso": pooled(before),
                          "untuned": pooled([w for w in before if w.split in UNTUNED])}))
        print("WITH the verifier")
    elif name == "gate":
        by_gate = loso_gate(windows, embedder)
        for g, part in by_gate.items():
            print(f"GATES {g}")
            print("\n".join(format_rows(part)))
            print(json.dumps({"extractor": f"learned+rules, gates {g}", "loso": pooled(part),
                              "untuned": pooled([w for w in part if w.split in UNTUNED])}))
        if "-v" in argv:
            base = {w.id: w for w in by_gate["none"]}
            for w in by_gate["own+episode"]:
                for line in set(base[w.id].false_cards) - set(w.false_cards):
                    print(f"  {w.id} FALSE-gone {line}")
                for line in set(w.missed_reference) - set(base[w.id].missed_reference):
                    print(f"  {w.id} LOST      {line}")
        scored = by_gate["own+episode"]
        print("GATES own+episode (again, for the rows below)")
    elif name == "polarity":
        without, by_margin, scored, notes = loso_polarity(windows, embedder)
        print("WITHOUT the plan-polarity gate (learned+rules)")
        print("\n".join(format_rows(without)))
        print(json.dumps({"extractor": "learned+rules", "loso": pooled(without),
                          "untuned": pooled([w for w in without if w.split in UNTUNED])}))
        for m, part in by_margin.items():
            a, u = pooled(part), pooled([w for w in part if w.split in UNTUNED])
            print(f"margin {m:5.2f}: pooled P {a['precision']:.3f} R {a['recall']:.3f} false {a['false_cards']}"
                  f"  untuned P {u['precision']:.3f} R {u['recall']:.3f} false {u['false_cards']}")
        if "-v" in argv:
            for w in without:
                for line in w.false_cards:
                    print(f"  {w.id} FALSE-before {line}")
        print("WITH the gate, margin chosen on the other splits")
    elif name == "learned+rules" and "--thresholds" in argv:
        by_threshold = loso_thresholds(windows, embedder, [float(t) for t in _arg(argv, "--thresholds", "").split(",")],
                                       linear="--linear" in argv)
        for t, part in by_threshold.items():
            print(f"THRESHOLD {t}")
            print("\n".join(format_rows(part)))
            print(json.dumps({"extractor": f"learned+rules, banks, threshold {t}", "loso": pooled(part),
                              "untuned": pooled([w for w in part if w.split in UNTUNED])}))
        scored = next(iter(by_threshold.values()))
        print(f"THRESHOLD {next(iter(by_threshold))} (again, for the rows below)")
    elif name in ("learned", "learned+rules"):
        from memfs.agent.dream.fit_learned import fitter

        scored = loso(windows, fitter(embedder, rules=name == "learned+rules", bank="--bank" in argv,
                                      linear="--linear" in argv))
    else:
        raise SystemExit("--extractor: shipped, learned, learned+rules, verified, polarity or gate")
    embedder.save()
    print("\n".join(format_rows(scored, notes)))
    if "-v" in argv:
        for w in scored:
            for tag, lines in (("EXTRA", w.unmatched_produced), ("MISSED", w.missed_reference), ("FALSE", w.false_cards)):
                for line in lines:
                    print(f"  {w.id} {tag:6} {line}")
    print(json.dumps({"extractor": name, "loso": pooled(scored),
                      "untuned": pooled([w for w in scored if w.split in UNTUNED])}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
