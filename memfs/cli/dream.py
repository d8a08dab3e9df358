"""``memfs dream``: run dreaming now, in the foreground, over every pending window."""

from __future__ import annotations

import click
from rich.markup import escape

from memfs.cli.common import State, cli, console, pass_state, print_json
from memfs.store import MemoryPair


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
@click.option("--wait", "wait", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds to wait for a dream another process is running.")
@click.option("--no-wait", is_flag=True, help="Return at once if another dream is running.")
@pass_state
def dream(state: State, as_json: bool, wait: float, no_wait: bool) -> None:
    """Run dreaming now over pending windows (each becomes one `dream:` merge commit).

    If another process is dreaming this pair, waits for it and reports what it merged."""
    from memfs.agent.dream.runner import read_status, run_pending

    pair = state.pair()
    run = run_pending(pair, wait=0.0 if no_wait else wait)
    if as_json:
        print_json({"busy": run.busy, "dreams": [r.to_json() for r in run.results]})
    elif run.busy:
        status = read_status(pair.root) or {}
        detail = f" (pid {status['pid']}, event {status.get('event')})" if status else ""
        waited = "" if no_wait else f" after waiting {wait:g} s"
        console.print(f"another dream is still running{detail}{waited}; try again when it "
                      "is done")
    elif not run.results:
        console.print(_nothing_pending(state, pair))
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


def _nothing_pending(state: State, pair: MemoryPair) -> str:
    from memfs.turn import window_status

    count, tokens = window_status(pair)
    budget = state.config.window_budget
    return (f"nothing pending: every compacted window is dreamed, and the window (holding "
            f"{count} message(s), {tokens} of its {budget}-token budget) is not compacted "
            "until it outgrows the budget; `memfs compact` evicts it now")
