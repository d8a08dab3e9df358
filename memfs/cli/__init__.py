"""The ``memfs`` command. The only place a ``MemfsError`` becomes an exit code.

Each command group lives in its own module and registers itself on ``cli``; none of them
imports torch at module level, so ``memfs pin ls`` starts fast.
"""

from __future__ import annotations

import os
import sys

import click

# Command modules register themselves on ``cli`` when imported.
from memfs.cli import cards, history, pair, pins  # noqa: F401
from memfs.cli.common import cli
from memfs.errors import MemfsError

for _optional in ("search", "turn", "dream", "watch", "evals", "demo", "keys", "serve",
                  "worker"):
    try:
        __import__(f"memfs.cli.{_optional}")
    except ModuleNotFoundError as _exc:  # a command group still being written
        if _exc.name != f"memfs.cli.{_optional}":
            raise


def main(argv: list[str] | None = None) -> int:
    """Run the CLI: one clear line and exit 2/1 for known errors; tracebacks for bugs."""
    try:
        result = cli.main(args=argv, prog_name="memfs", standalone_mode=False)
    except MemfsError as exc:
        if os.environ.get("MEMFS_RAISE_ERRORS"):
            raise
        click.echo(f"memfs: error: {exc}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("memfs: aborted", err=True)
        return 1
    except click.UsageError as exc:
        # click's own three lines (Usage / Try / Error) become one, like every bad input.
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        click.echo(f"memfs: error: {exc.format_message()}{where}", err=True)
        return 2
    except click.ClickException as exc:
        click.echo(f"memfs: error: {exc.format_message()}", err=True)
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except KeyboardInterrupt:
        click.echo("memfs: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    return result if isinstance(result, int) else 0


def entry() -> None:
    sys.exit(main())
