"""``memfs log|diff|show|revert``: the history of memory, as git keeps it."""

from __future__ import annotations

import click
from rich.table import Table

from memfs import documents
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
        print_json(documents.log(entries))
        return
    table = Table("commit", "date", "author", "change", box=None)
    for e in entries:
        subject = f"[magenta]☾ {e.subject}[/magenta]" if e.is_dream else e.subject
        table.add_row(e.sha[:10], e.date.strftime("%Y-%m-%d %H:%M"), e.author, subject)
    console.print(table)


@cli.command()
@click.argument("rev", required=False)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def diff(state: State, rev: str | None, as_json: bool) -> None:
    """Uncommitted hand edits, or what REV changed (a dream: the whole dream)."""
    text = state.pair().diff(rev)
    if as_json:
        print_json(documents.diff(rev, text))
    else:
        click.echo(text, nl=False)


@cli.command()
@click.argument("rev")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def show(state: State, rev: str, as_json: bool) -> None:
    """One change: message, files and diff."""
    text = state.pair().show(rev)
    if as_json:
        print_json(documents.show(rev, text))
    else:
        click.echo(text, nl=False)


@cli.command()
@click.argument("rev")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def revert(state: State, rev: str, as_json: bool) -> None:
    """Undo REV with a new commit (a dream merge: the whole dream)."""
    sha = state.pair().revert(rev)
    if as_json:
        print_json(documents.reverted(rev, sha))
    else:
        console.print(f"reverted {rev} as {sha[:10]}")
