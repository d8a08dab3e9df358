"""``memfs demo``: the whole loop on sample_memories/, offline."""

from __future__ import annotations

import time

import click
from rich.table import Table
from rich.text import Text

from memfs.cli.common import State, cli, console, pass_state


def _step(title: str) -> None:
    console.print()
    console.rule(f"[bold cyan]{title}", align="left")


@cli.command()
@click.option("--pair", "pair_name", default="alex/mira", show_default=True,
              help="Which sample pair (user/character).")
@click.option("--window-budget", default=600, show_default=True,
              help="Tokens of recent window before compaction (small, so the demo compacts).")
@pass_state
def demo(state: State, pair_name: str, window_budget: int) -> None:
    """The whole loop on a sample pair, offline: pins, compaction, a dream, context, revert."""
    from agent import demo as sample
    from memfs.store import MemoryStore

    started = time.monotonic()
    user, _, character = pair_name.partition("/")
    home = sample.demo_home(click.get_current_context().find_root().params.get("home"))
    config = state.config.with_(home=home, window_budget=window_budget, user=user,
                                character=character)
    store = MemoryStore(home, config=config)

    _step(f"1. A pair repository from sample_memories/{user}/{character}")
    pair = sample.load_sample(store, user, character)
    console.print(f"home: {home}\nrepo: {pair.root}  (a plain git repository: try `git -C {pair.root} log`)")
    cards = pair.cards()
    console.print(f"{len(cards)} cards: " + ", ".join(
        f"{s} {sum(c.status == s for c in cards)}" for s in ("active", "stale", "expired")))

    _step("2. Pins: system/pins.md, in front of the model on every turn")
    for number, pin in enumerate(pair.pins(), 1):
        console.print(f"{number:>3}. {pin}", markup=False)

    _step("3. A conversation outgrows its window → compaction → dreaming (a subprocess)")
    messages = sample.conversation(user, character)
    result = sample.replay(pair, messages)
    console.print(f"{result.messages} messages chatted in; {result.events} compaction window(s) "
                  f"dreamed in {len(result.dreams)} merge(s) (waited {result.waited:.1f}s for the "
                  "dream process)")

    _step("4. What dreaming did, as git history (`memfs log`, `memfs show`)")
    table = Table("commit", "author", "change", box=None)
    for entry in pair.log(8):
        style = "magenta" if entry.is_dream else ""
        table.add_row(entry.sha[:10], entry.author, f"[{style}]{entry.subject}[/{style}]" if style
                      else entry.subject)
    console.print(table)
    if result.dreams:
        merge = result.dreams[0]
        from memfs.gitio import run_git

        console.print(run_git(pair.root, "log", "--format=  %h %an  %s", f"{merge}^1..{merge}^2"),
                      markup=False)
        diff = pair.diff(merge).splitlines()
        shown = [line for line in diff if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
        console.print(f"[dim]diff of the dream ({len(shown)} changed lines; first 25):[/dim]")
        for line in shown[:25]:
            console.print(Text(line[:110], style="green" if line.startswith("+") else "red"))

    _step("5. The context for probe messages (`memfs context`)")
    for probe in sample.probes(user, character):
        ctx = pair.context(probe)
        hits = ", ".join(f"{h.id}({h.kind})" for h in ctx.hits) or "-"
        console.print(f"[bold]{probe}[/bold]  → retrieval: "
                      f"{'yes' if ctx.plan.need_retrieval else 'no'} ({ctx.plan.reason}); hits: {hits}",
                      markup=True)
    chosen = _probe_with_card(pair, sample.probes(user, character))
    if chosen:
        ctx = pair.context(chosen)
        console.print(f"\n[bold]Full context for {chosen!r}[/bold] "
                      f"(tokens: {ctx.tokens})")
        console.print(ctx.system_text, markup=False)
        for m in ctx.messages[-3:]:
            console.print(f"[bold]{m['role']}:[/bold] ", end="")
            console.print(m["content"][:200], markup=False)

    _step("6. Undo the dream with one command (`memfs revert <merge>`)")
    if result.dreams:
        before = len(pair.cards())
        sha = pair.revert(result.dreams[0])
        console.print(f"reverted dream {result.dreams[0][:10]} as {sha[:10]}: "
                      f"{before} cards → {len(pair.cards())} cards; summary restored")
    console.print(f"\n[green]demo finished in {time.monotonic() - started:.1f}s.[/green] "
                  f"Explore: memfs --home {home} -u {user} -c {character} log | card ls | "
                  "search QUERY | context MESSAGE")


def _probe_with_card(pair: object, probes: list[str]) -> str | None:
    """The first probe whose context retrieves a card (to show a pin and a card together)."""
    from memfs.store import MemoryPair

    assert isinstance(pair, MemoryPair)
    for probe in probes:
        if any(h.kind == "card" for h in pair.context(probe).hits):
            return probe
    return probes[0] if probes else None
