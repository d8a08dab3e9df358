"""``memfs card ls|show``: the long-term memory cards."""

from __future__ import annotations

import datetime as dt

import click
from rich.table import Table

from memfs import documents
from memfs.cards import STATUSES
from memfs.cli.common import (
    State,
    cli,
    console,
    pass_state,
    print_json,
    short,
    warn_uncommitted,
)


@cli.group()
def card() -> None:
    """Long-term memory cards (cards/<id>.md)."""


@card.command("ls")
@click.option("--status", type=click.Choice(STATUSES), help="Only cards with this status.")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def card_ls(state: State, status: str | None, as_json: bool) -> None:
    """List cards (committed HEAD)."""
    pair = state.pair()
    cards = pair.cards(status)
    warn_uncommitted(pair, "cards")
    if as_json:
        print_json(documents.cards(cards))
        return
    table = Table("id", "type", "status", "expires", "body", box=None)
    today = dt.date.today()
    for c in cards:
        status = c.status
        if c.status == "active" and c.expires is not None and c.expires < today:
            status = "active (past expires: searched as expired)"
        table.add_row(c.id, c.type, status, str(c.expires or ""), short(c.body))
    console.print(table)
    console.print(f"{len(cards)} card(s)")


@card.command("show")
@click.argument("card_id")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def card_show(state: State, card_id: str, as_json: bool) -> None:
    """Print one card."""
    pair = state.pair()
    c = pair.card(card_id)
    warn_uncommitted(pair, c.path)
    if as_json:
        print_json(documents.card(c))
    else:
        click.echo(c.to_text(), nl=False)

