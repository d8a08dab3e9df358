"""``memfs dream``: run dreaming now, in the foreground, over every pending window."""

from __future__ import annotations

import click
from rich.markup import escape

from memfs import documents
from memfs.cli.common import State, cli, console, pass_state, print_json


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
@pass_state
def dream(state: State, as_json: bool) -> None:
    """Run dreaming now over pending windows (each becomes one `dream:` merge commit)."""
    from memfs.agent.dream.runner import read_status, run_pending

    pair = state.pair()
    run = run_pending(pair)
    if as_json:
        print_json(documents.dream(run.busy, run.results))
    elif run.busy:
        status = read_status(pair.root) or {}
        detail = f" (pid {status['pid']}, event {status.get('event')})" if status else ""
        console.print(f"another dream is running{detail}; try again when it is done")
    elif not run.results:
        console.print("nothing pending")
    for result in [] if as_json else run.results:
        if result.status == "merged":
            console.print(f"[magenta]☾ {result.event}[/magenta] merged as "
                          f"{(result.merge or '')[:10]}")
        elif result.status == "failed":
            console.print(f"[red]✗ {result.event}[/red] failed, window stays pending: "
                          f"{escape(result.error or '')}")
        else:
            console.print(f"{result.event}: {result.status}")
        kept = "" if result.status == "merged" else "  (not kept)"
        for subject in result.commits:
            console.print(f"    {subject}{kept}", markup=False)
        for note in result.notes:
            console.print(f"    {escape(note)}", style="yellow")
    if any(r.status == "failed" for r in run.results):
        raise click.exceptions.Exit(1)
