"""Stop 37, x-lab's dev gate: the learned extractor refit with the new labels, scored out of sample.

    python bench/extract_labels.py                       # fit A (84 windows), blind12-28, thresholds
    python bench/extract_labels.py --more                # fit B (84 + blind12-20) beside A on blind21-28

The offline extractor (strict rules + learned, ``fit_learned.with_rules``: the product's path)
with main's shipped ``data/learned.npz`` is scored beside each fit on the same windows, in the
same process. The spent windows are never fit on (A), or only blind12-20 are (B). Embeddings are
cached on disk (``extract_loso.DiskCachedEmbedder``)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream import fit_learned as F
from memfs.agent.dream.devset import dev_windows
from memfs.agent.dream.learned import LearnedExtractor, Model

sys.path.insert(0, str(Path(__file__).parent))
from extract_loso import DiskCachedEmbedder  # noqa: E402

from memfs.embed import SentenceTransformerEmbedder  # noqa: E402

THRESHOLDS = (0.60, 0.65, 0.70, 0.75, 0.80)


def _line(name: str, report: ev.Report) -> dict[str, object]:
    whole = report.as_json()["all"]
    row = {"fit": name, **{k: whole[k] for k in ("precision", "recall", "f1", "produced", "reference", "false_cards")}}
    print(json.dumps(row), flush=True)
    return row


def main(argv: list[str]) -> int:
    embedder = DiskCachedEmbedder(SentenceTransformerEmbedder(), Path("/tmp/memfs-loso-embeddings.npz"))
    windows = dev_windows()
    first = [w for w in windows if w.split in F.FIT_SPLITS]
    late = [f"blind{n}" for n in range(12, 29)]
    bank = F.bank_rows(embedder)
    runs: list[tuple[str, list[ev.EvalWindow], list[ev.EvalWindow], tuple[float, ...]]] = []
    if "--more" in argv:
        t = float(argv[argv.index("--threshold") + 1])
        test = [w for w in windows if w.split in late[9:]]
        runs += [("A", first, test, (t,)), ("B", first + [w for w in windows if w.split in late[:9]], test, (t,))]
    else:
        runs += [("A", first, [w for w in windows if w.split in late], THRESHOLDS)]
    for name, train, test, thresholds in runs:
        if name == runs[0][0]:
            _line("main (shipped file)", ev.score_extraction(F.with_rules(LearnedExtractor(embedder)), test))
        x, y, weight, _ = F.training_set(train, embedder)
        model = F.fit_model(x, y, weight, thresholds[0], F.SHIPPED, bank)
        embedder.save()
        for t in thresholds:
            m: Model = replace(model, threshold=t)
            _line(f"{name} at {t}", ev.score_extraction(F.with_rules(LearnedExtractor(embedder, m)), test))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
