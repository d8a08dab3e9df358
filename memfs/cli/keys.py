"""``memfs key add|ls|rm``: the API keys of ``memfs serve`` (stored hashed, under the home)."""

from __future__ import annotations

import click
from rich.table import Table

from memfs.cli.common import State, cli, console, pass_state, print_json
from memfs.errors import BadInputError
from memfs.keys import KeyStore


@cli.group()
def key() -> None:
    """API keys for `memfs serve` (a user's key sees only that user's pairs)."""


@key.command("add")
@click.option("--user", "for_user", help="The one user this key may reach.")
@click.option("--admin", is_flag=True, help="A key for every user's memory.")
@pass_state
def key_add(state: State, for_user: str | None, admin: bool) -> None:
    """Make a key; it is printed once, on the last line, and only its hash is kept."""
    if admin == (for_user is not None):
        raise BadInputError("key add: give exactly one of --user USER or --admin")
    record, secret = KeyStore(state.config.home).add(None if admin else for_user)
    console.print(f"key {record.id} for {record.describe()}; it is shown only now:",
                  markup=False)
    click.echo(secret)


@key.command("ls")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def key_ls(state: State, as_json: bool) -> None:
    """The keys (ids and who they are for; never the keys themselves)."""
    records = list(KeyStore(state.config.home).records().values())
    if as_json:
        print_json({"keys": [r.to_json() for r in records]})
        return
    if not records:
        console.print("no keys: `memfs serve` runs open on loopback only")
        return
    table = Table("id", "for", "created", box=None)
    for record in records:
        table.add_row(record.id, record.describe(), record.created)
    console.print(table)


@key.command("rm")
@click.argument("key_id")
@pass_state
def key_rm(state: State, key_id: str) -> None:
    """Remove key KEY_ID: requests with it fail from now on (a running server too)."""
    record = KeyStore(state.config.home).remove(key_id)
    console.print(f"removed key {record.id} ({record.describe()})", markup=False)
