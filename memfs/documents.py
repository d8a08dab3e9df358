"""The JSON documents of memfs: what ``--json`` prints and what the HTTP API returns.

One builder per verb, so the CLI, the HTTP routes and the MCP tools cannot drift apart:
a field added here appears in all three. The builders only reshape results the pair
already returned (no I/O); the field names are the contract in DESIGN.md
(``search --json`` is ``{"query", "hits"}``, ``context --json`` is ``Context.to_json()``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from memfs.history import format_ts

if TYPE_CHECKING:
    from memfs.cards import Card
    from memfs.check import Problem
    from memfs.context import Context
    from memfs.history import Message
    from memfs.revisions import LogEntry
    from memfs.search import SearchHit
    from memfs.turn import TurnReport

Document = dict[str, Any]


class HasJson(Protocol):
    """A result that knows its own JSON shape (a dream's result, from the agent layer)."""

    def to_json(self) -> dict[str, Any]: ...


def pair(user: str, character: str, path: str, created: bool | None = None) -> Document:
    """``memfs init --json`` and each entry of ``GET /v1/pairs``."""
    doc: Document = {"user": user, "character": character, "path": path}
    if created is not None:
        doc["created"] = created
    return doc


def pairs(found: Iterable[Document]) -> Document:
    return {"pairs": list(found)}


def pins(texts: Sequence[str]) -> Document:
    """``pin ls --json``: numbered as ``pin rm N`` expects."""
    return {"pins": [{"n": number, "text": text} for number, text in enumerate(texts, 1)]}


def pin_added(text: str, commit: str | None, texts: Sequence[str]) -> Document:
    """``pin add --json``: ``commit`` is None when the pin was already there."""
    return {"pinned": text, "commit": commit, **pins(texts)}


def pin_removed(text: str, commit: str, texts: Sequence[str]) -> Document:
    return {"removed": text, "commit": commit, **pins(texts)}


def card(c: Card) -> Document:
    """One card, every front-matter field plus its body and path (``card show --json``)."""
    return {"id": c.id, "type": c.type, "status": c.status, "entities": list(c.entities),
            "created": c.created.isoformat(), "updated": c.updated and c.updated.isoformat(),
            "valid_from": c.valid_from and c.valid_from.isoformat(),
            "expires": c.expires and c.expires.isoformat(), "supersedes": list(c.supersedes),
            "superseded_by": c.superseded_by, "salience": c.salience,
            "source": c.source and {"session": c.source.session, "turns": list(c.source.turns)},
            "possible_change": c.possible_change and {
                "said": c.possible_change.said.isoformat(), "words": c.possible_change.words,
                "source": c.possible_change.source and {"session": c.possible_change.source.session,
                                                        "turns": list(c.possible_change.source.turns)}},
            "body": c.body, "path": c.path}


def cards(found: Iterable[Card]) -> Document:
    return {"cards": [card(c) for c in found]}


def log(entries: Iterable[LogEntry]) -> Document:
    return {"commits": [e.to_json() for e in entries]}


def diff(rev: str | None, text: str) -> Document:
    """``diff --json``: ``rev`` None means the uncommitted hand edits."""
    return {"rev": rev, "diff": text}


def show(rev: str, text: str) -> Document:
    return {"rev": rev, "show": text}


def reverted(rev: str, commit: str) -> Document:
    return {"reverted": rev, "commit": commit}


def search(query: str, hits: Iterable[SearchHit]) -> Document:
    return {"query": query, "hits": [h.to_json() for h in hits]}


def context(ctx: Context) -> Document:
    return ctx.to_json()


def messages(added: Sequence[Message], report: TurnReport | None = None) -> Document:
    """What ``add_messages`` appended: ids and timestamps (the content is the caller's),
    and what the batch set off: each compaction and what became of its dream."""
    doc: Document = {"added": [{"id": m.id, "session": m.session, "turn": m.turn,
                                "role": m.role, "ts": format_ts(m.ts)} for m in added],
                     "sessions": sorted({m.session for m in added})}
    if report is not None:
        doc["compactions"] = [{"event": e.id, "reason": e.reason,
                               "evicted": e.evicted}
                              for e in report.events]
        doc["dream"] = report.dream
    return doc


def check(problems: Iterable[Problem]) -> Document:
    found = [{"path": p.path, "reason": p.reason} for p in problems]
    return {"ok": not found, "problems": found}


def dream(busy: bool, results: Iterable[HasJson]) -> Document:
    """``dream --json``: ``busy`` when another dream of the pair held its lock."""
    return {"busy": busy, "dreams": [r.to_json() for r in results]}


def proposals(found: Iterable[Document]) -> Document:
    """``dream --list --json``: the dreams waiting for review (``Proposal.to_json``)."""
    return {"proposals": list(found)}


def reviewed(proposal: str, verb: str, commit: str) -> Document:
    """``dream --accept/--reject ID --json``: ``verb`` is accepted | rejected."""
    return {"proposal": proposal, "action": verb, "commit": commit}
