"""``memfs dream``: run dreaming now, in the foreground, over every pending window; and,
in review mode (``dream_merge = review``), list, accept and reject the dreams waiting
for the user (the verbs are ``memfs.agent.dream.review``; this only prints)."""

from __future__ import annotations

import click
from rich.markup import escape

from memfs import documents
from memfs.changes import ChangeSet
from memfs.cli.common import State, cli, console, pass_state, print_json, short
from memfs.store import MemoryPair


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
@click.option("--wait", "wait", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds to wait for a dream another process is running.")
@click.option("--no-wait", is_flag=True, help="Return at once if another dream is running.")
@click.option("--list", "list_", is_flag=True,
              help="List the dreams waiting for review (dream_merge = review); dream nothing.")
@click.option("--accept", metavar="ID", help="Merge the dream waiting for review as ID.")
@click.option("--reject", metavar="ID",
              help="Drop the dream waiting for review as ID; its window counts as dreamed.")
@pass_state
def dream(state: State, as_json: bool, wait: float, no_wait: bool, list_: bool,
          accept: str | None, reject: str | None) -> None:
    """Run dreaming now over pending windows (each becomes one `dream:` merge commit).

    If another process is dreaming this pair, waits for it and reports what it merged.
    With `dream_merge = review` a finished dream waits for you instead: `--list` shows
    what each would remember, `--accept ID` merges it, `--reject ID` drops it."""
    from memfs.agent.dream.runner import read_status, run_pending

    pair = state.pair()
    if sum(bool(x) for x in (list_, accept, reject)) > 1:
        raise click.UsageError("--list, --accept and --reject: give one of them")
    if list_ or accept or reject:
        _review(pair, as_json, accept, reject)
        return
    run = run_pending(pair, wait=0.0 if no_wait else wait)
    if as_json:
        print_json(documents.dream(run.busy, run.results))
    elif run.busy:
        status = read_status(pair.root) or {}
        detail = f" (pid {status['pid']}, event {status.get('event')})" if status else ""
        waited = "" if no_wait else f" after waiting {wait:g} s"
        console.print(f"another dream is still running{detail}{waited}; try again when it "
                      "is done")
    elif not run.results:
        console.print(_nothing_pending(state, pair))
        _waiting_note(pair)
    for result in [] if as_json else run.results:
        if result.status == "proposed":
            console.print(f"[magenta]☾ {result.event}[/magenta] waits for your review: "
                          f"`memfs dream --list`, then --accept {result.event} or --reject")
        elif result.status == "merged":
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


def _review(pair: MemoryPair, as_json: bool, accept: str | None, reject: str | None) -> None:
    from memfs.agent.dream import review

    if accept or reject:
        proposal = review.get(pair, accept or reject or "")
        commit = review.accept(pair, proposal.id) if accept else review.reject(pair, proposal.id)
        verb = "accepted" if accept else "rejected"
        if as_json:
            print_json(documents.reviewed(proposal.id, verb, commit))
        else:
            console.print(f"{verb} {proposal.id} ({proposal.subject}) in {commit[:10]}")
        return
    found = review.proposals(pair)
    if as_json:
        print_json(documents.proposals(p.to_json(pair.repo) for p in found))
        return
    if not found:
        console.print("no dreams waiting for review")
    for proposal in found:
        console.print(f"[magenta]☾ {proposal.id}[/magenta] {escape(proposal.subject)} "
                      f"[dim](window {proposal.event.window_trailer()})[/dim]")
        for line in describe(proposal.changes(pair.repo)):
            console.print(f"    {line}", markup=False, highlight=False)


def describe(change: ChangeSet) -> list[str]:
    """One line per thing a change does to memory, for a terminal."""
    lines = [f"+ new card {c.id}: {short(c.body)}" for c in change.written
             if not c.supersedes]
    lines += [f"~ {s.old.id} -> {s.by.id if s.by else '?'}: {short(s.old.body, 30)} -> "
              f"{short(s.by.body, 30) if s.by else ''}" for s in change.superseded]
    lines += [f"? {c.id} may have changed: {short(c.body, 30)} <- \"{short(c.possible_change.words, 40)}\""
              for c in change.questioned if c.possible_change]
    lines += [f"x expired {c.id}: {short(c.body)}" for c in change.expired]
    lines += [f"x marked wrong {c.id}: {short(c.body)}" for c in change.deleted]
    if change.summary_changed:
        lines.append(f"summary: {short(change.summary_after)}")
    return lines


def _waiting_note(pair: MemoryPair) -> None:
    from memfs.agent.dream import review

    waiting = review.proposals(pair)
    if waiting:
        console.print(f"{len(waiting)} dream(s) wait for your review: `memfs dream --list`")
