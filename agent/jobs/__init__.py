"""Dreams as jobs on a distributed queue (Celery with a Redis broker).

Past one machine, a compaction must not fork a dreaming process on the host that took
the message: it publishes a job, and ``memfs worker`` processes anywhere the pair
repositories are mounted take it. Three modules, one per side:

- ``publisher``: ``CeleryQueue``, the ``DreamQueue`` a store uses when a queue is
  configured; publishes one job per pending compaction event, never blocking the turn.
- ``delivery``: what one delivery of a job does; it makes at-least-once delivery apply
  exactly once (the event file, the ``Memfs-Event`` trailer, the dream lock).
- ``celery_app``: the Celery app both sides share (settings, the task) and the worker.

Celery is imported only here, and only when a queue is configured.
"""
