"""``memfs card ls|show``: the long-term memory cards."""

from __future__ import annotations

import datetime as dt

import click
from rich.table import Table

from memfs.cards import STATUSES, Card
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
        print_json({"cards": [card_json(c) for c in cards]})
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
        print_json(card_json(c))
    else:
        click.echo(c.to_text(), nl=False)


def card_json(c: Card) -> dict[str, object]:
    return {"id": c.id, "type": c.type, "status": c.status, "entities": list(c.entities),
            "created": c.created.isoformat(), "updated": c.updated and c.updated.isoformat(),
            "valid_from": c.valid_from and c.valid_from.isoformat(),
            "expires": c.expires and c.expires.isoformat(), "supersedes": list(c.supersedes),
            "superseded_by": c.superseded_by, "salience": c.salience,
            "source": c.source and {"session": c.source.session, "turns": list(c.source.turns)},
            "body": c.body, "path": c.path}
