"""Stop 40, x-chg2 (and stop 41): the change judge's file, its mean of members, and its run without torch.

The judges here are MiniLM with differently seeded heads and nudged weights, not fits: these tests
are about what the file keeps and what a dream process loads, not about judging well (that is
BENCHMARKS.md's dev estimate). The sentences are written for this file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

SAID = ["handed back my keys at the depot today, nine years done", "the depot got new buses, finally some AC",
        "moving in with tomas next month eek"]
CARDS = ["The user works as a bus driver.", "The user works as a bus driver.", "The user lives alone in Porto."]


def _members() -> list[Any]:
    import torch
    from transformers import AutoModelForSequenceClassification

    from memfs.embed import DEFAULT_MODEL, resolve_model

    out = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        model = AutoModelForSequenceClassification.from_pretrained(resolve_model(DEFAULT_MODEL), num_labels=1)
        with torch.no_grad():
            for name, value in model.named_parameters():
                if "layer.5" in name:
                    value.add_(0.01 * torch.randn_like(value))
        out.append(model.eval())
    return out


@pytest.fixture(scope="module")
def judge_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray, list[np.ndarray]]:
    """A two-member judge saved as the fit saves it, with what each member and their mean said in memory."""
    from memfs.agent.dream.change import CrossJudge
    from memfs.agent.dream.fit_change import save_judge

    members = _members()
    path = tmp_path_factory.mktemp("judge") / "change_judge.npz"
    save_judge(members, path)
    return path, CrossJudge(models=members)(SAID, CARDS), [CrossJudge(model=m)(SAID, CARDS) for m in members]


@pytest.mark.model
def test_the_saved_judge_is_the_mean_of_its_members_as_fitted(judge_file: tuple[Path, np.ndarray, list[np.ndarray]]
                                                              ) -> None:
    from memfs.agent.dream.change import CrossJudge

    path, mean, each = judge_file
    assert not np.allclose(each[0], each[1], atol=1e-3)  # two members that differ, so the mean is a mean
    assert np.allclose(mean, (each[0] + each[1]) / 2, atol=1e-6)
    loaded = CrossJudge(path)
    assert len(loaded.members()) == 2
    assert np.allclose(loaded(SAID, CARDS), mean, atol=1e-4)  # int8 differences, one scale per tensor


@pytest.mark.model
def test_the_onnx_judge_gives_the_torch_judges_probabilities_and_is_exported_once(
        judge_file: tuple[Path, np.ndarray, list[np.ndarray]], tmp_path: Path) -> None:
    from memfs.agent.dream.judge_onnx import OnnxJudge, judge_for

    path, mean, _ = judge_file
    judge = judge_for(path, tmp_path / "models")
    assert isinstance(judge, OnnxJudge)
    assert np.allclose(judge(SAID, CARDS), mean, atol=1e-4)
    made = judge.path.stat().st_mtime_ns
    assert judge_for(path, tmp_path / "models").path.stat().st_mtime_ns == made
    assert [p.name for p in (tmp_path / "models").iterdir() if p.suffix == ".tmp"] == []
    assert judge.path.with_suffix(".json").exists()  # the record a later export prunes by


def test_a_new_judge_export_removes_the_export_of_a_judge_no_longer_installed(tmp_path: Path) -> None:
    """A package upgrade ships a new judge file: the old 182 MB export must not stay behind."""
    import json

    from memfs.agent.dream.judge_onnx import PREFIX

    from memfs.embed_onnx import prune_stale

    models = tmp_path / "models"
    models.mkdir()
    gone, kept, mine = (models / f"{PREFIX}-{n}.onnx" for n in ("aaa", "bbb", "ccc"))
    judge = tmp_path / "judge.npz"
    judge.write_bytes(b"x")
    st = judge.stat()
    for onnx, weights in ((gone, tmp_path / "old.npz"), (kept, judge), (mine, judge)):
        onnx.write_bytes(b"onnx")
        onnx.with_suffix(".json").write_text(json.dumps({"weights": str(weights), "size": st.st_size,
                                                         "mtime_ns": st.st_mtime_ns}))
    embedder = models / "all-MiniLM-L6-v2-ddd.onnx"
    embedder.write_bytes(b"onnx")
    embedder.with_suffix(".json").write_text(json.dumps({"weights": str(tmp_path / "old.npz"), "size": 1,
                                                         "mtime_ns": 1}))
    assert prune_stale(models, keep=mine, prefix=PREFIX) == [gone]
    assert sorted(p.name for p in models.iterdir() if p.suffix == ".onnx") == [
        "all-MiniLM-L6-v2-ddd.onnx", kept.name, mine.name]  # another prefix's exports are not the judge's


@pytest.mark.model
def test_a_dream_process_judges_changes_without_importing_torch(
        judge_file: tuple[Path, np.ndarray, list[np.ndarray]], tmp_path: Path, real_embedder: Any) -> None:
    """The shipped dream embeds without torch; the change stage must not bring it back, even through
    the wrappers a dream's embedder comes in (stop 41: the first flag judge missed them and loaded
    torch in every dream)."""
    from memfs.agent.dream.judge_onnx import judge_for

    path, _, _ = judge_file
    models = tmp_path / "models"
    models.mkdir()
    (models / real_embedder.path.name).symlink_to(real_embedder.path)
    judge_for(path, models)  # the one export, as a dream's first window would make it
    code = f"""
import datetime as dt, sys
from pathlib import Path
from memfs.agent.dream import change
from memfs.agent.dream.ops import Extraction, WriteOp
from memfs.cards import Card, Source
from memfs.embed import resolve_model, DEFAULT_MODEL
from memfs.embed_onnx import OnnxEmbedder
from memfs.history import Message
change.JUDGE_PATH = Path({str(path)!r})
from memfs.embed_memo import RecentEmbedder
embedder = RecentEmbedder(OnnxEmbedder(Path({str(models / real_embedder.path.name)!r}), Path(resolve_model(DEFAULT_MODEL))))
ts = dt.datetime(2027, 5, 3, 18, 0, tzinfo=dt.UTC)
job = Card(id="c-job001", type="fact", body="The user works as a bus driver.", entities=("user",),
           created=ts - dt.timedelta(days=40), salience=0.7, source=Source("s-0", (2,)))
window = [Message("s-1", 0, "user", "i quit my job as a bus driver today", ts)]
own = WriteOp(type="fact", body="The user quit their job as a bus driver.", entities=("user",), turns=(0,), session="s-1")
done = change.with_flags(Extraction("", [own]), window, [job], embedder, threshold=0.0)
print(type(change.shipped_judge(embedder)).__name__, [type(op).__name__ for op in done.ops],
      done.ops[-1].id, "torch" in sys.modules)
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env=env,
                         cwd=tmp_path)
    assert run.stdout.split() == ["OnnxJudge", "['WriteOp',", "'FlagOp']", "c-job001", "False"], run.stderr[-2000:]
