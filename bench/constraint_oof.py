"""The request model out of fold on the spent constraint splits (issue 12, stops 33-34).

Each of ``FOLDS`` folds of the 20 spent constraint splits c-learn was measured on (605 probes)
is planned by a request model fit without it: the fit's rows (``requests.fit.examples``) and
their features are computed once, and each fold's model is fit on the rows of the other
splits (blind18, the request set, the small talk and the profile banks always in), with C and
the threshold chosen by the fit's own cross-validation (``requests.fit.cross_validate``).
Then each split's pairs are built as ``memfs eval constraints`` builds them (memory only) and
every request is planned once as main plans it (the thresholds, the model only when they name
no domain) and, when the thresholds name a domain, again with each way of adding the model's
likeliest domain ("first": searched first, theirs after; "add": after theirs; "instead":
alone), so any confidence bar can be read off one run. The user turns of each probe's window
(negatives, out of fold as well) are planned the same way. Nothing of a fresh split is read:
the splits are named one by one (``SPLITS``).

    python bench/constraint_oof.py run --out /tmp/oof      # fit 5 folds, plan every probe
    python bench/constraint_oof.py report --out /tmp/oof   # main vs the second opinion
    python bench/constraint_oof.py bank --split blind19    # shipped model, bank lines alone
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

SPLITS = ("test", "dev", "dev2", "dev3", *(f"blind{n}" for n in range(2, 18)))
"""The 20 spent constraint splits of c-learn's and c-learn2's out-of-fold gates (605 probes)."""
BANK_SPLITS = ("dev", "blind18", "blind19")
"""Spent splits whose small talk is read alone for the negatives (``bank``)."""
SHIPPED_SPLITS = ("blind18", "blind19")
"""Spent splits with their own banks, planned with the shipped model (``--shipped``): blind18 is
in its fit, blind19 is not (spent at stop 33 after the fit)."""
FOLDS = 5
WAYS = ("first", "add", "instead", "lead")
"""How the model's likeliest domain joins the thresholds' ones: searched first ("first", which
also moves a domain they named second to the front), after theirs ("add"), alone
("instead"); "lead" is "first" only when they did not name it (the shipped ``with_model``)."""

STATE: dict[str, Any] = {"force": None, "seen": None}


def _hook() -> None:
    """Route the plan's domains through ``STATE``: record the thresholds' domains and the
    model's probabilities; answer main's way, or with ``STATE['force']``."""
    from memfs.agent.requests import model

    def with_model(thresholds: tuple[str, ...], probs: Any, threshold: float,
                   second_opinion: float = 0.0) -> tuple[str, ...]:
        STATE["seen"] = (tuple(thresholds), [float(p) for p in probs], float(threshold))
        if STATE["force"] is not None and thresholds:
            return tuple(STATE["force"])
        return tuple(thresholds) or model.best_domain(probs, threshold)

    model.with_model = with_model  # type: ignore[assignment]


def variants(thresholds: tuple[str, ...], probs: list[float]) -> dict[str, tuple[str, ...]]:
    """The domains each way gives when the model's likeliest domain is taken."""
    from memfs.agent.requests.model import CLASSES

    mine = CLASSES[int(np.argmax(probs[1:])) + 1]
    rest = tuple(d for d in thresholds if d != mine)
    return {"first": (mine, *rest), "add": thresholds if mine in thresholds else
            (*thresholds, mine), "instead": (mine,)}


def fold_of(split: str) -> int:
    return sorted(SPLITS).index(split) % FOLDS


def fit_folds(out: Path, embedder: Any) -> list[Any]:
    from memfs.agent.requests import fit
    from memfs.agent.requests.model import CLASSES, RequestModel, features

    from memfs.embed_memo import RecentEmbedder

    models = []
    if all((out / f"fold{f}.npz").exists() for f in range(FOLDS)):
        return [RequestModel.load(out / f"fold{f}.npz") for f in range(FOLDS)]
    rows = fit.examples()
    cache = out / "features.npz"
    if cache.exists():
        with np.load(cache) as data:
            x, quiet = data["x"], data["quiet"]
    else:
        x = features(embedder, [r.text for r in rows], [r.window for r in rows])
        quiet = fit.thresholds_quiet(RecentEmbedder(embedder, size=8192), rows)
        np.savez(cache, x=x, quiet=quiet)
    y = np.array([CLASSES.index(r.label) for r in rows])
    groups = np.array([r.group for r in rows])
    about = []
    for f in range(FOLDS):
        keep = np.array([not (g in SPLITS and fold_of(g) == f) for g in groups])
        with contextlib.redirect_stdout(io.StringIO()):
            c, threshold, found, false, _ = fit.cross_validate(
                x[keep], y[keep], list(groups[keep]), quiet[keep])
        fitted = fit._fit(x[keep], y[keep], c)
        weights = np.zeros((len(CLASSES), x.shape[1]), np.float32)
        bias = np.full(len(CLASSES), -30.0, np.float32)
        weights[fitted.classes_] = fitted.coef_
        bias[fitted.classes_] = fitted.intercept_
        m = RequestModel(weights, bias, threshold)
        m.save(out / f"fold{f}.npz")
        models.append(m)
        about.append({"fold": f, "rows": int(keep.sum()), "C": c, "threshold": threshold,
                      "cv_found": round(found, 3), "cv_false": round(false, 3)})
        print(json.dumps(about[-1]), flush=True)
    (out / "folds.json").write_text(json.dumps(about, indent=1))
    return models


def run(out: Path, messages: int, only: list[str], product: bool = False,
        shipped: bool = False) -> None:
    from memfs.agent.evals import constraints as ce
    from memfs.agent.evals.report import Timings, eval_home, load_embedder
    from memfs.agent.requests import model as rm
    from memfs.agent.services import AgentPlanner, wired_store

    from memfs.context import build_context
    from memfs.services import PlanRequest

    out.mkdir(parents=True, exist_ok=True)
    embedder = load_embedder(None, Timings())
    models = [] if shipped else fit_folds(out, embedder)
    if not product:  # else the shipped ``with_model`` plans, to check the bench's reading of it
        _hook()
    for split in only or SPLITS:
        assert split in SPLITS or shipped and split in SHIPPED_SPLITS, split
        path = out / f"{split}{'.product' if product else ''}{'.shipped' if shipped else ''}.json"
        if path.exists():
            continue
        rm._SHIPPED[:] = [rm.RequestModel.load()] if shipped else [models[fold_of(split)]]
        probes = ce.load_probes(split)
        rows = []
        with eval_home(None) as folder:
            store = wired_store(folder, embedder=embedder)
            first = None
            for n, group in enumerate(ce.groups_of(probes, 5)):
                pair = store.pair("eval", f"group-{n + 1}")
                said = ce.write_history(pair, group, messages, bank=ce.bank_of(split))
                if first is not None:
                    shutil.copytree(ce.vector_folder(first), ce.vector_folder(pair),
                                    dirs_exist_ok=True)
                pair.search("warm up", k=1)
                first = first or pair
                now = ce.START + dt.timedelta(days=60)
                for p in group:
                    window = ce.live_window(p, now)
                    STATE["force"], STATE["seen"] = None, None
                    ctx = build_context(pair, p.request, now=now, window=window)
                    mid = said[p.id]
                    row: dict[str, Any] = {
                        "split": split, "id": p.id, "domain": p.domain,
                        "plan": list(ctx.plan.constraint_domains), "seen": STATE["seen"],
                        "main": mid in {h.id for h in ctx.hits}, "ways": {}}
                    if STATE["seen"] and STATE["seen"][0]:
                        done: dict[tuple[str, ...], bool] = {tuple(row["plan"]): row["main"]}
                        for way, doms in variants(*STATE["seen"][:2]).items():
                            if doms not in done:
                                STATE["force"] = doms
                                c2 = build_context(pair, p.request, now=now, window=window)
                                done[doms] = mid in {h.id for h in c2.hits}
                                STATE["force"] = None
                            row["ways"][way] = [list(doms), done[doms]]
                    negs = []
                    talk = [c for _, c in p.before]
                    for k, (role, content) in enumerate(p.before):
                        if role != "user":
                            continue
                        STATE["seen"] = None
                        AgentPlanner().plan(pair, PlanRequest(content, tuple(talk[:k]), "", "",
                                                              frozenset()))
                        negs.append(STATE["seen"])
                    row["negatives"] = negs
                    rows.append(row)
        path.write_text(json.dumps(rows))
        print(split, sum(r["main"] for r in rows), "/", len(rows), flush=True)


def decide(seen: Any, way: str, bar: float) -> tuple[str, ...] | None:
    """The domains of the second opinion at ``bar``, or None when it does not act."""
    if not seen or not seen[0]:
        return None
    thresholds, probs = tuple(seen[0]), seen[1]
    best = int(np.argmax(probs[1:])) + 1
    if probs[best] < bar:
        return None
    if way == "lead":
        return None if ("none", *_domains())[best] in thresholds else \
            variants(thresholds, probs)["first"]
    doms = variants(thresholds, probs)[way]
    return None if doms == thresholds else doms


def _domains() -> tuple[str, ...]:
    from memfs.constraint_domains import DOMAINS

    return tuple(DOMAINS)


def report(out: Path, bars: list[float], pick: str, suffix: str = "") -> None:
    names = SHIPPED_SPLITS if suffix == ".shipped" else SPLITS
    rows = [r for s in names if (out / f"{s}{suffix}.json").exists()
            for r in json.loads((out / f"{s}{suffix}.json").read_text())]
    main = sum(r["main"] for r in rows)
    negs = [n for r in rows for n in r["negatives"] if n]
    named = [n for n in negs if n[0]]
    print(f"probes {len(rows)}, main out of fold {main}; window negatives {len(negs)}, "
          f"named by the thresholds {len(named)}")
    for way in WAYS:
        for bar in bars:
            won = lost = 0
            for r in rows:
                d = decide(r["seen"], way, bar)
                if d is not None:
                    got = r["ways"]["first" if way == "lead" else way][1]
                    won += got and not r["main"]
                    lost += r["main"] and not got
            changed = sum(decide(n, way, bar) is not None for n in negs)
            print(f"{way:8} bar {bar:.2f}: {main + won - lost} (+{won} -{lost}); "
                  f"window negatives changed {changed}")
    way, bar = pick.split(":")
    per: dict[str, list[int]] = {}
    for r in rows:
        d = decide(r["seen"], way, float(bar))
        got = r["ways"]["first" if way == "lead" else way][1] if d is not None else r["main"]
        acc = per.setdefault(r["split"], [0, 0, 0, 0])
        acc[0] += r["main"]
        acc[1] += got
        acc[2] += got and not r["main"]
        acc[3] += r["main"] and not got
        if d is not None:
            print(f"  {r['split']} {r['id']} {r['domain']}: {r['plan']} -> {list(d)} "
                  f"{'won' if got and not r['main'] else 'lost' if r['main'] and not got else '='}")
    for s, (a, b, w, lo) in per.items():
        print(f"{s:8} {a:3} -> {b:3} (+{w} -{lo})")
    print("total", sum(v[0] for v in per.values()), "->", sum(v[1] for v in per.values()))


def bank(split: str, messages: int, way: str, bar: float) -> None:
    """Each distinct user line of a spent split's small talk planned alone with the shipped
    model (as ``bench/request_triggers.py``): triggers, and lines whose domains change."""
    from memfs.agent.evals import constraints as ce
    from memfs.agent.evals.report import Timings, eval_home, load_embedder
    from memfs.agent.services import AgentPlanner, wired_store

    from memfs.services import PlanRequest

    assert split in BANK_SPLITS, split
    _hook()
    probes = ce.load_probes(split)
    lines: list[str] = []
    for _, msgs in ce.build_history(probes, messages, bank=ce.bank_of(split)):
        lines += [m["content"] for m in msgs if m["role"] == "user"]
    skip = {p.constraint for p in probes} | set(ce.REPEATED)
    lines = [line for line in dict.fromkeys(lines) if line not in skip]
    embedder = load_embedder(None, Timings())
    triggered = changed = 0
    with eval_home(None) as folder:
        pair = wired_store(folder, embedder=embedder).pair("bench", "triggers")
        for line in lines:
            STATE["seen"] = None
            plan = AgentPlanner().plan(pair, PlanRequest(line, (), "", "", frozenset()))
            triggered += bool(plan.constraint_domains)
            if (d := decide(STATE["seen"], way, bar)) is not None:
                changed += 1
                print(f"  {list(plan.constraint_domains)} -> {list(d)}: {line}")
    print(json.dumps({"split": split, "lines": len(lines), "triggered_main": triggered,
                      "domains_changed": changed}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("run", "report", "bank"))
    ap.add_argument("--out", type=Path, default=Path("/tmp/constraint_oof"))
    ap.add_argument("--messages", type=int, default=1600)
    ap.add_argument("--splits", default="")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--bars", default="0.5,0.6,0.7,0.8,0.85,0.9,0.95")
    ap.add_argument("--pick", default="instead:0.5")
    ap.add_argument("--shipped", action="store_true", help="run: plan SHIPPED_SPLITS with the "
                    "shipped model (written as SPLIT.shipped.json), no folds")
    ap.add_argument("--product", action="store_true", help="run: plan with the product's "
                    "with_model (written as SPLIT.product.json) instead of main's and the ways")
    args = ap.parse_args()
    if args.what == "run":
        run(args.out, args.messages, [s for s in args.splits.split(",") if s], args.product,
            args.shipped)
    elif args.what == "report":
        report(args.out, [float(b) for b in args.bars.split(",")], args.pick,
               ".shipped" if args.shipped else "")
    else:
        way, bar = args.pick.split(":")
        bank(args.split, args.messages, way, float(bar))


if __name__ == "__main__":
    main()
