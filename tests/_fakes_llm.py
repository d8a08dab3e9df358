"""A scripted HTTP server for the provider tests: replies in order, records every request.

Used with ``httpx2.MockTransport`` so the real SDK / our real HTTP code runs end to end,
only the network is replaced.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx2


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)


def json_reply(payload: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Reply:
    merged = {"content-type": "application/json", **(headers or {})}
    return Reply(status, json.dumps(payload).encode(), merged)


def sse_reply(events: list[tuple[str | None, Any]]) -> Reply:
    """An ``text/event-stream`` body; an event name of None writes a bare ``data:`` line."""
    chunks = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        prefix = f"event: {name}\n" if name else ""
        chunks.append(f"{prefix}data: {payload}\n\n")
    return Reply(200, "".join(chunks).encode(), {"content-type": "text/event-stream"})


class ScriptedServer:
    """Serves ``replies`` one per request; the last one repeats once the script runs out."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        index = min(len(self.requests), len(self.replies)) - 1
        reply = self.replies[index]
        return httpx2.Response(reply.status, content=reply.body, headers=dict(reply.headers))

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handler))

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


class SleepRecorder:
    """Stands in for ``time.sleep``: records each delay instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
