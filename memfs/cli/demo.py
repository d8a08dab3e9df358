"""``memfs demo``: the whole loop on sample_memories/, offline. One function per step."""

from __future__ import annotations

import time

import click
from rich.table import Table
from rich.text import Text

from memfs.cli.common import State, cli, console, pass_state
from memfs.store import MemoryPair


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
    from memfs.agent import demo as sample
    from memfs.app import MemoryStore

    started = time.monotonic()
    user, _, character = pair_name.partition("/")
    home = sample.demo_home(click.get_current_context().find_root().params.get("home"))
    config = state.config.with_(home=home, window_budget=window_budget, user=user,
                                character=character)
    pair = _load(MemoryStore(home, config=config), user, character)
    _pins(pair)
    dreams = _replay(pair)
    _history(pair, dreams)
    _contexts(pair)
    _revert(pair, dreams)
    console.print(f"\n[green]demo finished in {time.monotonic() - started:.1f}s.[/green] "
                  f"Explore: memfs --home {home} -u {user} -c {character} log | card ls | "
                  "search QUERY | context MESSAGE")


def _load(store: object, user: str, character: str) -> MemoryPair:
    from memfs.agent import demo as sample
    from memfs.app import MemoryStore

    assert isinstance(store, MemoryStore)
    _step(f"1. A pair repository from sample_memories/{user}/{character}")
    pair: MemoryPair = sample.load_sample(store, user, character)
    console.print(f"home: {store.home}\nrepo: {pair.root}  (a plain git repository: try "
                  f"`git -C {pair.root} log`)")
    cards = pair.cards()
    console.print(f"{len(cards)} cards: " + ", ".join(
        f"{s} {sum(c.status == s for c in cards)}" for s in ("active", "stale", "expired")))
    return pair


def _pins(pair: MemoryPair) -> None:
    _step("2. Pins: system/pins.md, in front of the model on every turn")
    for number, pin in enumerate(pair.pins(), 1):
        console.print(f"{number:>3}. {pin}", markup=False)


def _replay(pair: MemoryPair) -> list[str]:
    from memfs.agent import demo as sample

    _step("3. A conversation outgrows its window → compaction → dreaming (a subprocess)")
    result = sample.replay(pair, sample.conversation(pair.user, pair.character))
    console.print(f"{result.messages} messages chatted in; {result.events} compaction window(s) "
                  f"dreamed in {len(result.dreams)} merge(s) (waited {result.waited:.1f}s for the "
                  "dream process)")
    dreams: list[str] = result.dreams
    return dreams


def _history(pair: MemoryPair, dreams: list[str]) -> None:
    from memfs.gitio import run_git

    _step("4. What dreaming did, as git history (`memfs log`, `memfs show`)")
    table = Table("commit", "author", "change", box=None)
    for entry in pair.log(8):
        table.add_row(entry.sha[:10], entry.author,
                      Text(entry.subject, style="magenta" if entry.is_dream else ""))
    console.print(table)
    for merge in reversed(dreams):  # oldest first, as they happened
        console.print(Text(run_git(pair.root, "log", "--format=  %h %an  %s",
                                   f"{merge}^1..{merge}^2").rstrip("\n")))
    if dreams:
        diff = run_git(pair.root, "diff", f"{dreams[-1]}^1", dreams[0], "--", "cards")
        shown = [line for line in diff.splitlines()
                 if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
        console.print(f"[dim]cards diff of the dreams ({len(shown)} changed lines; first 30):[/dim]")
        for line in shown[:30]:
            console.print(Text(line[:110], style="green" if line.startswith("+") else "red"))


def _contexts(pair: MemoryPair) -> None:
    from memfs.agent import demo as sample

    _step("5. The context for probe messages (`memfs context`)")
    probes = sample.probes(pair.user, pair.character)
    chosen = None
    for probe in probes:
        ctx = pair.context(probe)
        hits = ", ".join(f"{h.id}({h.kind})" for h in ctx.hits) or "-"
        console.print(Text.assemble((probe, "bold"), f"  → retrieval: "
                                    f"{'yes' if ctx.plan.need_retrieval else 'no'} "
                                    f"({ctx.plan.reason}); hits: {hits}"))
        if chosen is None and any(h.kind == "card" for h in ctx.hits):
            chosen = probe  # show a pin and a retrieved card together
    chosen = chosen or (probes[0] if probes else None)
    if chosen:
        ctx = pair.context(chosen)
        console.print(f"\n[bold]Full context for {chosen!r}[/bold] (tokens: {ctx.tokens})")
        console.print(ctx.system_text, markup=False)
        for m in ctx.messages[-3:]:
            console.print(Text.assemble((f"{m['role']}: ", "bold"), m["content"][:200]))


def _revert(pair: MemoryPair, dreams: list[str]) -> None:
    _step("6. Undo the dream with one command (`memfs revert <merge>`)")
    if not dreams:
        console.print("no dream to revert")
        return
    before = len(pair.cards())
    sha = pair.revert(dreams[0])
    console.print(f"reverted dream {dreams[0][:10]} as {sha[:10]}: "
                  f"{before} cards → {len(pair.cards())} cards; summary restored")
