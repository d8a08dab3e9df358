"""``memfs worker``: a dream worker, a Celery worker over this home's pair repositories."""

from __future__ import annotations

import os

import click

from memfs.cli.common import State, cli, pass_state
from memfs.config import check_queue_url
from memfs.errors import BadInputError


@cli.command()
@click.option("--queue", "queue_url", metavar="URL",
              help="The Redis broker, redis://host:port/db (default: $MEMFS_QUEUE or "
                   "`queue` in config.toml).")
@click.option("--concurrency", type=click.IntRange(1, 256), default=None, metavar="N",
              help="Dreams at once, one process each (default: the number of CPUs).")
@click.option("--redeliver-after", type=click.FloatRange(1.0, None), default=None,
              metavar="SECONDS",
              help="Give a dead worker's job to another after this long (default 600; "
                   "keep it above your longest dream).")
@click.option("--sweep-every", type=click.FloatRange(0.0, None), default=600.0,
              show_default=True, metavar="SECONDS",
              help="Look this often for compaction events an outage left unsent, and send "
                   "them (0: never).")
@pass_state
def worker(state: State, queue_url: str | None, concurrency: int | None,
           redeliver_after: float | None, sweep_every: float) -> None:
    """Take dream jobs from the queue and dream them here, until stopped (SIGTERM, Ctrl-C).

    Every worker of a home must see the same pair repositories (one shared volume);
    compactions anywhere with the same `queue` setting publish the jobs."""
    from memfs.agent.jobs.celery_app import REDELIVER_AFTER, run_worker

    url = queue_url or state.config.queue
    if not url:
        raise BadInputError("which queue? give --queue redis://host:port/db "
                            "(or set MEMFS_QUEUE, or `queue` in config.toml)")
    home = state.config.home
    if not home.is_dir():
        raise BadInputError(f"{home}: no such memory home (run `memfs init` for a pair first)")
    run_worker(check_queue_url(url, celery_only=True), home,
               concurrency=concurrency or os.cpu_count() or 1,
               redeliver_after=redeliver_after or REDELIVER_AFTER, sweep_every=sweep_every)
