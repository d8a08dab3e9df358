"""Dream operations: the only things a dream may do to memory, and their validation.

An extractor (offline rules or a model) reads an evicted window of messages and answers
with an ``Extraction``: a rewritten summary and a list of ops. The ops are deliberately
few and name cards only by id, never by path, so whatever a model says, a dream can only
write, supersede, merge, expire or close *cards* — it can never touch ``system/`` (the
user's pins) or any other file. ``parse_ops`` is the gate every model answer passes
through: a bad op is dropped and logged rather than failing the whole dream, because one
hallucinated id should not cost the user the other nine good cards.

The JSON shape is documented in docs/INTERNALS.md ("Dream operations").
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memfs.agent.llm.base import Tool

from memfs.cards import CARD_TYPES
from memfs.errors import InvalidIdError, LLMError
from memfs.ids import check_id

MAX_BODY_CHARS = 1000
MAX_ENTITIES = 12
MAX_REASON_CHARS = 200
PATH_KEYS = ("path", "file", "filename", "dir", "directory")


class MessageLike(Protocol):
    """What an extractor needs from a history message (``memfs.history.Message`` fits)."""

    @property
    def session(self) -> str: ...
    @property
    def turn(self) -> int: ...
    @property
    def role(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def ts(self) -> dt.datetime: ...


@dataclass(frozen=True, kw_only=True)
class CardDraft:
    """The fields of a card a dream proposes; the applier assigns id, status and times.

    ``session`` is optional: when the window spans one session the applier fills it in.
    """

    type: str
    body: str
    entities: tuple[str, ...] = ()
    salience: float = 0.5
    valid_from: dt.date | None = None
    expires: dt.date | None = None
    turns: tuple[int, ...] = ()
    session: str | None = None
    standing: bool | None = field(default=None, compare=False)
    """Is the new card a standing fact about who the user is, so a line of the summary's
    profile? None: its type decides (fact, relationship, boundary, preference), as for a
    model's cards. The offline extractors say False for a card told as one past episode or
    not in the user's own voice: it stays a card (searched, retrieved) and goes to the recent
    story instead, so the profile, in front of the model every turn, is not filled with chat."""

    def card_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "body": self.body,
                               "entities": list(self.entities), "salience": self.salience}
        if self.valid_from is not None:
            out["valid_from"] = self.valid_from.isoformat()
        if self.expires is not None:
            out["expires"] = self.expires.isoformat()
        out["turns"] = list(self.turns)
        if self.session is not None:
            out["session"] = self.session
        return out


@dataclass(frozen=True, kw_only=True)
class WriteOp(CardDraft):
    """A new card."""

    def to_json(self) -> dict[str, Any]:
        return {"op": "write", **self.card_json()}


@dataclass(frozen=True, kw_only=True)
class SupersedeOp(CardDraft):
    """A new card that replaces ``old_id`` (which turns ``stale``)."""

    old_id: str

    def to_json(self) -> dict[str, Any]:
        return {"op": "supersede", "old_id": self.old_id, **self.card_json()}


@dataclass(frozen=True, kw_only=True)
class MergeOp(CardDraft):
    """One new card replacing several duplicates in ``ids`` (each turns ``stale``)."""

    ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"op": "merge", "ids": list(self.ids), **self.card_json()}


@dataclass(frozen=True, kw_only=True)
class ExpireOp:
    """A plan whose date has passed: ``status: expired``."""

    id: str

    def to_json(self) -> dict[str, Any]:
        return {"op": "expire", "id": self.id}


@dataclass(frozen=True, kw_only=True)
class CloseOp:
    """A plan that was done or cancelled: ``status: expired``, with the reason."""

    id: str
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"op": "close", "id": self.id, "reason": self.reason}


Op = WriteOp | SupersedeOp | MergeOp | ExpireOp | CloseOp
CardOp = WriteOp | SupersedeOp | MergeOp


@dataclass(frozen=True)
class Extraction:
    """What one dream decided: the new running summary and the ops to apply."""

    summary: str
    ops: list[Op]


# -- the extraction tool -----------------------------------------------------------------

def _extraction_tool() -> Tool:
    """The ``record_dream`` tool, from ``templates/dream_schema.json`` (next to the prompt)."""
    from memfs.assets import read_template

    data = json.loads(read_template("dream_schema.json"))
    return Tool(name=data["name"], description=data["description"], input_schema=data["input_schema"])


EXTRACTION_TOOL = _extraction_tool()


# -- validation ---------------------------------------------------------------------------


class _Reject(Exception):
    """One op is unusable; carries the log line. Never leaves this module."""


def extraction_from_json(data: Any, known_ids: set[str]) -> tuple[Extraction, list[str]]:
    """Validate a whole tool answer ``{"story", "ops"}`` into an ``Extraction`` whose
    ``summary`` is the story line (an older answer's ``summary`` string is read as one).

    Raises ``LLMError`` when the answer is not that shape at all (nothing usable).
    """
    story = data.get("story", data.get("summary")) if isinstance(data, dict) else None
    if not isinstance(story, str):
        raise LLMError("dream extraction: answer must be an object with a 'story' string")
    ops, log = parse_ops(data.get("ops", []), known_ids)
    return Extraction(summary=story.strip(), ops=ops), log


def parse_ops(data: Any, known_ids: set[str]) -> tuple[list[Op], list[str]]:
    """Validate model JSON into ops; returns ``(ops, log)``.

    ``data`` is the ops list (or an object holding it under ``"ops"``). Each op that is
    malformed, names an unknown card, or looks like it targets a path is dropped, with
    one line in ``log`` saying which op and why. A card id may be the target of only
    one op per dream. Raises ``LLMError`` only if ``data`` is not a list at all.
    """
    if isinstance(data, dict) and "ops" in data:
        data = data["ops"]
    if not isinstance(data, list):
        raise LLMError(f"dream ops: expected a list of ops, got {type(data).__name__}")
    ops: list[Op] = []
    log: list[str] = []
    targeted: set[str] = set()
    for index, raw in enumerate(data):
        try:
            op = _parse_one(raw, known_ids)
            targets = set(op_targets(op))
            if targets & targeted:
                raise _Reject(f"targets {sorted(targets & targeted)} already changed by an earlier op")
        except _Reject as exc:
            log.append(f"dropped op #{index}: {exc}")
            continue
        targeted |= targets
        ops.append(op)
    return ops, log


def op_targets(op: Op) -> tuple[str, ...]:
    """The existing card ids an op changes."""
    if isinstance(op, SupersedeOp):
        return (op.old_id,)
    if isinstance(op, MergeOp):
        return op.ids
    if isinstance(op, (ExpireOp, CloseOp)):
        return (op.id,)
    return ()


def _parse_one(raw: Any, known_ids: set[str]) -> Op:
    if not isinstance(raw, dict):
        raise _Reject(f"not an object ({type(raw).__name__})")
    for key in PATH_KEYS:
        if key in raw:
            raise _Reject(f"field {key!r}: ops name cards by id, never by path")
    kind = raw.get("op")
    if kind == "write":
        return WriteOp(**_draft(raw))
    if kind == "supersede":
        return SupersedeOp(old_id=_known_id(raw.get("old_id"), "old_id", known_ids), **_draft(raw))
    if kind == "merge":
        return MergeOp(ids=_merge_ids(raw.get("ids"), known_ids), **_draft(raw))
    if kind == "expire":
        return ExpireOp(id=_known_id(raw.get("id"), "id", known_ids))
    if kind == "close":
        reason = raw.get("reason", "")
        if not isinstance(reason, str):
            raise _Reject("field 'reason': must be a string")
        return CloseOp(id=_known_id(raw.get("id"), "id", known_ids),
                       reason=_no_system(reason.strip()[:MAX_REASON_CHARS], "reason"))
    raise _Reject(f"field 'op': must be write, supersede, merge, expire or close (got {kind!r})")


def _known_id(value: Any, name: str, known_ids: set[str]) -> str:
    if isinstance(value, str) and ("/" in value or "\\" in value or value.endswith(".md")):
        raise _Reject(f"field {name!r}: {value!r} looks like a path; ops name cards by id")
    try:
        card_id = check_id(value, "card id")
    except InvalidIdError as exc:
        raise _Reject(f"field {name!r}: {exc}") from None
    if card_id not in known_ids:
        raise _Reject(f"field {name!r}: unknown card id {card_id!r}")
    return card_id


def _merge_ids(value: Any, known_ids: set[str]) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _Reject("field 'ids': must be a list of card ids")
    ids = tuple(dict.fromkeys(_known_id(v, "ids", known_ids) for v in value))
    if len(ids) < 2:
        raise _Reject("field 'ids': a merge needs at least two distinct cards")
    return ids


def _draft(raw: dict[str, Any]) -> dict[str, Any]:
    card_type = raw.get("type")
    if card_type not in CARD_TYPES:
        raise _Reject(f"field 'type': must be one of {', '.join(CARD_TYPES)} (got {card_type!r})")
    body = raw.get("body")
    if not isinstance(body, str) or not body.strip():
        raise _Reject("field 'body': must be a non-empty string")
    if len(body) > MAX_BODY_CHARS:
        raise _Reject(f"field 'body': longer than {MAX_BODY_CHARS} characters")
    valid_from = _date(raw.get("valid_from"), "valid_from")
    expires = _date(raw.get("expires"), "expires")
    if valid_from and expires and expires < valid_from:
        raise _Reject("field 'expires': is before valid_from")
    return {
        "type": card_type, "body": _no_system(body.strip(), "body"),
        "entities": _entities(raw.get("entities", [])), "salience": _salience(raw.get("salience")),
        "valid_from": valid_from, "expires": expires, "turns": _turns(raw.get("turns", [])),
        "session": _session(raw.get("session")),
    }


def _no_system(text: str, name: str) -> str:
    if "system/" in text.lower():
        raise _Reject(f"field {name!r}: mentions system/, which dreaming never touches")
    return text


def _entities(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _Reject("field 'entities': must be a list of non-empty strings")
    if len(value) > MAX_ENTITIES or any(len(v) > 64 for v in value):
        raise _Reject(f"field 'entities': at most {MAX_ENTITIES} names of <=64 characters")
    for v in value:
        if "/" in v or "\\" in v:
            raise _Reject(f"field 'entities': {v!r} looks like a path")
    return tuple(dict.fromkeys(v.strip() for v in value))


def _salience(value: Any) -> float:
    if value is None:
        return 0.5
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise _Reject(f"field 'salience': must be a number from 0 to 1 (got {value!r})")
    if not 0.0 <= float(value) <= 1.0:
        raise _Reject(f"field 'salience': must be between 0 and 1 (got {value})")
    return float(value)


def _date(value: Any, name: str) -> dt.date | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise _Reject(f"field {name!r}: must be a date string YYYY-MM-DD (got {value!r})")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise _Reject(f"field {name!r}: not an ISO date YYYY-MM-DD (got {value!r})") from None


def _turns(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in value
    ):
        raise _Reject("field 'turns': must be a list of turn numbers")
    return tuple(sorted(set(value)))


def _session(value: Any) -> str | None:
    if value in (None, ""):
        return None
    try:
        return check_id(value, "session id")
    except InvalidIdError as exc:
        raise _Reject(f"field 'session': {exc}") from None


def ops_to_json(ops: Sequence[Op]) -> list[dict[str, Any]]:
    """The JSON form of ``ops`` (what ``parse_ops`` reads back)."""
    return [op.to_json() for op in ops]
