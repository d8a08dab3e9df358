"""Repeated text is one piece of information, however often it was said.

Real chat repeats itself: "haha my cousin is hilarious" typed thirty times over the
weeks, "Tell me more!" after every other message. Ranked as separate records, those
copies fill every slot of a top-k and push out the one message that mattered. So:

- at write time every message gets a **duplicate key**, a 64-bit hash of its role and its
  normal form (case, punctuation and spacing removed): identical texts share it;
- ``DupGroups`` keeps, per key, how many live copies there are, when the first and the
  last were said, and which copy represents the group (the newest): only representatives
  compete in search, and a hit reports the group's count and first/last time;
- near-identical texts that the normal form does not catch ("my cousin is hilarious lol")
  are collapsed at query time by ``memfs.diversify`` from their embeddings.

Cards and the summary have key 0: they are never grouped here (dreaming merges cards).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memfs.ranking import grow

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normal_form(text: str) -> str:
    """Lower-cased words only: "Haha, my cousin is hilarious!!" -> "haha my cousin is hilarious"."""
    return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def dup_key(role: str | None, text: str) -> int:
    """The signed 64-bit duplicate key of a message (never 0, which means "no group")."""
    digest = hashlib.blake2b(f"{role or ''}\x1f{normal_form(text)}".encode(),
                             digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True) or 1


Ints = npt.NDArray[np.int64]
Times = npt.NDArray[np.float64]


@dataclass
class DupGroups:
    """Duplicate groups of the live rows: derived from (key, live, time) per row.

    Built with a few vectorised passes when first needed (~10 ms at 100k rows), updated in
    place when rows are appended, rebuilt after rows were removed (``invalidate``).
    """

    group: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, np.int32))
    """Per row: its group number, or -1 (no group: cards, summary, removed rows)."""
    representative: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, bool))
    """Per row: True for rows that compete in search (the newest copy, and every ungrouped row)."""
    count: list[int] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)
    rep_row: list[int] = field(default_factory=list)
    valid: bool = False
    _by_key: dict[int, int] | None = None
    _order: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    _bounds: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(1, np.int64))
    """The built rows sorted by group: group g's are ``_order[_bounds[g]:_bounds[g + 1]]``
    (``members`` read a hit's copies from here; a scan of every row per hit cost ~0.2 ms
    at 100k rows, and a cache of scans missed on most hits)."""
    _added: dict[int, list[int]] = field(default_factory=dict)
    """Group → its rows appended since the build."""

    def invalidate(self) -> None:
        self.valid, self._by_key, self._added = False, None, {}

    def build(self, keys: Ints, live: npt.NDArray[np.bool_], times: Times) -> None:
        """Every group from scratch."""
        n = len(keys)
        rows = np.flatnonzero(live & (keys != 0))
        order = rows[np.lexsort((times[rows], keys[rows]))]
        sorted_keys = keys[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]) if len(order) \
            else np.zeros(0, np.int64)
        ends = np.r_[starts[1:], len(order)].astype(np.int64)
        self.group = np.full(n, -1, dtype=np.int32)
        self.group[order] = np.repeat(np.arange(len(starts), dtype=np.int32), ends - starts)
        reps = order[ends - 1] if len(order) else np.zeros(0, np.int64)
        self.representative = np.ones(n, dtype=bool)
        self.representative[rows] = False
        self.representative[reps] = True
        self.count = (ends - starts).tolist()
        self.first = times[order[starts]].tolist() if len(order) else []
        self.last = times[reps].tolist()
        self.rep_row = reps.tolist()
        self._order, self._bounds = order.astype(np.int64), np.r_[starts, len(order)].astype(np.int64)
        self.valid, self._by_key, self._added = True, None, {}

    def append(self, keys: Ints, new_keys: Sequence[int], new_times: Sequence[float]) -> None:
        """Rows ``len(group)..`` were appended with these keys and times (``keys`` is the
        full key column, already including them)."""
        if not self.valid:
            return
        start = len(self.group)
        if self._by_key is None:
            self._by_key = {int(keys[r]): g for g, r in enumerate(self.rep_row)}
        group = np.full(len(new_keys), -1, dtype=np.int32)
        rep = np.ones(len(new_keys), dtype=bool)
        self.group = grow(self.group, group)  # amortised: a concatenate copied 100k rows
        self.representative = grow(self.representative, rep)  # per turn (~2.5 ms)
        for offset, (key, when) in enumerate(zip(new_keys, new_times)):
            if key != 0:
                self._join(start + offset, int(key), float(when))

    def _join(self, row: int, key: int, when: float) -> None:
        assert self._by_key is not None
        g = self._by_key.get(key)
        if g is None:
            g = self._by_key[key] = len(self.count)
            self.count.append(0)
            self.first.append(when)
            self.last.append(when)
            self.rep_row.append(row)
        elif when >= self.last[g]:
            self.representative[self.rep_row[g]] = False
            self.rep_row[g], self.last[g] = row, when
        else:
            self.representative[row] = False
        self.count[g] += 1
        self.first[g] = min(self.first[g], when)
        self.group[row] = g
        self._added.setdefault(g, []).append(row)

    def info(self, row: int) -> tuple[int, float | None, float | None]:
        """(count, first time, last time) of the row's group; (1, None, None) when ungrouped."""
        g = int(self.group[row]) if row < len(self.group) else -1
        if g < 0:
            return 1, None, None
        return self.count[g], self.first[g], self.last[g]

    def members(self, row: int, limit: int = 50) -> list[int]:
        """Rows of the same group (for ``--explain``; at most ``limit``)."""
        g = int(self.group[row]) if row < len(self.group) else -1
        if g < 0:
            return [row]
        built = self._order[self._bounds[g]:self._bounds[g + 1]].tolist() \
            if g + 1 < len(self._bounds) else []
        return sorted(built + self._added.get(g, []))[:limit]
