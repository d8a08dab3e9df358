"""Exploration: does a cross-encoder fine-tuned from all-MiniLM-L6-v2 tell a change from continuity?

The change stage's regression (``agent/dream/change.py``) reads MiniLM's *separate* embeddings of
the sentence and the card; "I've been at Lumen for six years though" and "I'm off the grill in río
grande" are both near their card, and the regression cannot tell them apart (BENCHMARKS.md, stop
39). A cross-encoder reads the two texts together. Here MiniLM's transformer gets a one-logit head
and is fine-tuned on the dev windows' labelled pairs (``fit_change.label``), in four folds grouped
by split; the held-out pairs' probabilities go through the same decision and the same scoring as
``change_loso.py``. Nothing here is shipped. About 20 minutes on 2 cores.

    python bench/change_crossencoder.py [--epochs 2] [--negatives 3000] [--folds 4]
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from change_loso import _value, counts
from extract_loso import DiskCachedEmbedder
from memfs.agent.dream import change as CH
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream import fit_change as FC
from memfs.agent.dream import fit_learned as F
from memfs.agent.dream import learned as L
from memfs.agent.dream.devset import dev_windows

from memfs.embed import DEFAULT_MODEL, SentenceTransformerEmbedder, resolve_model


def texts(r: FC.Labelled, i: int, j: int) -> tuple[str, str]:
    s = r.pairs.said[i]
    return ((s.context + " " + s.sentence).strip(), r.pairs.cards[j].body)


def main(argv: Sequence[str]) -> int:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.set_num_threads(2)
    torch.manual_seed(0)
    epochs, n_neg, n_folds = int(_value(argv, "--epochs", "2")), int(_value(argv, "--negatives", "3000")), \
        int(_value(argv, "--folds", "4"))
    emb = DiskCachedEmbedder(SentenceTransformerEmbedder(), Path("/tmp/memfs-loso-embeddings.npz"))
    wins = dev_windows()
    rows = [r for r in FC.labelled(wins, emb) if r.pairs.x.size]
    splits = sorted({r.window.split for r in rows})
    fold_of = {s: k % n_folds for k, s in enumerate(splits)}
    path = resolve_model(DEFAULT_MODEL)
    tok = AutoTokenizer.from_pretrained(path)
    p: dict[str, np.ndarray] = {}
    rng = random.Random(0)
    for k in range(n_folds):
        train = [(r, i, j, int(r.y[i, j])) for r in rows if fold_of[r.window.split] != k
                 for i in range(r.y.shape[0]) for j in range(r.y.shape[1]) if r.y[i, j] >= 0]
        pos = [t for t in train if t[3] == 1]
        neg = [t for t in train if t[3] == 0]
        hard = sorted(neg, key=lambda t: -float(t[0].pairs.x[t[1], t[2], 0]))[: n_neg // 2]
        rest = [t for t in neg if t not in hard] if len(neg) < 20000 else neg[n_neg // 2:]
        chosen = pos + hard + rng.sample(rest, min(len(rest), n_neg - len(hard)))
        rng.shuffle(chosen)
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=1)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-5)
        loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(5.0))
        model.train()
        for _ in range(epochs):
            rng.shuffle(chosen)
            for b in range(0, len(chosen), 16):
                batch = chosen[b:b + 16]
                a, c = zip(*(texts(r, i, j) for r, i, j, _ in batch), strict=True)
                enc = tok(list(a), list(c), truncation=True, max_length=128, padding=True, return_tensors="pt")
                y = torch.tensor([float(t[3]) for t in batch])
                loss = loss_fn(model(**enc).logits.squeeze(-1), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        model.eval()
        with torch.no_grad():
            for r in rows:
                if fold_of[r.window.split] != k:
                    continue
                pairs = [(i, j) for i in range(r.y.shape[0]) for j in range(r.y.shape[1])]
                out = np.zeros(r.y.shape, dtype=np.float32)
                for b in range(0, len(pairs), 64):
                    part = pairs[b:b + 64]
                    a, c = zip(*(texts(r, i, j) for i, j in part), strict=True)
                    enc = tok(list(a), list(c), truncation=True, max_length=128, padding=True, return_tensors="pt")
                    probs = torch.sigmoid(model(**enc).logits.squeeze(-1)).numpy()
                    for (i, j), q in zip(part, probs, strict=True):
                        out[i, j] = q
                p[r.window.id] = out
        print(f"fold {k}: trained on {len(pos)} changes and {len(chosen) - len(pos)} other pairs", flush=True)
    np.savez("/tmp/memfs-change-ce.npz", **p)
    base_extractor = F.with_rules(L.LearnedExtractor(emb))
    base = {w.id: base_extractor(w.messages, w.cards, w.summary, w.now) for w in wins}
    by_id = {r.window.id: r for r in rows}
    print("off", counts(ev.score_extraction(lambda m, *_: lookup0[id(m)], wins))
          if (lookup0 := {id(w.messages): base[w.id] for w in wins}) else "")
    for t in (0.5, 0.7, 0.8, 0.9, 0.95, 0.98):
        done = {w.id: CH.apply(base[w.id], by_id[w.id].pairs, p[w.id], t) if w.id in by_id else base[w.id]
                for w in wins}
        lookup = {id(w.messages): done[w.id] for w in wins}
        print(t, counts(ev.score_extraction(lambda m, *_, lk=lookup: lk[id(m)], wins)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
