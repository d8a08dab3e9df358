"""``memfs init`` and ``memfs check``."""

from __future__ import annotations

import click

from memfs.cli.common import State, cli, console, pass_state, print_json


@cli.command()
@pass_state
def init(state: State) -> None:
    """Create the pair repository (running it again changes nothing)."""
    pair = state.pair_handle()
    created = pair.init()
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
        print_json({"ok": not problems, "problems": [{"path": p.path, "reason": p.reason}
                                                       for p in problems]})
    else:
        for problem in problems:
            click.echo(f"{problem.path}: {problem.reason}")
        if not problems:
            console.print(f"ok: {pair.root} is valid")
    if problems:
        raise click.exceptions.Exit(1)
