"""Fit the change judge (``change.CrossJudge``) on the dev windows and the change banks.

A dev window names the cards its conversation makes untrue (``expected.supersede``) and the cards
a dream should write (``expected.cards``), but not which sentence tells which change. A pair
(sentence, old card) is labelled a change when the old card is expected to be replaced and the
card written from the sentence matches a reference card of a compatible type; of several such
sentences, the one nearest the old card is the positive. The window's other sentences against that
card are left out (they may tease the change: "guess who quit"). Every other pair is a negative:
talk about the same job, home or partner that changes nothing, and other people's changes.

Beside them, ``data/change_bank_*.jsonl``: (card, sentence, change?) pairs that helpers wrote from
imagination at stops 39 (a-d) and 40 (e-h) (changes told sideways, continuity talk that names the card or uses change
words, other people's changes, hypotheticals); no blind split was read to write them.

And ``data/change_chat.jsonl`` (stop 41, x-flag3): every (sentence, card) pair the stage judged while six spent
profile sets were replayed at 1,600 messages, all *no change*. Fit on the change-dense pairs alone, the judge gave
ordinary chat 0.95-0.98 and flagged about 17 unchanged cards per 1,600-message conversation
(``bench/flag_base_rate.py``); these pairs show it what most chat is. The dev windows of ``HELD_OUT`` are left out
of the fit: the operating point is chosen on them.

    python -m memfs.agent.dream.fit_change          # fit each seed on every dev window + the banks, write data/change_judge.npz
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream.cardtext import write_body
from memfs.agent.dream.change import JUDGE_PATH, MAX_TOKENS, Nearby, nearby
from memfs.agent.dream.dates import find_date
from memfs.agent.dream.ops import WriteOp

from memfs.embed import DEFAULT_MODEL, Embedder, resolve_model

EPOCHS = 2
NEGATIVES = 3000
"""Other dev pairs per fit: half the nearest (talk about the card), half drawn at random."""
POS_WEIGHT = 5.0
LEARNING_RATE = 3e-5
BANKS = JUDGE_PATH.parent
SEEDS = (0, 1)
"""The judge's members: one fine-tune per seed, their probabilities averaged."""
CHAT = JUDGE_PATH.parent / "change_chat.jsonl"
HELD_OUT = frozenset({"blind35", "blind36", "blind37"})
"""Dev splits the shipped judge is not fit on: its flag threshold and floor are chosen on them (stop 41)."""


@dataclass
class Labelled:
    """One window's pairs and their labels: 1 change, 0 not, -1 left out."""

    window: ev.EvalWindow
    found: Nearby
    y: np.ndarray


def _tells(body: str, card_type: str, window: ev.EvalWindow) -> bool:
    op = WriteOp(type=card_type, body=body, entities=("user",))
    return any(ev.card_matches(op, ref) for ref in window.expected["cards"])


def label(window: ev.EvalWindow, found: Nearby) -> np.ndarray:
    y = np.zeros(found.sims.shape, dtype=np.int8)
    want = set(window.expected.get("supersede", []))
    bodies = [write_body(s.sentence, find_date(s.sentence, s.msg.ts.date()), s.context) for s in found.said]
    for j, card in enumerate(found.cards):
        if card.id not in want:
            continue
        tells = [i for i, body in enumerate(bodies) if _tells(body, card.type, window)]
        if not tells:
            continue
        y[:, j] = -1
        y[max(tells, key=lambda i: float(found.sims[i, j])), j] = 1
    return y


def labelled(windows: Sequence[ev.EvalWindow], embedder: Embedder) -> list[Labelled]:
    out = []
    for w in windows:
        found = nearby(w.messages, w.cards, embedder)
        out.append(Labelled(w, found, label(w, found)))
    return out


def dev_items(rows: Sequence[Labelled], negatives: int = NEGATIVES, seed: int = 0) -> list[tuple[str, str, int]]:
    """(sentence, card, change?) from the dev pairs: every change, and ``negatives`` other pairs."""
    rng = random.Random(seed)
    found = [(r, i, j, int(r.y[i, j])) for r in rows for i in range(r.y.shape[0]) for j in range(r.y.shape[1])
             if r.y[i, j] >= 0]
    pos = [t for t in found if t[3] == 1]
    neg = sorted((t for t in found if t[3] == 0), key=lambda t: -float(t[0].found.sims[t[1], t[2]]))
    hard, rest = neg[: negatives // 2], neg[negatives // 2:]
    chosen = pos + hard + rng.sample(rest, min(len(rest), negatives - len(hard)))
    return [(r.found.said[i].text, r.found.cards[j].body, y) for r, i, j, y in chosen]


def bank_items(folder: Path = BANKS, chat: Path | None = CHAT) -> list[tuple[str, str, int]]:
    """(sentence, card, change?) from ``change_bank_*.jsonl`` and the ordinary-chat pairs of ``chat``."""
    out = []
    for path in [*sorted(folder.glob("change_bank_*.jsonl")), *([chat] if chat is not None and chat.exists() else [])]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.append((row["said"], row["card"], int(bool(row["change"]))))
    return out


def fit_judge(items: Sequence[tuple[str, str, int]], epochs: int = EPOCHS, seed: int = 0) -> Any:
    """MiniLM's transformer with a one-logit head, fine-tuned on ``items``."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    rng = random.Random(seed)
    base = resolve_model(DEFAULT_MODEL)
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
    opt = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(POS_WEIGHT))
    data = list(items)
    model.train()
    for _ in range(epochs):
        rng.shuffle(data)
        for b in range(0, len(data), 16):
            batch = data[b:b + 16]
            enc = tok([t[0] for t in batch], [t[1] for t in batch], truncation=True, max_length=MAX_TOKENS, padding=True,
                      return_tensors="pt")
            loss = loss_fn(model(**enc).logits.squeeze(-1), torch.tensor([float(t[2]) for t in batch]))
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    return model


def save_judge(models: Sequence[Any], path: Path = JUDGE_PATH) -> None:
    """Each member's fine-tuned weights as int8 differences from the packaged MiniLM's (one scale per
    tensor) and its new head in full, keyed ``<member>/...``: a few MB per member in the wheel
    instead of a second 90 MB model."""
    from transformers import AutoModelForSequenceClassification

    base = AutoModelForSequenceClassification.from_pretrained(resolve_model(DEFAULT_MODEL), num_labels=1).state_dict()
    out: dict[str, np.ndarray] = {}
    for k, model in enumerate(models):
        for name, tensor in model.state_dict().items():
            value = tensor.detach().float().numpy()
            if name.startswith("classifier."):
                out[f"{k}/full:{name}"] = value.astype(np.float32)
                continue
            delta = value - base[name].float().numpy()
            scale = float(np.abs(delta).max()) / 127.0
            if scale == 0.0:
                continue
            out[f"{k}/q:{name}"] = np.round(delta / scale).astype(np.int8)
            out[f"{k}/s:{name}"] = np.array(scale, dtype=np.float32)
    tmp = path.with_name(f".{path.stem}.tmp.npz")
    np.savez_compressed(tmp, **out)  # type: ignore[arg-type]
    tmp.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    from memfs.agent.dream.devset import dev_windows

    from memfs.embed import SentenceTransformerEmbedder

    del argv
    rows = labelled([w for w in dev_windows() if w.split not in HELD_OUT], SentenceTransformerEmbedder())
    models = []
    for seed in SEEDS:
        items = dev_items(rows, seed=seed) + bank_items()
        models.append(fit_judge(items, seed=seed))
        print(f"seed {seed}: fit on {len(items)} pairs, {sum(t[2] for t in items)} changes", flush=True)
    save_judge(models)
    print(f"wrote {JUDGE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
