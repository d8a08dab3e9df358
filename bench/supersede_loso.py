"""The learned supersede decision out of fold: leave one dev split out (stop 38, x-sup).

    python bench/supersede_loso.py [--cache /tmp/memfs-loso-embeddings.npz]

Collects the decision's rows over every dev window once (``fit_supersede.collect``), then for each
dev split fits the decision without that split and runs the shipped extractor (fronted by the rules)
on the split's windows with it; the held-out windows' scores are pooled and printed next to the
same extractor with the decision off, in the same process.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--verbose", action="store_true", help="print each supersede the x-sup run makes")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/memfs-loso-embeddings.npz"))
    args = ap.parse_args()
    from extract_loso import DiskCachedEmbedder
    from memfs.agent.dream import extraction_eval as ev
    from memfs.agent.dream import fit_learned, fit_supersede, learned, supersede
    from memfs.agent.dream.devset import dev_windows

    from memfs.embed import SentenceTransformerEmbedder

    emb = DiskCachedEmbedder(SentenceTransformerEmbedder(), args.cache)
    windows = dev_windows()
    asked = fit_supersede.collect(emb, windows)
    print(f"{len(asked)} candidates asked, {sum(int(a.labels.sum()) for a in asked)} positive pairs", flush=True)
    key = str(supersede.DATA_PATH)
    scores: dict[str, list[ev.WindowScore]] = {"off": [], "x-sup": []}
    for split in sorted({w.split for w in windows}):
        held = [w for w in windows if w.split == split]
        model = fit_supersede.fit([a for a in asked if a.split != split])
        supersede._SHIPPED[key] = model
        for name in scores:
            inner = learned.LearnedExtractor(emb)
            inner.learned_supersede = name == "x-sup"
            ex = fit_learned.with_rules(inner)
            for w in held:
                out = ex(w.messages, w.cards, w.summary, w.now)
                scores[name].append(ev.score_window(out, w))
                if args.verbose:
                    want, bodies = set(w.expected.get("supersede", [])), {c.id: c.body for c in w.cards}
                    for op in out.ops:
                        if getattr(op, "old_id", None):
                            mark = "RIGHT" if op.old_id in want else "WRONG"
                            print(f"  {name} {mark} {w.id}: {bodies.get(op.old_id, '?')[:70]!r} -> {op.body[:90]!r}")
        print(split, "threshold", model.threshold, flush=True)
    for name, got in scores.items():
        r = ev.Report(got).as_json()["all"]
        tot = {k: [sum(s.targets[k].tp for s in got), sum(s.targets[k].fp for s in got), sum(s.targets[k].fn for s in got)]
               for k in ("supersede", "supersede_matched")}
        print(name, json.dumps({k: r[k] for k in ("precision", "recall", "f1", "produced", "false_cards",
                                                  "supersede_accuracy", "supersede_matched_accuracy")}), tot, flush=True)
    emb.save()


if __name__ == "__main__":
    main()
