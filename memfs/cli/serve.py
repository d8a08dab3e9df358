"""``memfs serve`` (HTTP API and MCP over HTTP) and ``memfs mcp`` (MCP over stdio)."""

from __future__ import annotations

import click

from memfs.cli.common import State, cli, err_console, pass_state
from memfs.runtime.host import DEFAULT_MAX_PAIRS
from memfs.server.guard import DEFAULT_MAX_BODY


@cli.command()
@click.option("--host", "bind", default="127.0.0.1", show_default=True,
              help="Address to listen on (beyond loopback, API keys are required).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--max-pairs", default=DEFAULT_MAX_PAIRS, show_default=True,
              type=click.IntRange(min=1), help="Pair indexes kept warm in memory (LRU).")
@click.option("--queue", help="Where dreams run: default this process's worker threads; "
              "redis://host:port/db for Celery workers (also $MEMFS_QUEUE).")
@click.option("--workers", type=click.IntRange(min=1), help="Dream worker threads (default 2).")
@click.option("--max-body", default=DEFAULT_MAX_BODY, show_default=True,
              type=click.IntRange(min=1024), help="Largest request body, in bytes.")
@pass_state
def serve(state: State, bind: str, port: int, max_pairs: int, queue: str | None,
          workers: int | None, max_body: int) -> None:
    """HTTP API under /v1 (OpenAPI at /docs), MCP at /v1/pairs/{user}/{character}/mcp and
    the memory inspector at /ui/."""
    from memfs.server.run import build_host, serve
    from memfs.ui import create_app

    host = build_host(state.config, bind, max_pairs=max_pairs, queue=queue, workers=workers)
    if host.allow_open and not host.keys:
        err_console.print("[yellow]no API keys exist: serving open on loopback (every local "
                          "caller is admin); `memfs key add --user USER` turns keys on[/yellow]")
    err_console.print(f"memfs serving {state.config.home} on http://{bind}:{port}/v1 "
                      f"(docs: http://{bind}:{port}/docs, inspector: http://{bind}:{port}/ui/)",
                      markup=False, highlight=False)
    serve(host, bind, port, max_body=max_body, app=create_app(host, max_body=max_body))


@cli.command("mcp")
@pass_state
def mcp_cmd(state: State) -> None:
    """MCP over stdio for the pair chosen by -u/-c (for Claude Desktop and other agents)."""
    from memfs.mcp.stdio import run_stdio

    pair = state.pair()
    run_stdio(state.config, pair.user, pair.character)
