"""``memfs serve``: the HTTP API over one core, for app backends in any language.

- ``app.create_app(host)``: the FastAPI application (routes, error shapes, limits,
  the MCP mount); ``run.serve(...)`` runs it on uvicorn.
- ``routes``: one short function per endpoint of DESIGN.md, each calling the pair's verb
  and returning the document ``--json`` prints (``memfs/documents.py``).
- ``errors``: every error becomes ``{"error", "field"}`` with a 4xx status; ``guard``
  refuses oversized bodies and bad ids in the raw path before routing.
- ``auth``: the ``Authorization: Bearer`` dependency (keys: ``memfs/keys.py``).
"""
