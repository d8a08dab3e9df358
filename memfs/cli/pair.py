"""``memfs init`` and ``memfs check``."""

from __future__ import annotations

import click

from memfs import documents
from memfs.cli.common import State, cli, console, pass_state, print_json, warn


@cli.command()
@click.option("--name", "user_name", help="The user's display name, for the persona "
              "(default: none; the user id is not a name).")
@click.option("--character-name", help="The character's display name (default: its id).")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def init(state: State, user_name: str | None, character_name: str | None,
         as_json: bool) -> None:
    """Create the pair repository (running it again changes nothing)."""
    pair = state.pair_handle()
    created = pair.init(user_name=user_name, character_name=character_name)
    if as_json:
        print_json(documents.pair(pair.user, pair.character, str(pair.root), created))
        return
    if created:
        console.print(f"created {pair.root}")
        return
    console.print(f"already exists: {pair.root}")
    if user_name or character_name:
        warn("display names only shape a new pair's persona: edit system/persona.md "
             "(`memfs watch` commits it)")


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
