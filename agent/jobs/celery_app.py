"""The Celery app that publishers and workers share: broker settings, the task, the worker.

Delivery is *at least once*: a job is acknowledged only after it ran (``acks_late``), and
a job whose worker process died under it is put back (``reject_on_worker_lost``); a job
held by a worker that vanished altogether (the whole machine, ``kill -9`` of every
process) goes back to the queue once it has been unacknowledged for ``redeliver_after``
seconds (the Redis transport's visibility timeout). ``delivery.deliver`` makes every
repeat a no-op, so the queue may deliver twice without dreaming twice; a delivery that
finds the pair busy (another worker is dreaming it) is retried a little later.

Publishers and workers get different socket settings: a publisher sits on the
conversation path, so it connects with a short timeout and never retries; a worker waits
for the broker as long as it takes.
"""

from __future__ import annotations

import logging
import os
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs.agent.jobs.delivery import deliver

from memfs.config import load_config
from memfs.errors import MemfsError

if TYPE_CHECKING:
    from celery import Celery, Task

    from memfs.store import MemoryStore

QUEUE = "memfs-dreams"
"""The one queue every worker of a home consumes (see docs/SCALING.md for sharding)."""
TASK = "memfs.dream"
REDELIVER_AFTER = 600.0
"""Seconds a job may stay unacknowledged before the broker hands it to another worker:
longer than any dream, so a slow dream is not delivered twice (if it is, the dream lock
makes the second delivery wait, then find the event merged)."""
PUBLISH_CONNECT_TIMEOUT = 0.5
PUBLISH_TIMEOUT = 0.5
BUSY_DELAY = 2.0
BUSY_PATIENCE = 1800.0
"""How long a job keeps waiting for a pair another process is dreaming; after that the
event stays pending on disk for the next compaction or ``memfs dream``."""
FAILED_DELAYS = (15.0, 60.0, 240.0)

log = logging.getLogger("memfs.worker")


def make_app(url: str, *, publisher: bool, redeliver_after: float = REDELIVER_AFTER,
             home: Path | None = None) -> Celery:
    """The app for ``url``; ``publisher`` picks the short, no-retry socket settings."""
    from celery import Celery

    app = Celery("memfs", broker=url, set_as_current=False)
    transport: dict[str, Any] = {
        "visibility_timeout": redeliver_after,
        # the sweep that puts back jobs of vanished workers: several per timeout
        "unacked_restore_interval": max(0.5, min(10.0, redeliver_after / 4)),
        "unacked_restore_throttle": 1,
    }
    if publisher:
        transport.update(socket_connect_timeout=PUBLISH_CONNECT_TIMEOUT,
                         socket_timeout=PUBLISH_TIMEOUT, retry_on_timeout=False,
                         max_retries=0)  # kombu's connect loop: one attempt, no sleeps
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_default_queue=QUEUE,
        task_serializer="json",
        accept_content=["json"],
        worker_prefetch_multiplier=1,
        worker_cancel_long_running_tasks_on_connection_loss=True,
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=PUBLISH_CONNECT_TIMEOUT if publisher else 4.0,
        broker_transport_options=transport,
        memfs_home=str(home) if home else None,
    )
    app.task(name=TASK, bind=True, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, max_retries=None)(dream_task)
    return app


def dream_task(task: Task, user: str, character: str, event: str, failures: int = 0) -> str:
    """One delivery of one job; returns the status (logged by Celery)."""
    try:
        result = deliver(_store(task.app.conf.memfs_home), user, character, event)
    except MemfsError as exc:
        log.error("%s/%s %s: %s (job dropped; the event, if any, stays pending)",
                  user, character, event, exc)
        return "error"
    where = f"{user}/{character} {event}"
    if result.status == "busy" and task.request.retries * BUSY_DELAY < BUSY_PATIENCE:
        log.info("%s: another dream of this pair is running; trying again shortly", where)
        raise task.retry(countdown=BUSY_DELAY * random.uniform(0.5, 1.5),
                         kwargs={"failures": failures})
    if result.status == "failed" and failures < len(FAILED_DELAYS):
        log.warning("%s: dream failed (%s); trying again in %.0f s", where, result.error,
                    FAILED_DELAYS[failures])
        raise task.retry(countdown=FAILED_DELAYS[failures], kwargs={"failures": failures + 1})
    log.info("%s: %s%s", where, result.status, f" {result.merge}" if result.merge else "")
    return result.status


_stores: dict[str, MemoryStore] = {}


def _store(home: str | None) -> MemoryStore:
    """The worker's store for its home, built once per worker process."""
    if home is None:
        raise MemfsError("this Celery app has no memfs home (start it with `memfs worker`)")
    if home not in _stores:
        from memfs.agent.services import wired_store

        _stores[home] = wired_store(home, config=load_config(home=home))
    return _stores[home]


def run_worker(url: str, home: Path, *, concurrency: int,
               redeliver_after: float = REDELIVER_AFTER, sweep_every: float = 0.0) -> None:
    """Run a Celery worker (prefork, ``concurrency`` processes) over ``home`` until stopped.

    SIGTERM is a warm shutdown (running dreams finish); a killed worker's jobs are
    delivered again (see the module docstring). With ``sweep_every`` > 0 the worker also
    republishes events an outage stranded (``sweep``)."""
    app = make_app(url, publisher=False, redeliver_after=redeliver_after, home=home)
    if sweep_every > 0:
        from memfs.agent.jobs.sweep import sweep_step

        app.steps["worker"].add(sweep_step(home, url, sweep_every, redeliver_after))
    app.worker_main(["worker", f"--concurrency={concurrency}", "--pool=prefork",
                     f"--queues={QUEUE}", f"--hostname=memfs-{os.getpid()}@%h",
                     "--loglevel=INFO", "--without-mingle", "--without-gossip"])
