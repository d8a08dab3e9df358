"""The git hooks installed in every pair repository, and what they run.

A person may commit by hand; dreaming commits in a worktree. Both go through these hooks,
so a malformed card or a dream that touches ``system/`` is refused no matter who commits.
``pre-commit`` checks ordinary commits; ``pre-merge-commit`` checks the dream's merge.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from memfs.atomic import atomic_write

HOOKS = ("pre-commit", "pre-merge-commit")
MARKER = "# memfs hook v2"
OURS = "# memfs hook v"
"""Any version of our hook (refreshed on open); a hook without it is the user's own."""
DREAM_AUTHOR = "memfs-dream"
NOT_SYSTEM = (DREAM_AUTHOR, "agent")

_SCRIPT = """#!/bin/sh
{marker}: validates memory files; see `memfs check`.
# One Python per commit: it runs the check, or exits 97 when memfs is not importable there.
for PY in {python} python3; do
  command -v "$PY" >/dev/null 2>&1 || continue
  "$PY" -c 'import sys
try:
    from memfs.hooks import main
except ImportError:
    sys.exit(97)
sys.exit(main(sys.argv[1:]))' {hook}
  rc=$?
  [ "$rc" -eq 97 ] || exit "$rc"
done
echo "memfs: cannot run the memfs check (memfs is not importable); commit refused" >&2
exit 1
"""


def install(git_dir: Path) -> None:
    """Write (or refresh) the hooks; leaves a hook that is not ours alone."""
    hook_dir = git_dir / "hooks"
    hook_dir.mkdir(parents=True, exist_ok=True)
    for hook in HOOKS:
        path = hook_dir / hook
        text = _SCRIPT.format(marker=MARKER, python=shlex.quote(sys.executable), hook=hook)
        if path.exists():
            current = path.read_text(errors="replace")
            if current == text or OURS not in current:
                continue
        atomic_write(path, text)
        path.chmod(0o755)


def staged_problems(cwd: Path) -> list[str]:
    """What is wrong with the commit being made in ``cwd`` (empty list: allow it)."""
    author = _author(cwd)
    changed = _git(cwd, "diff", "--cached", "--name-status", "--no-renames", "-z").split("\0")
    pairs = list(zip(changed[0::2], changed[1::2]))
    problems: list[str] = []
    if author in NOT_SYSTEM:
        who = "dreaming" if author == DREAM_AUTHOR else "the agent"
        problems += [f"{path}: {who} may not change system/ (it is the user's)"
                     for _, path in pairs if path.startswith("system/")]
    from memfs.check import validate_file

    for status, path in pairs:
        if status.startswith("D"):
            continue
        blob = subprocess.run(["git", "show", f":{path}"], cwd=cwd, capture_output=True,
                              check=False).stdout
        problems += [str(p) for p in validate_file(path, blob)]
    return problems


def _author(cwd: Path) -> str:
    name = os.environ.get("GIT_AUTHOR_NAME")
    if name:
        return name
    ident = _git(cwd, "var", "GIT_AUTHOR_IDENT")
    return ident.rsplit("<", 1)[0].strip()


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=False).stdout


def main(argv: list[str]) -> int:
    problems = staged_problems(Path.cwd())
    for problem in problems:
        print(f"memfs: {problem}", file=sys.stderr)
    if problems:
        hook = argv[0] if argv else "pre-commit"
        print(f"memfs: {hook} refused the commit ({len(problems)} problem(s))", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
