"""``memfs search`` and ``memfs reindex``: find anything outside system/, rebuild the index.

The embedding model (torch) is loaded only inside the command bodies, never at import, so
``memfs --help`` and ``memfs pin ...`` stay fast.
"""

from __future__ import annotations

import click
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from memfs import documents
from memfs.cli.common import State, cli, console, err_console, pass_state, print_json, short


@cli.command("search")
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True,
              help="How many hits.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
@click.option("--explain", is_flag=True, help="Show every ranking signal per hit.")
@click.option("--include-stale", is_flag=True,
              help="Also return stale and expired cards (marked, ranked lower).")
@pass_state
def search_cmd(state: State, query: str, k: int, as_json: bool, explain: bool,
               include_stale: bool) -> None:
    """Search cards, the summary and every past message."""
    pair = state.pair()
    with err_console.status("searching (loading the model on first use)…"):
        hits = pair.search(query, k=k, include_stale=include_stale, explain=explain)
    if as_json:
        print_json(documents.search(query, hits))
        return
    if not hits:
        console.print("no matches")
        return
    for number, hit in enumerate(hits, 1):
        mark = "" if hit.status == "active" else f" [red]({hit.status})[/red]"
        where = hit.path if hit.kind != "message" else f"{hit.path} turn {hit.turn} · {hit.ts}"
        console.print(f"[bold]{number}. {escape(hit.id)}[/bold] [dim]{hit.kind} · "
                      f"{escape(where)} · score {hit.score:.3f}[/dim]{mark}")
        console.print(f"   {escape(short(hit.text, 300))}")
        if hit.count > 1:
            console.print(f"   [dim]said {hit.count} times, first {hit.first_said}, last "
                          f"{hit.last_said}[/dim]")
        if hit.neighbour is not None:
            console.print(f"   [dim]↳ {escape(hit.neighbour['role'])} "
                          f"{escape(hit.neighbour['id'])}: "
                          f"{escape(short(hit.neighbour['text'], 200))}[/dim]")
        if explain:
            if hit.collapsed:
                console.print(f"   [dim]collapsed into this hit: "
                              f"{escape(', '.join(hit.collapsed))}[/dim]")
            table = Table(box=None, show_header=False, padding=(0, 1, 0, 3))
            for name, value in hit.signals.items():
                table.add_row(name, f"{value:.3f}")
            console.print(table)


@cli.command("reindex")
@click.option("--no-cache", is_flag=True, help="Also drop cached vectors and embed everything.")
@pass_state
def reindex_cmd(state: State, no_cache: bool) -> None:
    """Rebuild the search index from scratch (it lives in .memfs/, never in git)."""
    from memfs.index import reindex

    pair = state.pair()
    embedder = pair.store.embedder
    columns = (TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("embedding", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        plan = reindex(pair.root, embedder, progress, keep_vectors=not no_cache)
    console.print(f"indexed {len(plan.added) + len(plan.changed)} record(s); "
                  f"embedded {plan.embedded}, the rest from the vector cache")
