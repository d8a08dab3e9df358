"""``memfs watch``: commit hand edits as they happen, in the foreground until Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import click

from memfs.cli.common import State, cli, pass_state
from memfs.errors import BadInputError, MemfsError
from memfs.lock import pid_alive
from memfs.watch import ReportCallback, Watcher, WatchReport

STATUS_NAME = "watch-status.json"


@cli.command()
@click.option("--all", "all_pairs", is_flag=True,
              help="Watch every pair under the home, including pairs created later.")
@click.option("--settle", type=click.FloatRange(0.05, 10.0), default=0.3, show_default=True,
              help="Seconds without a file event before a save counts as finished.")
@pass_state
def watch(state: State, all_pairs: bool, settle: float) -> None:
    """Commit hand edits as they happen (as `edit:` commits by user). Ctrl-C stops."""
    if all_pairs:
        base = state.store.home
        base.mkdir(parents=True, exist_ok=True)
        what = f"every pair under {base}"
    else:
        pair = state.pair()
        base = pair.root
        what = f"{pair.user}/{pair.character}"
    status_file = base / ".memfs" / STATUS_NAME
    _refuse_second_watcher(status_file)
    watcher = Watcher([] if all_pairs else [base], home=base if all_pairs else None,
                      settle=settle, on_report=_print_report(base, all_pairs),
                      on_error=_print_error, status_file=status_file)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, _stopper(stop)) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        watcher.start()
        click.echo(f"watching {what} (settle {settle:g}s); Ctrl-C to stop")
        while not stop.wait(0.2):
            watcher.check()
    finally:
        watcher.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    watcher.check()
    click.echo(f"memfs watch: stopped ({watcher.commits} commit"
               f"{'' if watcher.commits == 1 else 's'})")


def _stopper(stop: threading.Event) -> Callable[[int, FrameType | None], None]:
    """First Ctrl-C (or SIGTERM) stops cleanly; a second one interrupts the flush too."""
    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()
        signal.signal(signum, signal.default_int_handler)

    return handler


def _refuse_second_watcher(status_file: Path) -> None:
    """Two watchers on one pair would race each other; a stale status file is replaced."""
    try:
        pid = int(json.loads(status_file.read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    if pid == os.getpid() or not pid_alive(pid):
        return
    raise BadInputError(f"{status_file.parent.parent}: already watched by process {pid} "
                        f"(see {status_file})")


def _print_report(base: Path, all_pairs: bool) -> ReportCallback:
    def report(root: Path, rep: WatchReport) -> None:
        name = root.relative_to(base).as_posix() + ": " if all_pairs else ""
        if rep.commit:
            click.echo(f"committed {rep.commit[:7]} {name}{', '.join(rep.committed)}")
        for problem in rep.problems:
            click.echo(f"not committed: {name}{problem} (file kept as saved; "
                       "fix it and save again)", err=True)

    return report


def _print_error(root: Path, exc: MemfsError) -> None:
    click.echo(f"memfs watch: {root}: {' '.join(str(exc).split())}", err=True)
