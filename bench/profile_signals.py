"""Which write-time signal could keep small talk out of the summary's profile? (issue 13, stop 26)

Over 1,600 messages of chat the offline dreams turn one-off small talk into profile lines (dev2:
93 of 109 lines at the end). A profile *admission* decides, per card, whether it becomes a
line; two earlier ones were measured on a fresh set and reverted because they threw out
standing facts. This script measures, before anyone writes a third, how well each candidate
signal separates the final profile's lines from standing facts (by provenance, as ``memfs eval
profile`` decides) from those from small talk, on the dev profile sets only:

- ``salience``: the source message's write-time salience (``memfs.salience``);
- ``limit``: its write-time limit score (the constraint search's);
- ``learned``: the learned extractor's card probability times its probability mass on the
  standing types (fact, relationship, preference, boundary), for the best sentence of the
  source message, read in its session up to that message (what the dream saw);
- ``not_past``: 1 unless the message is told in the past tense or dated today or earlier
  (``dates.looks_past`` / ``dates.find_date``): a standing fact is a state, small talk an event;
- ``rare``: minus the number of the user's other messages in the history within cosine 0.8 of
  the source (small talk is typed again and again in many variants; a fact is said once). In
  these sets that is true by construction of the generator, so read it with care.

For each: the ROC AUC (standing above small talk), the small-talk lines a cut at the lowest
standing line would remove (no standing fact lost), and what a cut losing one standing line
removes. Only ``dev`` and ``dev2``: the blind sets are measured once, by the lead, on a change.

    python bench/profile_signals.py --split dev2 --messages 1600 [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

STANDING_TYPES = ("fact", "relationship", "preference", "boundary")
DEV_SPLITS = ("dev", "dev2")


def auc(score: Sequence[float], label: Sequence[bool]) -> float:
    pos = [s for s, y in zip(score, label) if y]
    neg = [s for s, y in zip(score, label) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def removed_at(score: Sequence[float], label: Sequence[bool], lose: int) -> int:
    """Small-talk lines strictly below the cut that loses ``lose`` standing lines."""
    pos = sorted(s for s, y in zip(score, label) if y)
    if lose >= len(pos):
        return sum(not y for y in label)
    cut = pos[lose]
    return sum(1 for s, y in zip(score, label) if not y and s < cut)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev2", choices=DEV_SPLITS)
    ap.add_argument("--messages", type=int, default=1600)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from memfs.agent.dream.dates import find_date, looks_past
    from memfs.agent.dream.extract_semantic import _units
    from memfs.agent.dream.learned import TYPES, features, rows_of, shipped_model
    from memfs.agent.dream.prototypes import load_prototypes
    from memfs.agent.dream.summary import from_card, parse_summary
    from memfs.agent.evals.profile import load_set, run_profile
    from memfs.agent.services import wired_store

    from memfs.embed import default_embedder
    from memfs.history import iter_messages
    from memfs.salience import message_limit, message_salience

    said = {s.said for s in load_set(args.split).standing}
    embedder = default_embedder()
    protos = load_prototypes(embedder)
    model = shipped_model()
    standing = [TYPES.index(t) for t in STANDING_TYPES]
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        run_profile(args.split, args.messages, home=home, embedder=embedder)
        store = wired_store(home, embedder=embedder)
        for folder in sorted((home / "eval").iterdir()):
            pair = store.pair("eval", folder.name)
            messages = list(iter_messages(pair.root))
            users = [m for m in messages if m.role == "user"]
            user_vecs = np.asarray(embedder.embed([m.content for m in users]), dtype=np.float32)
            by_turn = {(m.session, m.turn): m for m in messages}
            cards = pair.cards()
            for line in parse_summary(pair.summary()).profile:
                card = next((c for c in cards if from_card(line, c.body)), None)
                if card is None or card.source is None or not card.source.turns:
                    continue
                msg = by_turn.get((card.source.session, card.source.turns[0]))
                if msg is None:
                    continue
                window = [m for m in messages if m.session == msg.session and m.turn <= msg.turn]
                mine = [r for r in rows_of(window, _units(window)) if r.msg is window[-1]]
                learned = 0.0
                if mine:
                    x = features(mine, embedder, protos)
                    p, t = model.card(x), model.types(x)
                    learned = float(np.max(p * t[:, standing].sum(axis=1)))
                hit = find_date(msg.content, msg.ts.date())
                past = looks_past(msg.content) or (hit is not None and (hit.past or hit.end <= msg.ts.date()))
                vec = np.asarray(embedder.embed([msg.content]), dtype=np.float32)
                twins = int((user_vecs @ vec[0] >= 0.8).sum()) - 1
                rows.append({"line": line, "type": card.type, "said": msg.content, "standing": msg.content in said,
                             "learned": learned, "not_past": 0.0 if past else 1.0, "rare": -float(twins)})
    texts = [str(r["said"]) for r in rows]
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32)
    sal = message_salience(texts, ["user"] * len(texts), vecs, embedder)
    lim = message_limit(["user"] * len(texts), vecs, sal, embedder)
    for r, s, lm in zip(rows, sal, lim):
        r["salience"], r["limit"] = float(s), float(lm)
    label = [bool(r["standing"]) for r in rows]
    report = {"split": args.split, "messages": args.messages, "lines": len(rows), "standing": sum(label),
              "signals": {}}
    for name in ("salience", "limit", "learned", "not_past", "rare"):
        score = [float(r[name]) for r in rows]  # type: ignore[arg-type]
        report["signals"][name] = {"auc": round(auc(score, label), 3), "removed_losing_0": removed_at(score, label, 0),
                                   "removed_losing_1": removed_at(score, label, 1)}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{args.split} @{args.messages}: {report['lines']} profile lines, {report['standing']} from standing facts")
    print(f"{'signal':10} {'AUC':>6} {'small talk out, 0 facts lost':>29} {'1 fact lost':>12}")
    for name, v in report["signals"].items():
        print(f"{name:10} {v['auc']:6.3f} {v['removed_losing_0']:29d} {v['removed_losing_1']:12d}")


if __name__ == "__main__":
    main()
