"""The dense product: the cosine of every stored row with a query, on the float16 rows.

At 100k messages this one scan is the largest cost of a retrieving turn that grows with
history. It is memory-bound: a float32 copy of the rows (what numpy's BLAS needs) is 153 MB
to read per query and 153 MB to hold beside the 77 MB of float16 rows. ``simsimd``'s
float16 kernels (F16C/AVX-512 on x86, NEON on Arm) multiply the float16 rows themselves,
accumulating in float32: half the bytes read, no second copy, the same cosines to ~1e-4
(float16 storage already rounds that much). Measured side by side at 100k rows on this
machine (BENCHMARKS.md, issue 11 round three).

Chat repeats itself ("thanks!", "good night"), and every copy of a text has the same
vector, so ``RowMirror`` multiplies each distinct row once and spreads the result back by
row. When most rows are distinct the copy of them would cost memory and save nothing, and
the mirror steps aside: the product runs over the matrix itself.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import numpy.typing as npt
import simsimd

from memfs.ranking import grow

Floats = npt.NDArray[np.float32]
Rows = npt.NDArray[np.float16]

MIRROR_FRACTION = 0.5
"""A mirror keeps its copy of the distinct rows only while they are at most this share of
all rows: past it the copy costs more memory than the skipped rows save in time."""
MIRROR_MIN_ROWS = 4096
"""Below this many rows the choice does not matter; the mirror decides once it is past it."""
KEPT_PRODUCTS = 8
"""Products a mirror keeps, by query: a suggestion turn multiplies its query twice (the
search, then the constraint search) and the same topic prototypes every time; the next
call computes only the rows appended since (rows never change once written). Past the
limit a single query's product is dropped before a prototype set's: every turn brings a
new query, and letting them push out the topic prototypes made a suggestion turn at 110k
take the prototypes' pass over every row again."""


def similarities(matrix: Rows, query: Floats, mirror: RowMirror) -> Floats:
    """Dot product of every (float16, L2-normalised) row with the unit ``query``."""
    if not len(matrix):
        return np.zeros(0, dtype=np.float32)
    return mirror.product(matrix, np.asarray(query, dtype=np.float32)[None, :])[:, 0]


def best_similarities(matrix: Rows, queries: npt.NDArray[np.float32],
                      mirror: RowMirror) -> Floats:
    """Per row of ``matrix``, its best cosine with any row of ``queries`` (unit rows):
    one pass over the rows for all of the queries, not one per query."""
    if not len(matrix) or not len(queries):
        return np.full(len(matrix), -1.0, dtype=np.float32)
    out: Floats = mirror.product(matrix, np.asarray(queries, dtype=np.float32)).max(axis=1)
    return out


def dot(rows: Rows, queries: npt.NDArray[np.float32]) -> Floats:
    """``rows @ queries.T`` as float32, read from the float16 rows once (rows outer, the few
    queries inner: the queries stay in cache while the rows stream past)."""
    if not len(rows):
        return np.zeros((0, len(queries)), dtype=np.float32)
    out = simsimd.cdist(np.ascontiguousarray(rows), queries.astype(np.float16),
                        metric="dot", dtype="float16", out_dtype="float32")
    return np.asarray(out, dtype=np.float32).reshape(len(rows), len(queries))


class RowMirror:
    """Which distinct row each row of one float16 buffer is, and those rows' copy.

    One mirror belongs to one growing matrix of one index, which only ever appends rows
    (a removal marks a status): rows once mirrored stay right. The index starts a new
    mirror when it replaces the matrix (compaction, loading a snapshot).
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.reset()

    def reset(self) -> None:
        self.rows = 0
        self.direct = False
        """True once most rows proved distinct: the product runs over the matrix itself."""
        self.distinct = np.zeros((0, self.dim), dtype=np.float16)
        self.which = np.zeros(0, dtype=np.int32)
        self.seen: dict[int, int] = {}
        """64-bit hash of a row's float16 bits → its distinct row (``_row_hashes``)."""
        self.kept: OrderedDict[bytes, Floats] = OrderedDict()
        """Query bytes → the product for the first ``len(result)`` rows (read-only)."""

    @property
    def count(self) -> int:
        """How many rows one product multiplies."""
        return self.rows if self.direct else len(self.distinct)

    def product(self, matrix: Rows, queries: npt.NDArray[np.float32]) -> Floats:
        """``matrix @ queries.T`` for the matrix this mirror follows (one column per query),
        read-only: it may be handed out again."""
        self.follow(matrix)
        key = queries.tobytes()
        out = self.kept.pop(key, None)
        if out is None:
            out = dot(matrix, queries) if self.direct else dot(self.distinct, queries)[self.which]
        elif len(out) < self.rows:  # rows appended since: only they are multiplied
            out = np.concatenate([out, dot(matrix[len(out):self.rows], queries)])
        out.flags.writeable = False
        self.kept[key] = out
        while len(self.kept) > KEPT_PRODUCTS:  # a turn's query goes first, prototypes last
            single = next((k for k, v in self.kept.items() if v.shape[1] == 1), None)
            self.kept.pop(single if single is not None else next(iter(self.kept)))
        return out

    def follow(self, matrix: Rows) -> None:
        if self.rows > len(matrix):  # not the matrix it followed: start again
            self.reset()
        if self.rows < len(matrix):
            self.extend(matrix)

    def extend(self, matrix: Rows) -> None:
        """Mirror the rows appended since the last call."""
        if self.direct:
            self.rows = len(matrix)
            return
        new = matrix[self.rows:]
        which = np.empty(len(new), dtype=np.int32)
        fresh: list[int] = []
        count = len(self.distinct)
        for i, key in enumerate(_row_hashes(new).tolist()):
            found = self.seen.get(key)
            if found is None:
                found = self.seen[key] = count + len(fresh)
                fresh.append(i)
            which[i] = found
        self.rows = len(matrix)
        if self.rows >= MIRROR_MIN_ROWS and count + len(fresh) > MIRROR_FRACTION * self.rows:
            self._step_aside()
            return
        self.distinct = grow(self.distinct, new if len(fresh) == len(new) else new[fresh])
        self.which = grow(self.which, which)

    def _step_aside(self) -> None:
        """Most rows are distinct: drop the copy and the hashes (~90 MB at 100k rows)."""
        self.direct = True
        self.distinct = np.zeros((0, self.dim), dtype=np.float16)
        self.which = np.zeros(0, dtype=np.int32)
        self.seen = {}


_MIX = np.random.default_rng(20261201).integers(1, 2**63, size=512, dtype=np.uint64) | 1


def _row_hashes(rows: Rows) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each row's bits, vectorised (hashing 100k rows' bytes one by one
    in Python took 0.5 s, the first search of a big pair): the rows' 64-bit words times
    random odd constants, summed mod 2^64. Two different rows collide with chance ~2^-64,
    about 3e-10 over all pairs of 100k rows."""
    words: np.ndarray[Any, Any] = np.ascontiguousarray(rows)
    pad = (-words.shape[1]) % 4
    if pad:
        words = np.pad(words, ((0, 0), (0, pad)))
    packed = words.view(np.uint64)
    mix = np.resize(_MIX, packed.shape[1])
    with np.errstate(over="ignore"):
        return np.asarray((packed * mix).sum(axis=1, dtype=np.uint64), dtype=np.uint64)
