"""The signals search fuses, and the fusion itself: pure functions over numpy arrays.

Semantic similarity finds paraphrases ("a snack" → "peanut allergy"), BM25 finds rare
exact words (a name, "vet"), entity match ties a question about Lin to records about Lin,
recency prefers what was said lately without ever letting old important things fade to
nothing (a floor), and salience lifts emotional or personal facts. Every signal is kept per
hit so a person can see *why* a record came back (``--explain``).

BM25 is our own small incremental index (``bm25s``'s tokenisation ideas, not its index):
``bm25s`` rebuilds its whole sparse matrix to add one document, which at 100k messages
costs seconds on every new message; postings here grow in place.
"""

from __future__ import annotations

import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]

_WORD = re.compile(r"(?u)\b\w\w+\b")
_NAME = re.compile(r"\b[A-Z][A-Za-z'-]+\b")
STOPWORDS = frozenset(["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with", "i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she", "her", "its", "do", "does", "did", "have", "has", "had", "can", "could", "would", "should", "am", "been", "being", "what", "which", "who", "whom", "how", "when", "where", "why", "so", "just", "about", "any", "some", "all", "up", "out", "from", "than", "too", "very", "also", "there's", "i'm", "it's", "let's", "hey", "hi", "oh"])
COMMON_CAPITALISED = STOPWORDS | frozenset(["can", "could", "would", "should", "remember", "tell", "what", "when", "where", "why", "how", "who", "do", "does", "did", "is", "are", "was", "were", "please", "thanks", "thank", "yes", "no", "okay", "ok", "sure", "well", "so", "and", "but", "also", "maybe", "today", "tomorrow", "yesterday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "the", "this", "that", "these", "those", "there", "here", "hello", "hi", "hey", "good", "great", "sorry", "user", "assistant", "let", "any", "some", "my", "our", "your", "his", "her", "their", "it", "its", "i'm"])


def stem(word: str) -> str:
    """A deliberately light suffix stripper: plurals and -ing/-ed, nothing clever."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Lower-cased, stop words dropped, lightly stemmed terms."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def names(text: str) -> set[str]:
    """Capitalised words that look like names (lower-cased), for entity match."""
    return {w.lower() for w in _NAME.findall(text) if w.lower() not in COMMON_CAPITALISED}


class BM25:
    """Okapi BM25 over documents numbered 0, 1, 2, ... in the order they were added.

    Removal only corrects the statistics (document frequency, average length); callers
    mask removed documents out of the scores, and rebuild when too many are dead.

    Postings live in two parts: a frozen base in CSR arrays (what ``from_arrays`` loaded
    from disk, so a new process does not re-tokenise every message) and, per term, the
    documents added since (small growable arrays). A term's postings are base then added,
    both in document order.
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.vocab: dict[str, int] = {}
        self._base_offsets = np.zeros(1, dtype=np.int64)
        self._base_docs = np.zeros(0, dtype=np.int32)
        self._base_tfs = np.zeros(0, dtype=np.int32)
        self._docs: dict[int, array[int]] = {}
        self._tfs: dict[int, array[int]] = {}
        self._df: list[int] = []
        self._lengths = array("f")
        self._live = 0
        self._total_length = 0.0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, terms: Sequence[str]) -> int:
        """Add one document's terms; returns its number."""
        doc = len(self._lengths)
        for term, tf in Counter(terms).items():
            tid = self.vocab.get(term)
            if tid is None:
                tid = self.vocab[term] = len(self._df)
                self._df.append(0)
            docs = self._docs.get(tid)
            if docs is None:
                docs = self._docs[tid] = array("i")
                self._tfs[tid] = array("i")
            docs.append(doc)
            self._tfs[tid].append(tf)
            self._df[tid] += 1
        self._lengths.append(float(len(terms)))
        self._live += 1
        self._total_length += len(terms)
        return doc

    def forget(self, terms: Sequence[str]) -> None:
        """Correct the statistics for a removed document that had ``terms``."""
        for term in set(terms):
            tid = self.vocab.get(term)
            if tid is not None:
                self._df[tid] = max(0, self._df[tid] - 1)
        self._live = max(0, self._live - 1)
        self._total_length = max(0.0, self._total_length - len(terms))

    def idf(self, term: str) -> float:
        """The inverse document frequency of ``term`` (0 for a term no live document has)."""
        tid = self.vocab.get(term)
        if tid is None or not self._df[tid] or not self._live:
            return 0.0
        df = self._df[tid]
        return math.log(1.0 + (self._live - df + 0.5) / (df + 0.5))

    def scores(self, terms: Iterable[str]) -> Floats:
        """BM25 of every document for the query ``terms`` (0 where no term occurs)."""
        return self.matches(terms)[0]

    def matches(self, terms: Iterable[str]) -> tuple[Floats, npt.NDArray[np.intp]]:
        """``scores(terms)`` and the documents whose score is not 0, ascending: what
        ``np.flatnonzero`` of the scores gives, from the postings instead of a pass over
        every document (0.3 ms at 100k, the largest single step of a search's candidates)."""
        out = np.zeros(len(self._lengths), dtype=np.float32)
        if not self._live:
            return out, np.zeros(0, dtype=np.intp)
        avgdl = max(self._total_length / self._live, 1.0)
        lengths = np.frombuffer(self._lengths, dtype=np.float32)
        touched: npt.NDArray[np.bool_] | None = None
        single: npt.NDArray[np.intp] | None = None
        for term in set(terms):
            tid = self.vocab.get(term)
            if tid is None or not self._df[tid]:
                continue
            df = self._df[tid]
            idf = math.log(1.0 + (self._live - df + 0.5) / (df + 0.5))
            docs, tfs = self._postings(tid)
            tf = tfs.astype(np.float32)
            norm = self.k1 * (1.0 - self.b + self.b * lengths[docs] / avgdl)
            out[docs] += idf * tf * (self.k1 + 1.0) / (tf + norm)
            # one term's postings are ascending and distinct already; several are merged
            # in a mask (np.unique of the concatenation took 4-10 ms here)
            if single is None and touched is None:
                single = docs.astype(np.intp)  # a copy: the postings may grow later
            else:
                if touched is None:
                    touched = np.zeros(len(out), dtype=bool)
                    touched[single] = True
                touched[docs] = True
            del docs, tfs  # release the buffers so the postings can grow again
        del lengths
        if touched is not None:
            rows = np.flatnonzero(touched)
        elif single is not None:
            rows = single
        else:
            return out, np.zeros(0, dtype=np.intp)
        return out, rows[out[rows] != 0]

    def _postings(self, tid: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """(documents, term frequencies) of term ``tid``: the base part, then the added part."""
        docs: list[npt.NDArray[np.int32]] = []
        tfs: list[npt.NDArray[np.int32]] = []
        if tid + 1 < len(self._base_offsets):
            start, end = self._base_offsets[tid], self._base_offsets[tid + 1]
            docs.append(self._base_docs[start:end])
            tfs.append(self._base_tfs[start:end])
        added = self._docs.get(tid)
        if added is not None:
            docs.append(np.frombuffer(added, dtype=np.int32))
            tfs.append(np.frombuffer(self._tfs[tid], dtype=np.int32))
        if len(docs) == 1:
            return docs[0], tfs[0]
        return np.concatenate(docs), np.concatenate(tfs)

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """Everything, as flat arrays (CSR postings) that ``from_arrays`` restores exactly."""
        n_terms = len(self._df)
        base = np.zeros(n_terms, dtype=np.int64)
        base[:len(self._base_offsets) - 1] = np.diff(self._base_offsets)
        added = np.zeros(n_terms, dtype=np.int64)
        for tid, docs in self._docs.items():
            added[tid] = len(docs)
        offsets = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(base + added, out=offsets[1:])
        out_docs = np.empty(int(offsets[-1]), dtype=np.int32)
        out_tfs = np.empty(int(offsets[-1]), dtype=np.int32)
        n_base = len(self._base_docs)
        if n_base:  # each base posting moves by how much earlier terms grew
            shift = np.repeat(offsets[:-1] - self._base_offsets_padded(n_terms), base)
            out_docs[np.arange(n_base) + shift] = self._base_docs
            out_tfs[np.arange(n_base) + shift] = self._base_tfs
        for tid, docs in self._docs.items():
            start = int(offsets[tid] + base[tid])
            out_docs[start:start + len(docs)] = docs
            out_tfs[start:start + len(docs)] = self._tfs[tid]
        terms = "\n".join(self.vocab).encode("utf-8")
        return {"bm25_terms": np.frombuffer(terms, dtype=np.uint8),
                "bm25_offsets": offsets, "bm25_docs": out_docs, "bm25_tfs": out_tfs,
                "bm25_df": np.array(self._df, dtype=np.int64),
                "bm25_lengths": np.array(self._lengths, dtype=np.float32),
                "bm25_stats": np.array([self.k1, self.b, self._live, self._total_length],
                                       dtype=np.float64)}

    def _base_offsets_padded(self, n_terms: int) -> npt.NDArray[np.int64]:
        padded = np.full(n_terms, self._base_offsets[-1], dtype=np.int64)
        padded[:len(self._base_offsets) - 1] = self._base_offsets[:-1]
        return padded

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.NDArray[Any]]) -> BM25:
        """The index ``to_arrays`` saved; ValueError when the arrays do not fit together."""
        terms = arrays["bm25_terms"].tobytes().decode("utf-8")
        vocab_list = terms.split("\n") if terms else []
        offsets = np.asarray(arrays["bm25_offsets"], dtype=np.int64)
        docs = np.asarray(arrays["bm25_docs"], dtype=np.int32)
        tfs = np.asarray(arrays["bm25_tfs"], dtype=np.int32)
        df = np.asarray(arrays["bm25_df"], dtype=np.int64)
        lengths = np.asarray(arrays["bm25_lengths"], dtype=np.float32)
        k1, b, live, total = (float(x) for x in arrays["bm25_stats"])
        n_terms = len(vocab_list)
        if (len(offsets) != n_terms + 1 or len(df) != n_terms or offsets[0] != 0
                or np.any(np.diff(offsets) < 0) or offsets[-1] != len(docs)
                or len(docs) != len(tfs) or len(set(vocab_list)) != n_terms
                or not 0 <= live <= len(lengths)
                or (len(docs) and (docs.min() < 0 or docs.max() >= len(lengths)))):
            raise ValueError("bm25: saved arrays are inconsistent")
        index = cls(k1, b)
        index.vocab = {term: tid for tid, term in enumerate(vocab_list)}
        index._base_offsets, index._base_docs, index._base_tfs = offsets, docs, tfs
        index._df = df.tolist()
        index._lengths = array("f", lengths.tobytes())
        index._live, index._total_length = int(live), total
        return index


@dataclass(frozen=True)
class Weights:
    """How much each signal counts. Tuned on the LongMemEval ``dev`` split only (issue 12;
    BENCHMARKS.md): semantic 0.8 and BM25 0.3 with long messages scored by their pieces,
    salience acting as a damping factor on messages rather than as a bonus."""

    semantic: float = 0.8
    bm25: float = 0.3
    entity: float = 0.1
    recency: float = 0.1
    salience: float = 0.0
    type_match: float = 0.1
    """Cards of a type the retrieval plan asked for (``memory_types``)."""
    half_life_days: float = 30.0
    recency_floor: float = 0.3
    stale_factor: float = 0.6
    """Stale and expired cards (only shown when asked for) keep this share of their score."""
    newer_similar_factor: float = 0.8
    """``most_recent``: a record with a newer, very similar record keeps this share."""
    similar_threshold: float = 0.75
    # -- issue 12: distinct hits, write-time salience, time and neighbouring turns --------
    collapse: bool = True
    """Identical messages compete as one (their newest copy), counted (``memfs.dedupe``)."""
    dup_threshold: float = 0.93
    """Cosine at or above which two candidates are near-identical and collapse into one."""
    diversity: float = 0.1
    """The largest diversity penalty (MMR, ``memfs.diversify``); 0 turns it off."""
    diversity_threshold: float = 0.7
    """Cosine to an earlier pick below which no diversity penalty is paid."""
    salience_damping: float = 0.5
    """A message of salience s keeps ``1 - damping * (1 - s)`` of its score: filler sinks."""
    neighbour: float = 0.1
    """How much a turn's neighbours' relevance (the previous and next turn) adds."""
    time_match: float = 0.3
    """A message inside the span a time expression names ("last month") gets this much."""
    speaker: float = 0.1
    """Assistant turns, when the query asks what the assistant said ("you suggested…")."""
    pieces: float = 0.5
    """A long message's semantic score moves this far from its whole vector's cosine towards
    its best piece's, when that is higher (``memfs.chunks``); 0 ignores pieces."""
    # -- issue 12, second round: what a word match is worth, what a request wants ---------
    bm25_ideal: float = 1.0
    """BM25 is scaled by the larger of the best match and this share of the query's ideal
    score (each query word once, in a message of average length): when the best match
    shares only one of the question's words, it does not count as a full match."""
    request_user: float = 0.4
    """For a request for a suggestion, the assistant's turns lose this share of their
    score: the user's own words (tastes, gear, habits) are what a suggestion must fit."""
    framing: bool = True
    """Leave the question's framing words ("can you suggest", "remind me") out of BM25."""
    # -- issue 12, fourth round: what a request is about -----------------------------------
    request_topic: float = 0.5
    """For a request for a suggestion, the query's vector moves towards the vector of its
    topic words alone (``query_terms.topic_text``) by this share: "can you suggest some …
    that I can do" is what every request shares, the topic is what the user's own words
    about their tastes share. 0 turns it off."""


def recency(age_days: Floats, half_life_days: float, floor: float) -> Floats:
    """1.0 now, halving every ``half_life_days``, never below ``floor``."""
    age = np.maximum(age_days, 0.0)
    decay = np.power(0.5, age / half_life_days, dtype=np.float32)
    return np.asarray(floor + (1.0 - floor) * decay, dtype=np.float32)


def normalise_bm25(raw: Floats) -> Floats:
    """Scale to [0, 1] by the best score for this query (BM25 has no absolute scale)."""
    top = float(raw.max()) if raw.size else 0.0
    return raw / top if top > 0 else np.zeros_like(raw)


def entity_match(query_names: set[str], item_names: Sequence[frozenset[str]]) -> Floats:
    """Share of the query's names that each item mentions."""
    if not query_names:
        return np.zeros(len(item_names), dtype=np.float32)
    return np.array([len(query_names & n) / len(query_names) for n in item_names],
                    dtype=np.float32)


FUSED = ("semantic", "bm25", "entity", "recency", "salience", "type_match", "neighbour",
         "time_match", "speaker")
"""The additive signals; the others (status, duplicates, diversity) act on the sum."""


def fuse(signals: dict[str, Floats], weights: Weights) -> Floats:
    """The weighted sum of the named signals (missing signals count as 0)."""
    total = np.zeros_like(next(iter(signals.values())))
    for name in FUSED:
        if name in signals:
            total = total + getattr(weights, name) * signals[name]
    return total


def grow(buffer: np.ndarray[Any, Any], rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Append rows; the backing array doubles so appending one message is not a full copy
    (the result is a view of a larger array, which the next call fills in place)."""
    base = buffer.base if isinstance(buffer.base, np.ndarray) else None
    used = len(buffer)
    if (base is not None and base.shape[1:] == buffer.shape[1:]
            and len(base) >= used + len(rows) and base.ctypes.data == buffer.ctypes.data):
        base[used:used + len(rows)] = rows
        return base[:used + len(rows)]
    capacity = max(16, 2 * (used + len(rows)))
    fresh = np.zeros((capacity, *buffer.shape[1:]), dtype=buffer.dtype)
    fresh[:used] = buffer
    fresh[used:used + len(rows)] = rows
    return fresh[:used + len(rows)]


def top_candidates(scores: Sequence[Floats], pool: int) -> npt.NDArray[np.int64]:
    """The union of each score array's ``pool`` best positions (-inf marks ineligible)."""
    chosen: list[npt.NDArray[np.int64]] = []
    for arr in scores:
        n = min(pool, arr.size)
        if n == 0:
            continue
        part = np.argpartition(-arr, n - 1)[:n]
        chosen.append(part[np.isfinite(arr[part]) & (arr[part] > -1e30)])
    if not chosen:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(chosen))
