"""``memfs log|diff|show|revert``: the history of memory, as git keeps it."""

from __future__ import annotations

import click
from rich.table import Table

from memfs.cli.common import State, cli, console, pass_state, print_json


@cli.command("log")
@click.option("-n", "number", type=int, default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.option("--author", help="Only commits by this author (user, memfs-dream, agent).")
@pass_state
def log_cmd(state: State, number: int, as_json: bool, author: str | None) -> None:
    """Changes to memory, newest first; dream merges are marked."""
    entries = state.pair().log(number, author=author)
    if as_json:
        print_json({"commits": [e.to_json() for e in entries]})
        return
    table = Table("commit", "date", "author", "change", box=None)
    for e in entries:
        subject = f"[magenta]☾ {e.subject}[/magenta]" if e.is_dream else e.subject
        table.add_row(e.sha[:10], e.date.strftime("%Y-%m-%d %H:%M"), e.author, subject)
    console.print(table)


@cli.command()
@click.argument("rev", required=False)
@pass_state
def diff(state: State, rev: str | None) -> None:
    """Uncommitted hand edits, or what REV changed (a dream: the whole dream)."""
    click.echo(state.pair().diff(rev), nl=False)


@cli.command()
@click.argument("rev")
@pass_state
def show(state: State, rev: str) -> None:
    """One change: message, files and diff."""
    click.echo(state.pair().show(rev), nl=False)


@cli.command()
@click.argument("rev")
@pass_state
def revert(state: State, rev: str) -> None:
    """Undo REV with a new commit (a dream merge: the whole dream)."""
    sha = state.pair().revert(rev)
    console.print(f"reverted {rev} as {sha[:10]}")
