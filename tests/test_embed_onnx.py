"""The default embedder on onnxruntime gives sentence-transformers' vectors, and a process
that embeds with it never imports torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memfs.embed import DEFAULT_MODEL, Embedder, SentenceTransformerEmbedder, default_embedder
from memfs.embed_onnx import OnnxEmbedder

TEXTS = [
    "", "ok", "Hello there!", "I'm allergic to peanuts, so no satay please.",
    "The user's meeting with Lin moved from Thursday to Friday 3 pm.",
    "Grandad had a fall on Sunday and he's in St Mary's hospital; we're all scared.",
    "emoji 🐶🎉 and RTL עברית, accents: café, naïve, Zürich, 東京タワー",
    "def add(a, b):\n    return a + b  # code in a message",
    "2026-11-05T09:12:00Z, +44 20 7946 0958, £12.50, 3.14159, v1.2.3",
    "WHY IS EVERYTHING IN CAPITALS TODAY", "line one\nline two\r\nline three\tand a tab",
    "A long message that goes on and on about the garden, the weather and the neighbours' "
    "cat, which keeps digging up the tulips. " * 30,  # past the 256-token truncation
]


@pytest.mark.model
def test_onnx_vectors_match_sentence_transformers(real_embedder: Embedder) -> None:
    assert isinstance(real_embedder, OnnxEmbedder), "the default model runs on onnxruntime"
    reference = SentenceTransformerEmbedder().embed(TEXTS)
    batch = real_embedder.embed(TEXTS)
    one_by_one = np.vstack([real_embedder.embed([t]) for t in TEXTS])
    cosines = np.sum(reference * batch, axis=1)
    assert cosines.min() >= 0.999, dict(zip(TEXTS, cosines.round(5)))
    assert np.allclose(batch, one_by_one, atol=1e-5), "padding in a batch changes nothing"
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert real_embedder.name == DEFAULT_MODEL == SentenceTransformerEmbedder.__init__.__defaults__[0]


@pytest.mark.model
def test_a_process_that_embeds_never_imports_torch(real_embedder: Embedder, models_dir: Path) -> None:
    code = ("import sys\nfrom pathlib import Path\nfrom memfs.embed import default_embedder\n"
            f"e = default_embedder(cache_dir=Path({str(models_dir)!r}))\n"
            "v = e.embed(['hello'])\n"
            "print(type(e).__name__, v.shape, 'torch' in sys.modules,"
            " 'sentence_transformers' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.split() == ["OnnxEmbedder", "(1,", "384)", "False", "False"], done.stderr


def test_an_export_that_cannot_be_made_falls_back_to_sentence_transformers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memfs import embed, embed_onnx

    def no_export(model_dir: Path, target: Path) -> None:
        raise embed_onnx.ExportError("cannot export all-MiniLM-L6-v2 to ONNX: no torch here")

    class Fallback:
        def __init__(self, name: str) -> None:
            self.name, self.dim = name, 384

    monkeypatch.setattr(embed_onnx, "export", no_export)
    monkeypatch.setattr(embed, "SentenceTransformerEmbedder", Fallback)
    chosen = default_embedder(cache_dir=tmp_path / "empty")
    assert isinstance(chosen, Fallback) and chosen.name == DEFAULT_MODEL
    assert not list((tmp_path / "empty").glob("*.onnx")), "no half-written model is left"


def _weights(root: Path, size: int) -> Path:
    root.mkdir(parents=True)
    (root / "model.safetensors").write_bytes(b"w" * size)
    return root


def test_a_new_export_removes_the_exports_of_weights_no_longer_installed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every package version and every venv gets its own ~90 MB export; a machine here had 52
    (4.4 GB). A new export removes those whose weights are gone or changed, and keeps the export
    of another install that still exists and any export made before the record did."""
    from memfs import embed_onnx

    monkeypatch.setattr(embed_onnx, "_export", lambda model_dir, tmp: tmp.write_bytes(b"onnx"))
    monkeypatch.setattr(embed_onnx, "_check", lambda model_dir, tmp: None)
    models = tmp_path / "models"
    old, other, new = (_weights(tmp_path / name, size) for name, size in (("old", 10), ("other", 11), ("new", 12)))
    exports = {}
    for name, weights in (("old", old), ("other", other)):
        exports[name] = embed_onnx.model_file(models, weights)
        embed_onnx.export(weights, exports[name])
    legacy = models / f"{DEFAULT_MODEL}-000000000000.onnx"
    legacy.write_bytes(b"made before the record")
    (old / "model.safetensors").write_bytes(b"w" * 13)  # the package upgraded in place
    exports["new"] = embed_onnx.model_file(models, new)
    embed_onnx.export(new, exports["new"])
    assert not exports["old"].exists() and not exports["old"].with_suffix(".json").exists()
    assert exports["other"].exists() and exports["new"].exists() and legacy.exists()
    (other / "model.safetensors").unlink()  # that venv deleted
    assert embed_onnx.prune_stale(models, keep=exports["new"]) == [exports["other"]]
    assert sorted(p.name for p in models.iterdir() if not p.name.startswith(".")) == sorted(
        [exports["new"].name, exports["new"].with_suffix(".json").name, legacy.name])
