"""``memfs pin add|ls|rm|edit``: the user's always-in-context facts."""

from __future__ import annotations

import os
import shlex
import subprocess

import click

from memfs import documents
from memfs.cli.common import (
    State,
    cli,
    console,
    pass_state,
    print_json,
    warn,
    warn_uncommitted,
)
from memfs.errors import BadInputError
from memfs.tokens import count_tokens


@cli.group()
def pin() -> None:
    """Pins: always in front of the model, every turn."""


@pin.command("add")
@click.argument("text", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def pin_add(state: State, text: tuple[str, ...], as_json: bool) -> None:
    """Pin TEXT."""
    pair = state.pair()
    sha = pair.pin(" ".join(text))
    if as_json:
        print_json(documents.pin_added(" ".join(text), sha, pair.pins()))
    else:
        console.print(f"pinned ({sha[:10] if sha else 'unchanged'})")
    _budget_warning(state)


@pin.command("ls")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def pin_ls(state: State, as_json: bool) -> None:
    """List pins, numbered for `pin rm N`."""
    pair = state.pair()
    pins = pair.pins()
    warn_uncommitted(pair, "system/pins.md")
    if as_json:
        print_json(documents.pins(pins))
        return
    if not pins:
        console.print("no pins yet: `memfs pin add TEXT`")
    for number, text in enumerate(pins, 1):
        console.print(f"{number:>3}. {text}", markup=False)


@pin.command("rm")
@click.argument("number", type=int)
@click.option("--json", "as_json", is_flag=True)
@pass_state
def pin_rm(state: State, number: int, as_json: bool) -> None:
    """Remove pin NUMBER (as `pin ls` shows it)."""
    pair = state.pair()
    removed = pair.unpin(number)
    if as_json:
        print_json(documents.pin_removed(removed, pair.repo.head(), pair.pins()))
    else:
        console.print(f"removed: {removed}", markup=False)


@pin.command("edit")
@pass_state
def pin_edit(state: State) -> None:
    """Open system/pins.md in $EDITOR; validate and commit on exit."""
    pair = state.pair()
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    path = pair.root / "system" / "pins.md"
    try:
        status = subprocess.call([*shlex.split(editor), str(path)])
    except OSError as exc:
        raise BadInputError(f"cannot start the editor {editor!r}: {exc.strerror}") from None
    if status != 0:
        raise BadInputError(f"the editor exited with status {status}; pins.md kept as saved, not committed")
    sha = pair.commit_pins_file()
    console.print(f"committed ({sha[:10]})" if sha else "no change")
    _budget_warning(state)


def _budget_warning(state: State) -> None:
    pins = state.pair().pins()
    used = count_tokens("\n".join(pins))
    if used > state.config.pins_budget:
        warn(f"pins use ~{used} tokens, over the pins budget of {state.config.pins_budget}: "
             "they are never dropped, but they crowd every turn")
