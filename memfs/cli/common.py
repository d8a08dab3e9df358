"""What every command shares: the root group, its options, the pair it names, output."""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from memfs.app import MemoryStore
from memfs.config import Config, load_config
from memfs.errors import BadInputError
from memfs.store import MemoryPair


@dataclass
class State:
    config: Config
    _store: MemoryStore | None = None

    @property
    def store(self) -> MemoryStore:
        if self._store is None:
            self._store = MemoryStore(self.config.home, config=self.config)
        return self._store

    def pair_handle(self) -> MemoryPair:
        """The pair named by -u/-c (or $MEMFS_USER/$MEMFS_CHARACTER), not yet opened."""
        if self.config.user is None or self.config.character is None:
            raise BadInputError("which pair? give -u USER -c CHARACTER "
                                "(or set MEMFS_USER and MEMFS_CHARACTER)")
        return self.store.pair(self.config.user, self.config.character, create=False)

    def pair(self) -> MemoryPair:
        """The named pair, which must exist (NotARepoError says to run init)."""
        pair = self.pair_handle()
        _ = pair.repo
        return pair


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", type=click.Path(file_okay=False), help="Memory home (default $MEMFS_HOME or ~/.memfs).")
@click.option("-u", "--user", help="User id (default $MEMFS_USER).")
@click.option("-c", "--character", help="Character id (default $MEMFS_CHARACTER).")
@click.pass_context
def cli(ctx: click.Context, home: str | None, user: str | None, character: str | None) -> None:
    """memfs: long-term memory for AI companions, as git repositories of Markdown."""
    config = load_config(home=home).with_(user=user, character=character)
    ctx.obj = State(config)
    _show_library_warnings()


pass_state = click.make_pass_decorator(State)

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(data: Any) -> None:
    """One JSON document on stdout (the --json contract)."""
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def warn(text: str) -> None:
    err_console.print(f"[yellow]warning:[/yellow] {text}")


class _WarningLines(logging.Handler):
    """The library's warnings (a dream queue it could not reach) as ``warning:`` lines."""

    def emit(self, record: logging.LogRecord) -> None:
        warn(escape(record.getMessage()))


def _show_library_warnings() -> None:
    logger = logging.getLogger("memfs.queue")
    if not any(isinstance(h, _WarningLines) for h in logger.handlers):
        logger.addHandler(_WarningLines(logging.WARNING))


def warn_uncommitted(pair: MemoryPair, *paths: str) -> None:
    """One line when what is shown (committed HEAD) is not what is on disk."""
    changed = pair.uncommitted(*paths)
    if changed:
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        warn(f"uncommitted hand edit(s) in {shown}: shown is the committed version, what "
             "the model sees (`memfs diff` shows the edit; `memfs watch` or `memfs check` "
             "tells if it is valid)")


def short(text: str, width: int = 70) -> str:
    """One line of at most ``width`` characters, for tables."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
