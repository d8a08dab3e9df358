"""What a long-running memfs process shares across requests: ``memfs serve``, ``memfs mcp``.

- ``host.Host``: one ``MemoryStore`` for the process (one embedding model, loaded once),
  per-pair locks so concurrent requests on a pair take turns, a bounded set of warm
  pair indexes, and key-checked access to pairs.
- ``pool.ThreadPoolQueue``: dreams on a bounded pool of worker threads (a ``DreamQueue``).
- ``queues.make_queue``: which ``DreamQueue`` a setting names (threads by default; the
  queue issue adds Celery + Redis behind the same call).

This layer sits under the adapters (server, MCP) and over the composition root.
"""
