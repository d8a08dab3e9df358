"""Which turn came before and after each message: evidence often spans two turns.

"What name did you suggest for my dog?" matches the user's question of that day best,
while the answer is the assistant's next turn; "I'll take the second one" means nothing
without the turn it answers. Search scores a turn together with its neighbours and can
return a hit with the neighbour attached, so it needs, per row, the row of the previous
and of the next turn of the same session: derived from the message columns, built when
first needed and extended in place as messages are appended.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from memfs.index_items import Item, ItemTable

if TYPE_CHECKING:
    from memfs.pair_index import PairIndex

Rows = npt.NDArray[np.int32]


@dataclass
class TurnLinks:
    """``prev[row]`` / ``next[row]``: the neighbouring turn's row, or -1."""

    prev: Rows = field(default_factory=lambda: np.zeros(0, np.int32))
    next: Rows = field(default_factory=lambda: np.zeros(0, np.int32))
    valid: bool = False

    def invalidate(self) -> None:
        self.valid = False

    def build(self, table: ItemTable, live: npt.NDArray[np.bool_]) -> None:
        sessions, turns = table.column("session").copy(), table.column("turn").copy()
        n = len(sessions)
        extra: dict[str, int] = {}
        for row, item in table.other.items():  # messages kept as items (not plain rows)
            if item.kind == "message" and item.session is not None and item.turn is not None:
                code = extra.setdefault(item.session, len(table.sessions) + len(extra))
                sessions[row], turns[row] = code, item.turn
        rows = np.flatnonzero(live[:n] & (sessions >= 0))
        order = rows[np.lexsort((turns[rows], sessions[rows]))]
        a, b = order[:-1], order[1:]
        adjacent = (sessions[a] == sessions[b]) & (turns[b] == turns[a] + 1)
        self.prev = np.full(n, -1, dtype=np.int32)
        self.next = np.full(n, -1, dtype=np.int32)
        self.next[a[adjacent]] = b[adjacent]
        self.prev[b[adjacent]] = a[adjacent]
        self.valid = True

    def append(self, index: PairIndex, start: int, added: Sequence[Item]) -> None:
        """Rows ``start..`` were appended (``index.position`` already has them)."""
        if not self.valid:
            return
        grow = np.full(len(added), -1, dtype=np.int32)
        self.prev = np.concatenate([self.prev, grow])
        self.next = np.concatenate([self.next, grow])
        for offset, item in enumerate(added):
            if item.kind != "message" or item.turn is None:
                continue
            row = start + offset
            for step, mine, theirs in ((-1, self.prev, self.next), (1, self.next, self.prev)):
                other = index.position.get(("message", f"{item.session}:{item.turn + step}"))
                if other is not None and other != row:
                    mine[row] = other
                    theirs[other] = row
