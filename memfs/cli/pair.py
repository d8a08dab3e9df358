"""``memfs init`` and ``memfs check``."""

from __future__ import annotations

import click

from memfs import documents
from memfs.cli.common import State, cli, console, pass_state, print_json


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@pass_state
def init(state: State, as_json: bool) -> None:
    """Create the pair repository (running it again changes nothing)."""
    pair = state.pair_handle()
    created = pair.init()
    if as_json:
        print_json(documents.pair(pair.user, pair.character, str(pair.root), created))
        return
    verb = "created" if created else "already exists:"
    console.print(f"{verb} {pair.root}")


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON.")
@pass_state
def check(state: State, as_json: bool) -> None:
    """Validate every file; exit 1 if any problem is found."""
    pair = state.pair()
    problems = pair.check()
    if as_json:
        print_json(documents.check(problems))
    else:
        for problem in problems:
            click.echo(f"{problem.path}: {problem.reason}")
        if not problems:
            console.print(f"ok: {pair.root} is valid")
    if problems:
        raise click.exceptions.Exit(1)
