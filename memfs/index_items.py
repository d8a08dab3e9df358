"""What the search index holds: one ``Item`` per card, summary part and past message.

Pure construction from memory files (cards, summary, history messages), the provenance
rule that makes a message outdated when its only cards are, and ``ItemTable``, the
column store of rows that keeps a 100k-message index small in memory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memfs import history
from memfs.cards import Card
from memfs.ranking import names

SUMMARY_SPLIT_CHARS = 1200
STATUS_CODES = {"active": 0, "stale": 1, "expired": 2, "deleted": 3}
KIND_CODES = {"card": 0, "summary": 1, "message": 2}


@dataclass(frozen=True, slots=True)
class Item:
    """One searchable record. ``text`` is what a hit shows; ``index_text`` what is embedded."""

    kind: str  # card | summary | message
    id: str
    path: str
    text: str
    index_text: str
    status: str = "active"
    type: str | None = None
    salience: float = 0.5
    time: float = 0.0
    """Seconds since the epoch: a card's last update, a message's timestamp."""
    expires: str | None = None
    valid_from: str | None = None
    entities: tuple[str, ...] = ()
    session: str | None = None
    turn: int | None = None
    role: str | None = None
    sources: tuple[str, ...] = ()
    """A card's provenance as message ids (``<session>:<turn>``)."""

    @property
    def ref(self) -> tuple[str, str]:
        return (self.kind, self.id)


@dataclass
class ReconcilePlan:
    """What a refresh changed, by item reference ``(kind, id)``."""

    added: list[tuple[str, str]] = field(default_factory=list)
    changed: list[tuple[str, str]] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)
    embedded: int = 0
    """Texts that went through the model (the rest came from the vector cache)."""

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)


# -- items from memory files (pure) --------------------------------------------------------------


def card_item(card: Card) -> Item:
    when = card.updated or card.created
    extra = [e for e in card.entities if e.lower() != "user"]
    index_text = card.body + (f"\n({', '.join(extra)})" if extra else "")
    shown = card.body + (f" {card.possible_change.note()}" if card.possible_change else "")
    return Item("card", card.id, card.path, shown, index_text, status=card.status,
                type=card.type, salience=card.salience, time=when.timestamp(),
                expires=card.expires.isoformat() if card.expires else None,
                valid_from=card.valid_from.isoformat() if card.valid_from else None,
                entities=tuple(sorted({e.lower() for e in card.entities} | names(card.body))),
                sources=tuple(f"{card.source.session}:{t}" for t in card.source.turns)
                if card.source else ())


def summary_items(text: str, when: float) -> list[Item]:
    """The summary, as one item, or one per paragraph when it is long."""
    text = text.strip()
    if not text:
        return []
    parts = [text] if len(text) <= SUMMARY_SPLIT_CHARS else [
        p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    ids = ["summary"] if len(parts) == 1 else [f"summary:{i + 1}" for i in range(len(parts))]
    return [Item("summary", i, "summary.md", p, p, time=when, salience=0.5,
                 entities=tuple(sorted(names(p)))) for i, p in zip(ids, parts)]


def message_item(msg: history.Message) -> Item:
    return Item("message", msg.id, f"history/{msg.session}.jsonl", msg.content, msg.content,
                time=msg.ts.timestamp(), session=msg.session, turn=msg.turn, role=msg.role,
                entities=tuple(sorted(names(msg.content))))


def outdated_messages(items: Sequence[Item]) -> tuple[frozenset[str], frozenset[str]]:
    """(outdated, live): message ids that are sources of a stale or expired card and of no
    active one, and the ids that are sources of an active card.

    "The meeting is on Thursday" was distilled into a card; when that card was superseded
    by the Friday one, the message is as outdated as the card, and must not compete with
    the Friday card for a place in the context.
    """
    live: set[str] = set()
    dead: set[str] = set()
    for item in items:
        if item.kind == "card" and item.sources:
            (live if item.status == "active" else dead).update(item.sources)
    return frozenset(dead - live), frozenset(live)


# -- rows of items ---------------------------------------------------------------------------

BUILT_ROWS = 4096
"""Message rows an ``ItemTable`` keeps built (about 2 MB); past it, it starts again."""
FOLD_ROWS = 8192
"""Rows added since the load that ``ItemTable.extend`` moves into arrays at once (a history
of 100k messages indexed in one process, not loaded from a snapshot)."""

_GONE = Item("message", "", "", "", "", status="deleted")
"""What a removed row reads as: never returned (its status is deleted, no position points at it)."""


class ItemTable:
    """The index's rows, each an ``Item``: message rows as columns, other rows as ``Item``s.

    Messages are nearly all of a big pair, so they are kept as plain columns: the table
    saves to and loads from a few arrays (``to_arrays`` / ``from_arrays``) without building
    100k objects, and a message row becomes an ``Item`` only when read (a search reads a
    few hundred). Rows loaded from disk stay in numpy arrays; rows added since, in lists.
    """

    def __init__(self) -> None:
        self.sessions: list[str] = []
        self.roles: list[str] = []
        self.other: dict[int, Item] = {}
        """Card and summary rows (and removed ones, which are never read)."""
        self._codes: dict[str, dict[str, int]] = {"session": {}, "role": {}}
        self._base = 0
        self._cols: dict[str, Any] = {
            "session": np.full(0, -1, dtype=np.int32), "turn": np.zeros(0, dtype=np.int32),
            "role": np.zeros(0, dtype=np.int8), "time": np.zeros(0, dtype=np.float64)}
        self._text, self._text_off = b"", np.zeros(1, dtype=np.int64)
        self._ents, self._ents_off = b"", np.zeros(1, dtype=np.int64)
        self._tail: dict[str, list[Any]] = {k: [] for k in ("session", "turn", "role", "time",
                                                            "text", "ents")}
        self._built: dict[int, Item] = {}
        """Message rows read lately, as ``Item``s: a turn's search reads a few hundred rows,
        mostly the same ones as the turn before (a row never changes once written)."""

    def __len__(self) -> int:
        return self._base + len(self._tail["session"])

    def id_of(self, row: int) -> str:
        """A row's item id, without building the ``Item`` (a hit lists its copies' ids)."""
        item = self.other.get(row)
        if item is not None:
            return item.id
        if row < self._base:
            session, turn = int(self._cols["session"][row]), int(self._cols["turn"][row])
        else:
            session, turn = self._tail["session"][row - self._base], self._tail["turn"][row - self._base]
        return f"{self.sessions[session]}:{turn}" if session >= 0 else ""

    def __getitem__(self, row: int) -> Item:
        item = self.other.get(row) or self._built.get(row)
        if item is not None:
            return item
        item = self._build(row)
        if len(self._built) >= BUILT_ROWS:
            self._built.clear()
        self._built[row] = item
        return item

    def _build(self, row: int) -> Item:
        if row < self._base:
            session = int(self._cols["session"][row])
            if session < 0:
                return _GONE
            a, b = self._text_off[row], self._text_off[row + 1]
            text = self._text[a:b].decode("utf-8")
            a, b = self._ents_off[row], self._ents_off[row + 1]
            ents = self._ents[a:b].decode("utf-8")
            turn, role = int(self._cols["turn"][row]), int(self._cols["role"][row])
            when = float(self._cols["time"][row])
        else:
            tail, j = self._tail, row - self._base
            session = tail["session"][j]
            if session < 0:
                return _GONE
            text, ents, turn, role, when = (tail["text"][j], tail["ents"][j], tail["turn"][j],
                                            tail["role"][j], tail["time"][j])
        name = self.sessions[session]
        return Item("message", f"{name}:{turn}", f"history/{name}.jsonl", text, text,
                    time=when, session=name, turn=turn, role=self.roles[role],
                    entities=tuple(ents.split("\x1f")) if ents else ())

    def extend(self, items: Sequence[Item]) -> None:
        tail = self._tail
        for item in items:
            row = len(self)
            is_message = _plain_message(item)
            if not is_message:
                self.other[row] = item
            tail["session"].append(self._code("session", item.session) if is_message else -1)
            tail["turn"].append(item.turn if is_message else 0)
            tail["role"].append(self._code("role", item.role) if is_message else 0)
            tail["time"].append(item.time)
            tail["text"].append(item.text if is_message else "")
            tail["ents"].append("\x1f".join(item.entities) if is_message else "")
        if len(tail["session"]) >= FOLD_ROWS:
            self.fold()

    def fold(self) -> None:
        """Move the rows added since the load into the arrays a load makes: ~100 bytes of
        Python objects per row in six lists become a few bytes of columns and text."""
        arrays = self.to_arrays()
        self._cols = {k: arrays[f"msg_{k}"] for k in self._cols}
        self._text, self._text_off = arrays["msg_text"].tobytes(), arrays["msg_text_off"]
        self._ents, self._ents_off = arrays["msg_ents"].tobytes(), arrays["msg_ents_off"]
        self._base = len(self._cols["session"])
        self._tail = {k: [] for k in self._tail}

    def _code(self, column: str, value: str | None) -> int:
        codes, names = self._codes[column], self.sessions if column == "session" else self.roles
        code = codes.get(value or "")
        if code is None:
            code = codes[value or ""] = len(names)
            names.append(value or "")
        return code

    def message_ids(self) -> list[str | None]:
        """Every row's message id (None for other rows), without building ``Item``s."""
        sessions = np.concatenate([self._cols["session"],
                                   np.array(self._tail["session"], dtype=np.int32)]).tolist()
        turns = np.concatenate([self._cols["turn"],
                                np.array(self._tail["turn"], dtype=np.int32)]).tolist()
        names = self.sessions
        return [f"{names[s]}:{t}" if s >= 0 else None for s, t in zip(sessions, turns)]

    def column(self, name: str) -> np.ndarray[Any, Any]:
        """One message column for every row (``session`` is -1 on other rows)."""
        return np.concatenate([self._cols[name],
                               np.array(self._tail[name], dtype=self._cols[name].dtype)])

    def to_arrays(self) -> dict[str, np.ndarray[Any, Any]]:
        """The message columns (``other``, ``sessions`` and ``roles`` are saved as JSON)."""
        tail = self._tail
        out = {f"msg_{k}": np.concatenate([self._cols[k], np.array(tail[k], dtype=v.dtype)])
               for k, v in self._cols.items()}
        for name, blob, offsets in (("text", self._text, self._text_off),
                                    ("ents", self._ents, self._ents_off)):
            added = [t.encode("utf-8") for t in tail[name]]
            lengths = np.array([len(a) for a in added], dtype=np.int64)
            out[f"msg_{name}"] = np.frombuffer(blob + b"".join(added), dtype=np.uint8)
            out[f"msg_{name}_off"] = np.concatenate([offsets, offsets[-1] + np.cumsum(lengths)])
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray[Any, Any]], sessions: list[str],
                    roles: list[str], other: dict[int, Item]) -> ItemTable:
        """The table ``to_arrays`` saved; ValueError when the parts do not fit together."""
        table = cls()
        cols = {k: np.asarray(arrays[f"msg_{k}"], dtype=v.dtype) for k, v in table._cols.items()}
        rows = len(cols["session"])
        text, ents = arrays["msg_text"].tobytes(), arrays["msg_ents"].tobytes()
        text_off = np.asarray(arrays["msg_text_off"], dtype=np.int64)
        ents_off = np.asarray(arrays["msg_ents_off"], dtype=np.int64)
        messages = cols["session"] >= 0
        if (any(len(c) != rows for c in cols.values())
                or not _offsets_fit(text_off, rows, len(text))
                or not _offsets_fit(ents_off, rows, len(ents))
                or (rows and cols["session"].max(initial=-1) >= len(sessions))
                or (messages.any() and not 0 <= cols["role"][messages].min()
                    <= cols["role"][messages].max() < len(roles))
                or any(not 0 <= r < rows or messages[r] for r in other)):
            raise ValueError("items: saved columns are inconsistent")
        table._cols, table._base, table.other = cols, rows, other
        table._text, table._text_off, table._ents, table._ents_off = text, text_off, ents, ents_off
        table.sessions, table.roles = list(sessions), list(roles)
        table._codes = {"session": {n: i for i, n in enumerate(sessions)},
                        "role": {n: i for i, n in enumerate(roles)}}
        return table


def _plain_message(item: Item) -> bool:
    """True when the message columns hold all of ``item`` (as ``message_item`` makes it)."""
    return (item.kind == "message" and item.session is not None and item.turn is not None
            and item.role is not None and item.text == item.index_text
            and item.id == f"{item.session}:{item.turn}"
            and item.path == f"history/{item.session}.jsonl" and item.status == "active"
            and item.type is None and item.salience == 0.5 and item.expires is None
            and item.valid_from is None and not item.sources
            and not any("\x1f" in e or not e for e in item.entities))


def _offsets_fit(offsets: np.ndarray[Any, Any], rows: int, size: int) -> bool:
    return (len(offsets) == rows + 1 and offsets[0] == 0 and offsets[-1] == size
            and not np.any(np.diff(offsets) < 0))
