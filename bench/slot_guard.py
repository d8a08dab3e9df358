"""Which single-slot replacements are right? Features of every one the extractor makes, on dev.

    python bench/slot_guard.py [--profile dev,dev2] [--messages 1600] [--out rows.jsonl]

A single-valued slot (name, pronouns, job, home, partner) is replaced by a new card of that slot
whatever the two cards' similarity (``extract_semantic._replaced``). The slot of a sentence is
the argmax of its prototype scores, so small talk whose best score is weak can take one
("The user tried ordering food in Welsh on holiday and panicked." replaced "The user lives in
Cardiff."). This records, for every replacement that only the single-slot path allowed, the
features a guard could use, with a label where the data has one:

- the extraction set's dev windows (``devset.dev_windows``, never an unmeasured blind split):
  right when the replaced card is in the window's expected ``supersede`` set;
- the spent profile sets (``--profile``): wrong when the replaced card was written from one of
  the set's standing facts' messages (a pair never gets two facts of one slot, so nothing true
  replaces it); replacements of small-talk cards are recorded unlabelled.

Features: ``slot`` (the new sentence's score for the slot it took), ``margin`` (that score minus
the best other positive class), ``sim`` (cosine of the new card to the card it replaces), and
``blocked``: whether ``Thresholds.single`` / ``single_margin`` stop it. The replay follows
main's path (the guard off), so every row is a replacement main makes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROWS: list[dict[str, Any]] = []
CONTEXT: dict[str, Any] = {}


def _install(embedder: Any) -> None:
    """Wrap ``_replaced`` to record every single-path replacement with its features."""
    from memfs.agent.dream import extract_semantic as es
    original = es._replaced

    def recording(c: Any, active: Any, sims: np.ndarray, classes: Any, th: Any, used: set[str],
                  slots: frozenset[str]) -> Any:
        # main's decision (the guard off) is what is returned, so a replay follows main's path;
        # each single-path replacement records whether the guard (``th``) would have stopped it
        card = original(c, active, sims, classes, th.with_(single=-9.0, single_margin=-9.0), used, slots)
        if card is None or c.cls not in slots:
            return card
        i = next(k for k, a in enumerate(active) if a.id == card.id)
        sim = float(sims[i])
        if sim >= th.supersede:
            return card  # the similarity path would have replaced it anyway
        guarded = original(c, active, sims, classes, th, used, slots)
        ROWS.append({**CONTEXT, "cls": c.cls, "new": c.body, "old": card.body, "old_id": card.id,
                     "old_from": [f"{card.source.session}:{t}" for t in card.source.turns] if card.source else [],
                     "slot": round(c.slot, 4), "margin": round(c.lead, 4), "sim": round(sim, 4),
                     "blocked": guarded is None or guarded.id != card.id})
        return card

    es._replaced = recording


def extraction_rows(embedder: Any) -> None:
    from memfs.agent.dream import extraction_eval as ev
    from memfs.agent.dream.devset import dev_windows
    from memfs.agent.dream.extract_offline import OfflineExtractor

    extractor = OfflineExtractor(embedder)
    for w in dev_windows():
        CONTEXT.clear()
        CONTEXT.update({"source": "extraction", "window": w.id, "split": w.split})
        start = len(ROWS)
        ev.score_window(extractor(w.messages, w.cards, w.summary, w.now), w)
        want = set(w.expected.get("supersede", []))
        for row in ROWS[start:]:
            row["right"] = row["old_id"] in want


def profile_rows(embedder: Any, split: str, messages: int) -> None:
    """Replay a spent profile set; a replaced card is a standing fact's when it was written from
    that fact's message (the eval's own provenance, per pair: ``read_pair`` gets each pair's
    message ids right after its replay)."""
    from memfs.agent.evals import profile as pe

    data = pe.load_set(split)
    CONTEXT.clear()
    CONTEXT.update({"source": f"profile-{split}-{messages}"})
    original = pe.read_pair
    start = [len(ROWS)]

    def reading(pair: Any, group: Any, said: dict[str, str]) -> Any:
        standing = set(said.values())
        for row in ROWS[start[0]:]:
            row["right"] = False if standing & set(row["old_from"]) else None
        start[0] = len(ROWS)
        return original(pair, group, said)

    pe.read_pair = reading
    try:
        pe.run_set(data, messages, embedder=embedder)
    finally:
        pe.read_pair = original


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="", help="comma list of spent profile splits to replay")
    ap.add_argument("--messages", type=int, default=1600)
    ap.add_argument("--no-extraction", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    from memfs.embed import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    _install(embedder)
    if not args.no_extraction:
        extraction_rows(embedder)
    for split in filter(None, args.profile.split(",")):
        profile_rows(embedder, split, args.messages)
    out = args.out.open("w") if args.out else sys.stdout
    for row in ROWS:
        out.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
