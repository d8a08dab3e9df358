"""The change judge without torch at run time: its members on onnxruntime.

The shipped dream embeds on onnxruntime (``memfs.embed_onnx``) and never imports torch; the change
judge (``change.CrossJudge``) as fitted is two fine-tuned MiniLM transformers in torch, and importing
torch made a dream's first judgement take about 4 s (BENCHMARKS.md, stop 39). So, as the embedder
does, the judge is exported to ONNX **once**, with torch, into the models folder beside the
embedder's export, named by the judge file's path, size and time (a new package version gets its
own export); it is checked against the torch judge on probe pairs and moved into place atomically,
under a file lock, with a ``.json`` record of the judge file it came from; a new export removes the
exports of judge files no longer installed (``embed_onnx.prune_stale``), so upgrades do not pile up
182 MB files. From then on a dream judges pairs with ``onnxruntime`` and ``tokenizers`` only.

If the export cannot be made or fails its check, ``judge_for`` falls back to the torch judge (same
probabilities, slower start) and says why in the log.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from memfs.agent.dream.change import MAX_TOKENS, CrossJudge

from memfs.embed import DEFAULT_MODEL, resolve_model
from memfs.embed_onnx import prune_stale

LOG = logging.getLogger("memfs.dream")
PREFIX = "change-judge"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
MAX_DIFF = 1e-4
"""The export's probabilities may differ from torch's by at most this much on the probes."""
_PROBES = (("handed back my keys at the depot today, 9 years done", "The user works as a bus driver."),
           ("my sister moved to lisbon", "The user lives in Porto."),
           ("we're done. i moved my stuff out on sunday " * 12, "The user's girlfriend is Mara."))


class JudgeExportError(RuntimeError):
    """The ONNX file could not be made (or did not match the torch judge)."""


def judge_file(cache_dir: Path, judge_path: Path) -> Path:
    st = judge_path.stat()
    stamp = hashlib.sha256(f"{judge_path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode())
    return cache_dir / f"{PREFIX}-{stamp.hexdigest()[:12]}.onnx"


class OnnxJudge:
    """p(change) for (sentence, card) pairs from an exported judge; the members' mean is in the graph."""

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.path = path
        self.tokenizer = Tokenizer.from_file(str(Path(resolve_model(DEFAULT_MODEL)) / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS, strategy="longest_first")
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def available(self) -> bool:
        return True

    def __call__(self, said: Sequence[str], cards: Sequence[str]) -> np.ndarray:
        if not said:
            return np.zeros(0, dtype=np.float32)
        out = []
        for b in range(0, len(said), 64):
            encodings = self.tokenizer.encode_batch(list(zip(said[b:b + 64], cards[b:b + 64], strict=True)))
            width = max(len(e.ids) for e in encodings)
            feed = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUTS}
            for row, enc in enumerate(encodings):
                n = len(enc.ids)
                feed["input_ids"][row, :n] = enc.ids
                feed["attention_mask"][row, :n] = enc.attention_mask
                feed["token_type_ids"][row, :n] = enc.type_ids
            out.append(self.session.run(None, feed)[0])
        return np.concatenate(out).astype(np.float32)


def judge_for(judge_path: Path, cache_dir: Path) -> OnnxJudge | CrossJudge:
    """The judge in ``judge_path`` on onnxruntime, exported into ``cache_dir`` on first use; the
    torch judge if the export cannot be made."""
    target = judge_file(cache_dir, judge_path)
    try:
        if not target.exists():
            export(CrossJudge(judge_path), target)
        return OnnxJudge(target)
    except Exception as exc:  # torch or onnxruntime missing, an exporter change: say so, fall back
        LOG.warning("change judge on torch (no ONNX export: %s)", exc)
        return CrossJudge(judge_path)


def export(judge: CrossJudge, target: Path) -> None:
    """Export the judge's members and their mean with torch (once), check it, then move it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / ".export.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits, then finds the file
        if target.exists():
            return
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp_record = tmp.with_suffix(".json")
        try:
            _export(judge, tmp)
            _check(judge, tmp)
            st = judge.path.stat()
            tmp_record.write_text(json.dumps({"weights": str(judge.path.resolve()), "size": st.st_size,
                                              "mtime_ns": st.st_mtime_ns}), encoding="utf-8")
            os.replace(tmp_record, target.with_suffix(".json"))
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
            tmp_record.unlink(missing_ok=True)
        removed = prune_stale(target.parent, keep=target, prefix=PREFIX)
    LOG.info("exported the change judge to %s", target)
    if removed:
        LOG.info("removed %d change judge export(s) of a judge no longer installed", len(removed))


def _export(judge: CrossJudge, tmp: Path) -> None:
    import torch

    members = judge.members()

    class Mean(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.members = torch.nn.ModuleList(members)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            probs = [torch.sigmoid(m(input_ids=input_ids, attention_mask=attention_mask,
                                     token_type_ids=token_type_ids).logits.squeeze(-1)) for m in self.members]
            return torch.stack(probs).mean(dim=0)

    for m in members:
        m.config._attn_implementation = "eager"  # the tracer's path; sdpa gives the same numbers
    example = tuple(torch.ones(2, 8, dtype=torch.long) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"p": {0: "batch"}}
    # export() puts a module back in the mode it found it in: a new module is in training mode, and
    # would leave the members' dropout on for the check below
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes: checked below
        torch.onnx.export(Mean().eval(), example, str(tmp), input_names=list(INPUTS), output_names=["p"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)


def _check(judge: CrossJudge, tmp: Path) -> None:
    said, cards = [s for s, _ in _PROBES], [c for _, c in _PROBES]
    worst = float(np.max(np.abs(judge(said, cards) - OnnxJudge(tmp)(said, cards))))
    if worst > MAX_DIFF:
        raise JudgeExportError(f"the ONNX export of the change judge differs from torch's ({worst:.2e} > {MAX_DIFF})")
