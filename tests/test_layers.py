"""The layers are a contract the suite checks: storage never reaches up into the agent.

import-linter reads the installed layout (``agent/...``), which a source checkout
does not have on disk (``agent/`` sits at the top and is mapped at install time), so the
test assembles that layout in a temporary folder, exactly as the wheel does, and lints it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def _installed_layout(dest: Path) -> Path:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from installed_layout import assemble
    finally:
        sys.path.pop(0)
    return assemble(dest)


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT), str(ROOT / "pyproject.toml")], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _installed_layout(tmp_path_factory.mktemp("layout"))


def test_the_layer_contract_holds(layout: Path) -> None:
    result = _lint(layout)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 kept, 0 broken" in result.stdout


def test_an_arrow_back_up_breaks_it_even_inside_a_function(tmp_path: Path) -> None:
    tree = _installed_layout(tmp_path)
    with (tree / "memfs" / "cards.py").open("a") as handle:
        handle.write("\n\ndef _reach_up():\n    from memfs.agent import plan\n\n    return plan\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "memfs.cards -> memfs.agent.plan" in result.stdout


def test_a_module_without_a_layer_breaks_it(tmp_path: Path) -> None:
    tree = _installed_layout(tmp_path)
    (tree / "memfs" / "stray.py").write_text('"""A module nobody placed."""\n')
    assert _lint(tree).returncode != 0


def test_import_memfs_loads_neither_torch_nor_the_agent_layer() -> None:
    code = ("import sys, memfs; from memfs import MemoryStore, MemoryPair, Card; "
            "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('memfs.agent')"
            " or m == 'agent'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT.parent)
    assert out.stdout.strip() == "[]"


def test_nothing_named_agent_is_importable_at_the_top() -> None:
    result = subprocess.run([sys.executable, "-c", "import agent"], capture_output=True,
                            text=True, cwd="/")
    assert result.returncode != 0 and "No module named 'agent'" in result.stderr
