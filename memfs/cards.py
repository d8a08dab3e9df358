"""Memory cards: one Markdown file with YAML front matter per durable memory.

Parsing is pure (``Card.from_text`` / ``Card.to_text``); only ``memfs.repo`` reads and
writes card files. ``from_text(to_text(card)) == card`` holds for every valid card, which
is what lets a person hand-edit a card and dreaming rewrite it without losing anything.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from memfs.errors import CardParseError, InvalidIdError
from memfs.ids import check_id

CARD_TYPES = ("fact", "preference", "plan", "event", "relationship", "boundary")
STATUSES = ("active", "stale", "expired", "deleted")
FIELD_ORDER = (
    "id", "type", "status", "entities", "created", "updated", "valid_from", "expires",
    "supersedes", "superseded_by", "salience", "source", "possible_change",
)
REQUIRED = ("id", "type", "status", "created")


class _Loader(yaml.SafeLoader):
    """YAML without implicit ints, floats and booleans: ``id: 007`` stays ``"007"``, an
    entity called ``No`` stays a name. Dates, times and null still resolve."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                           "tag:yaml.org,2002:bool")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def utcnow() -> dt.datetime:
    """Now, in UTC, to the second: card timestamps never carry microseconds."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


@dataclass(frozen=True)
class Source:
    """Provenance: which session and turns of ``history/`` a card came from."""

    session: str
    turns: tuple[int, ...] = ()


@dataclass(frozen=True)
class PossibleChange:
    """Something the user said later that may make the card untrue ("keys to the new place smell
    of paint" beside "The user lives in Leeds"). Dreaming records it instead of ending the card on
    a guess: the card stays active, the context shows the words beside it, and the person (or a
    later dream's supersede) settles it. Deleting the field by hand clears it."""

    said: dt.datetime
    words: str
    source: Source | None = None

    def note(self) -> str:
        """How the context shows it, after the card's text."""
        return f'(may have changed: on {self.said.date().isoformat()} the user said "{" ".join(self.words.split())}")'


@dataclass(frozen=True)
class Card:
    id: str
    type: str
    body: str
    status: str = "active"
    entities: tuple[str, ...] = ()
    created: dt.datetime = field(default_factory=utcnow)
    updated: dt.datetime | None = None
    valid_from: dt.date | None = None
    expires: dt.date | None = None
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    salience: float = 0.5
    source: Source | None = None
    possible_change: PossibleChange | None = None
    extra: tuple[tuple[str, Any], ...] = ()
    """Unknown front-matter keys, kept in order so a hand-added field survives a rewrite."""

    @property
    def path(self) -> str:
        return f"cards/{self.id}.md"

    def evolve(self, **changes: Any) -> Card:
        """A copy with ``changes`` applied (cards are immutable values)."""
        return replace(self, **changes)

    def is_live(self, today: dt.date) -> bool:
        """Active and not past its ``expires`` date."""
        return self.status == "active" and (self.expires is None or self.expires >= today)

    # -- text -------------------------------------------------------------------------

    @classmethod
    def from_text(cls, text: str, path: str = "<card>") -> Card:
        """Parse a card file. Raises ``CardParseError`` naming ``path``, field and reason."""
        meta, body = split_front_matter(text, path)
        return cls.from_meta(meta, body, path)

    @classmethod
    def from_meta(cls, meta: dict[str, Any], body: str, path: str = "<card>") -> Card:
        for name in REQUIRED:
            if meta.get(name) in (None, ""):
                raise CardParseError(path, name, "is required")
        try:
            card_id = check_id(_text(meta["id"]), "card id")
        except InvalidIdError as exc:
            raise CardParseError(path, "id", str(exc)) from None
        body = normalize_body(body)
        if not body:
            raise CardParseError(path, "body", "is empty: a card must say what it remembers")
        extra = tuple((k, v) for k, v in meta.items() if k not in FIELD_ORDER)
        return cls(
            id=card_id,
            type=_choice(meta, "type", CARD_TYPES, path),
            status=_choice(meta, "status", STATUSES, path),
            body=body,
            entities=_str_list(meta, "entities", path),
            created=_datetime(meta, "created", path),  # type: ignore[arg-type]
            updated=_datetime(meta, "updated", path),
            valid_from=_date(meta, "valid_from", path),
            expires=_date(meta, "expires", path),
            supersedes=tuple(_card_ref(x, "supersedes", path) for x in _str_list(meta, "supersedes", path)),
            superseded_by=_optional_ref(meta, "superseded_by", path),
            salience=_salience(meta, path),
            source=_source(meta, path),
            possible_change=_possible_change(meta, path),
            extra=extra,
        )

    def to_text(self) -> str:
        """Render the card; field order is fixed so diffs stay small and readable."""
        lines = ["---", f"id: {_scalar(self.id)}", f"type: {self.type}", f"status: {self.status}"]
        lines.append(f"entities: {_flow([*self.entities])}")
        lines.append(f"created: {_fmt_dt(self.created)}")
        if self.updated is not None:
            lines.append(f"updated: {_fmt_dt(self.updated)}")
        if self.valid_from is not None:
            lines.append(f"valid_from: {self.valid_from.isoformat()}")
        if self.expires is not None:
            lines.append(f"expires: {self.expires.isoformat()}")
        if self.supersedes:
            lines.append(f"supersedes: {_flow([*self.supersedes])}")
        lines.append(f"superseded_by: {_scalar(self.superseded_by) if self.superseded_by else 'null'}")
        lines.append(f"salience: {_fmt_float(self.salience)}")
        if self.source is not None:
            turns = ", ".join(str(t) for t in self.source.turns)
            lines.append(f"source: {{session: {_scalar(self.source.session)}, turns: [{turns}]}}")
        if self.possible_change is not None:
            lines.append(_render_possible_change(self.possible_change))
        for key, value in self.extra:
            lines.append(yaml.safe_dump({key: value}, allow_unicode=True, sort_keys=False,
                                        default_flow_style=None, width=10**6).rstrip("\n"))
        lines.append("---")
        return "\n".join(lines) + "\n" + self.body + "\n"


# -- front matter ------------------------------------------------------------------------


def split_front_matter(text: str, path: str = "<file>") -> tuple[dict[str, Any], str]:
    """Split ``---\\n<yaml>\\n---\\n<body>``; errors name the file."""
    text = text.removeprefix("\ufeff")
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise CardParseError(path, None, "does not start with a '---' front-matter block")
    end = text.find("\n---", 3)
    while end != -1 and text[end + 4: end + 5] not in ("\n", ""):
        end = text.find("\n---", end + 4)
    if end == -1:
        raise CardParseError(path, None, "front matter is not closed by a '---' line")
    raw, body = text[4:end + 1], text[end + 5:]
    try:
        meta = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise CardParseError(path, "front matter", f"is not valid YAML{where}") from exc
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise CardParseError(path, "front matter", "must be a mapping of field: value")
    return {str(k): v for k, v in meta.items()}, body


def normalize_body(body: str) -> str:
    """Bodies are stored without leading blank lines or trailing whitespace."""
    return body.replace("\r\n", "\n").lstrip("\n").rstrip()


# -- field helpers ------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _choice(meta: dict[str, Any], name: str, allowed: tuple[str, ...], path: str) -> str:
    value = meta.get(name)
    if value not in allowed:
        raise CardParseError(path, name, f"must be one of {', '.join(allowed)} (got {value!r})")
    return str(value)


def _str_list(meta: dict[str, Any], name: str, path: str) -> tuple[str, ...]:
    value = meta.get(name)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(
        isinstance(v, (str, dt.date)) and str(v) for v in value
    ):
        raise CardParseError(path, name, "must be a list of names")
    return tuple(v if isinstance(v, str) else v.isoformat() for v in value)


def _card_ref(value: str, name: str, path: str) -> str:
    try:
        return check_id(value, "card id")
    except InvalidIdError as exc:
        raise CardParseError(path, name, str(exc)) from None


def _optional_ref(meta: dict[str, Any], name: str, path: str) -> str | None:
    value = meta.get(name)
    if value in (None, "", "null"):
        return None
    return _card_ref(_text(value), name, path)


def _datetime(meta: dict[str, Any], name: str, path: str) -> dt.datetime | None:
    value = meta.get(name)
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, dt.date):
        parsed = dt.datetime(value.year, value.month, value.day)
    else:
        try:
            parsed = dt.datetime.fromisoformat(_text(value).replace("Z", "+00:00"))
        except ValueError:
            raise CardParseError(path, name, f"is not an ISO date-time (got {value!r})") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def _date(meta: dict[str, Any], name: str, path: str) -> dt.date | None:
    value = meta.get(name)
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(_text(value))
    except ValueError:
        raise CardParseError(path, name, f"is not a date YYYY-MM-DD (got {value!r})") from None


def _salience(meta: dict[str, Any], path: str) -> float:
    value = meta.get("salience", 0.5)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise CardParseError(path, "salience", f"must be a number from 0 to 1 (got {value!r})")
    if not 0.0 <= float(value) <= 1.0:
        raise CardParseError(path, "salience", f"must be between 0 and 1 (got {value})")
    return float(value)


def _source(meta: dict[str, Any], path: str, name: str = "source") -> Source | None:
    value = meta.get(name)
    if value is None:
        return None
    if not isinstance(value, dict) or "session" not in value:
        raise CardParseError(path, name, "must be {session: ..., turns: [...]}")
    turns = value.get("turns") or []
    if not isinstance(turns, list) or not all(isinstance(t, str) and t.isdigit() for t in turns):
        raise CardParseError(path, f"{name}.turns", "must be a list of turn numbers")
    turns = [int(t) for t in turns]
    try:
        session = check_id(_text(value["session"]), "session id")
    except InvalidIdError as exc:
        raise CardParseError(path, f"{name}.session", str(exc)) from None
    return Source(session=session, turns=tuple(turns))


def _possible_change(meta: dict[str, Any], path: str) -> PossibleChange | None:
    value = meta.get("possible_change")
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("words"), str) or not value["words"].strip():
        raise CardParseError(path, "possible_change", "must be {said: <date-time>, words: \"...\", source: ...}")
    try:
        said = _datetime(value, "said", path)
    except CardParseError as exc:
        raise CardParseError(path, "possible_change.said", exc.reason) from None
    if said is None:
        raise CardParseError(path, "possible_change.said", "is required")
    source = _source(value, path, "source") if value.get("source") is not None else None
    return PossibleChange(said=said, words=" ".join(value["words"].split()), source=source)


def _render_possible_change(change: PossibleChange) -> str:
    parts = [f"said: {_fmt_dt(change.said)}", f"words: {json.dumps(change.words, ensure_ascii=False)}"]
    if change.source is not None:
        turns = ", ".join(str(t) for t in change.source.turns)
        parts.append(f"source: {{session: {_scalar(change.source.session)}, turns: [{turns}]}}")
    return "possible_change: {" + ", ".join(parts) + "}"


# -- rendering helpers ----------------------------------------------------------------------


def _scalar(value: str) -> str:
    """A YAML scalar for ``value``, quoted only when plain style would change its meaning."""
    dumped = yaml.safe_dump(value, allow_unicode=True, default_style=None, width=10**6)
    dumped = dumped.removesuffix("\n...\n").rstrip("\n")
    return dumped


def _flow(items: list[str]) -> str:
    return "[" + ", ".join(_flow_item(i) for i in items) + "]"


_PLAIN = re.compile(r"[^\W\d_](?:[\w .'-]*[\w.'-])?")


def _flow_item(value: str) -> str:
    """Plain when it is obviously a name (any script), else a double-quoted YAML string."""
    if _PLAIN.fullmatch(value) and value.lower() != "null":
        return value
    out = []
    for ch in value:
        code = ord(ch)
        if ch.isprintable() and ch not in '"\\' and not 0xD800 <= code <= 0xDFFF:
            out.append(ch)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _fmt_dt(value: dt.datetime) -> str:
    value = value.astimezone(dt.UTC)
    text = value.isoformat().replace("+00:00", "Z")
    return text


def _fmt_float(value: float) -> str:
    return repr(round(float(value), 6))
