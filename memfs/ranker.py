"""From a query to k distinct hits: the hot path of ``memfs search``.

1. **Eligibility** (vectorised over every row): status first (active only unless asked),
   plans past ``expires``, the kinds asked for, outdated messages, and of each group of
   identical messages only its newest copy (``memfs.dedupe``).
2. **Candidates**: the best rows by meaning and by words, plus the neighbouring turns of
   the best ones (an answer often sits in the turn after the question that matches).
3. **Signals** per candidate (``memfs.ranking.fuse``): semantic, BM25, entity, recency,
   salience, memory type, the neighbours' relevance, a time expression's span
   (``memfs.timeexpr``), the speaker; then factors: status, low salience, a newer (or,
   for "the first time", an older) near-duplicate.
4. **Selection** (``memfs.diversify``): near-identical candidates collapse into one hit,
   the rest are picked by maximal marginal relevance.

Every signal and factor is kept per hit, so ``--explain`` can show why it ranked.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from memfs.dedupe import DupGroups
from memfs.diversify import Selection, select
from memfs.index_items import KIND_CODES, STATUS_CODES, Item
from memfs.links import TurnLinks
from memfs.pair_index import PairIndex
from memfs.query_terms import query_terms, topic_text
from memfs.ranking import (
    Floats,
    Weights,
    entity_match,
    fuse,
    names,
    recency,
    top_candidates,
)
from memfs.retrieval_plan import ABOUT_ASSISTANT
from memfs.search_types import Query, SearchHit, effective_status, make_hit
from memfs.timeexpr import TimeHint, parse_time

_REQUEST = re.compile(
    r"\b(?:suggest|suggestions?|recommend|recommendations?|ideas?|tips?|advice)\b", re.I)
"""The query asks for a suggestion: what the user said about themselves (their tastes,
their gear, their habits) is the evidence, not the assistant's earlier suggestions."""


@dataclass
class _Pool:
    """The candidates of one query and the full-length signals neighbours are read from."""

    rows: np.ndarray[Any, Any]
    semantic: Floats
    lexical: Floats
    """Per row of the index: cosine (raw) and BM25 scaled by this query's best."""
    topic: str = ""
    """The topic words the query's vector was moved towards ("" when it was not)."""


def rank(index: PairIndex, q: Query, weights: Weights) -> list[SearchHit]:
    """Score every eligible item of ``index`` for ``q``; ``q.k`` distinct hits, best first."""
    if not index.position:
        return []
    groups, links = index.derived()
    pool = _candidates(index, q, max(50, 4 * q.k), weights, groups, links)
    if not len(pool.rows):
        return []
    rows = pool.rows
    items = [index.items[int(r)] for r in rows]
    hint = parse_time(q.text, q.now)
    about_assistant = bool(ABOUT_ASSISTANT.search(q.text))
    signals = _signals(index, items, rows, pool, q, weights, links, hint, about_assistant)
    scores = fuse(signals, weights)
    status = [effective_status(item, q.now, index.is_outdated(item)) for item in items]
    scores = _factors(index, items, rows, scores, signals, status, q, weights, hint,
                      about_assistant)
    chosen = select(np.asarray(index.vectors[rows], dtype=np.float32), scores, q.k,
                    weights.dup_threshold, weights.diversity, weights.diversity_threshold)
    return [_hit(index, items, rows, j, status, scores, signals, chosen, groups, links, pool,
                 weights) for j in chosen.order]


def _candidates(index: PairIndex, q: Query, pool: int, weights: Weights, groups: DupGroups,
                links: TurnLinks) -> _Pool:
    """The ``pool`` best eligible rows by meaning and by words, and their neighbours.

    Written to touch each 100k-long array as few times as possible: this is the hot path.
    """
    eligible = eligibility(index, q)
    if weights.collapse:
        eligible &= groups.representative
    topic = topic_query(q.text, weights)
    if topic:
        whole, words = index.query_vectors([q.text, topic])
        qvec = whole + weights.request_topic * words
        qvec = (qvec / max(float(np.linalg.norm(qvec)), 1e-9)).astype(np.float32)
    else:
        qvec = index.query_vector(q.text)
    raw = index.similarities(qvec)
    if weights.pieces > 0 and len(index.pieces.parent):  # long messages: their best piece
        best = index.pieces.best(index.similarities(qvec, of="pieces"), len(raw))
        raw = raw + weights.pieces * np.maximum(best - raw, 0.0)
    semantic = np.where(eligible, raw, -np.inf).astype(np.float32)
    terms = query_terms(q.text, weights.framing)
    lexical, matched = index.bm25.matches(terms)
    matched = matched[eligible[matched]]
    lex = lexical[matched]
    top_lex = float(lex.max()) if lex.size else 0.0
    if weights.bm25_ideal > 0 and top_lex > 0:
        ideal = sum(index.bm25.idf(t) for t in set(terms))
        top_lex = max(top_lex, weights.bm25_ideal * ideal)
    by_words = matched[top_candidates([lex], pool)] if lex.size else matched
    cands = np.union1d(top_candidates([semantic], pool), by_words)
    cands = cands[(semantic[cands] > 0) | (lexical[cands] > 0)]
    scaled = lexical / top_lex if top_lex > 0 else np.zeros_like(lexical)
    if weights.neighbour > 0 and len(cands) and len(links.next) == len(raw):
        base = weights.semantic * np.maximum(raw[cands], 0) + weights.bm25 * scaled[cands]
        best = cands[np.argsort(-base)[:2 * q.k]]
        near = np.concatenate([links.prev[best], links.next[best]])
        near = near[near >= 0]
        cands = np.union1d(cands, near[eligible[near]])
    return _Pool(cands, raw, scaled.astype(np.float32), topic)


def topic_query(text: str, weights: Weights) -> str:
    """For a request for a suggestion, the topic words its vector moves towards (else "").
    ``search`` announces them with the query, so a turn embeds both in one batch."""
    if weights.request_topic <= 0 or not _REQUEST.search(text) or ABOUT_ASSISTANT.search(text):
        return ""
    topic = topic_text(text)
    return topic if topic and topic.lower() != text.strip().lower() else ""


def eligibility(index: PairIndex, q: Query) -> np.ndarray[Any, Any]:
    """Which items may be returned: status first, then dates, then the kinds asked for."""
    if q.include_stale:
        eligible = index.status < STATUS_CODES["deleted"]
    else:
        eligible = index.status == STATUS_CODES["active"]
    if not q.include_stale:
        eligible &= index.expires >= q.now.astimezone(dt.timezone.utc).date().toordinal()
    if set(q.kinds) != {"card", "message", "summary"}:
        wanted = np.zeros(max(KIND_CODES.values()) + 1, dtype=bool)
        wanted[[KIND_CODES[k] for k in q.kinds]] = True
        eligible &= wanted[index.kinds]  # a lookup: np.isin sorted 100k codes per search
    if not q.include_stale and index.outdated:
        eligible[index.outdated_positions()] = False
    if q.exclude:
        rows = [index.position.get(("message", mid)) for mid in q.exclude]
        eligible[[r for r in rows if r is not None]] = False
    return eligible


def _signals(index: PairIndex, items: list[Item], rows: np.ndarray[Any, Any], pool: _Pool,
             q: Query, weights: Weights, links: TurnLinks, hint: TimeHint | None,
             about_assistant: bool) -> dict[str, Floats]:
    now = q.now.timestamp()
    ages = (now - index.times[rows]) / 86400.0
    query_names = names(q.text) | {e.lower() for e in q.entities}
    out = {
        "semantic": np.maximum(pool.semantic[rows], 0.0).astype(np.float32),
        "bm25": pool.lexical[rows],
        "entity": entity_match(query_names, [frozenset(i.entities) for i in items]),
        "salience": index.salience[rows].astype(np.float32),
    }
    if q.time_scope != "past":
        floor = 0.0 if q.time_scope == "most_recent" else weights.recency_floor
        out["recency"] = recency(ages.astype(np.float32), weights.half_life_days, floor)
    if q.memory_types:
        out["type_match"] = np.array([1.0 if i.kind == "card" and i.type in q.memory_types
                                      else 0.0 for i in items], dtype=np.float32)
    if weights.neighbour > 0 and len(links.next) == len(pool.semantic):
        out["neighbour"] = _neighbour_relevance(rows, pool, links, weights)
    if hint is not None and hint.span and weights.time_match > 0:
        out["time_match"] = _time_match(index.times[rows], hint)
    if pool.topic:
        out["topic_query"] = np.full(len(rows), weights.request_topic, dtype=np.float32)
    if about_assistant and weights.speaker > 0:
        out["speaker"] = np.array([1.0 if i.role == "assistant" else 0.0 for i in items],
                                  dtype=np.float32)
    return out


def _base(pool: _Pool, rows: np.ndarray[Any, Any], weights: Weights) -> Floats:
    """Query relevance by meaning and words alone (what a neighbour contributes)."""
    out: Floats = (weights.semantic * np.maximum(pool.semantic[rows], 0.0)
                   + weights.bm25 * pool.lexical[rows]).astype(np.float32)
    return out


def _neighbour_relevance(rows: np.ndarray[Any, Any], pool: _Pool, links: TurnLinks,
                         weights: Weights) -> Floats:
    out = np.zeros(len(rows), dtype=np.float32)
    for side in (links.prev[rows], links.next[rows]):
        has = side >= 0
        if has.any():
            out[has] = np.maximum(out[has], _base(pool, side[has], weights))
    return out


def _time_match(times: np.ndarray[Any, Any], hint: TimeHint) -> Floats:
    """1 inside the span, fading with the distance from it (in span widths, at least a day)."""
    assert hint.start is not None and hint.end is not None
    width = max(hint.end - hint.start, 86400.0)
    distance = np.maximum(hint.start - times, 0.0) + np.maximum(times - hint.end, 0.0)
    return np.exp(-distance / width).astype(np.float32)


def _factors(index: PairIndex, items: list[Item], rows: np.ndarray[Any, Any], scores: Floats,
             signals: dict[str, Floats], status: list[str], q: Query, weights: Weights,
             hint: TimeHint | None, about_assistant: bool) -> Floats:
    """The multiplicative part: status, low salience, a newer/older near-duplicate."""
    factor = np.array([1.0 if s == "active" else weights.stale_factor for s in status],
                      dtype=np.float32)
    if not np.all(factor == 1.0):
        signals["status_factor"] = factor
    scores = scores * factor
    if weights.request_user > 0 and not about_assistant and _REQUEST.search(q.text):
        user = np.array([0.0 if i.kind == "message" and i.role == "assistant" else 1.0
                         for i in items], dtype=np.float32)
        factor = (1.0 - weights.request_user * (1.0 - user)).astype(np.float32)
        signals["request_factor"] = factor
        scores = scores * factor
    if weights.salience_damping > 0:
        damp = 1.0 - weights.salience_damping * (1.0 - signals["salience"])
        damp = np.where([i.kind == "message" and not (about_assistant and i.role == "assistant")
                         for i in items], damp, 1.0).astype(np.float32)
        signals["salience_factor"] = damp
        scores = scores * damp
    order = hint.order if hint is not None else None
    if q.time_scope == "most_recent" or order == "latest":
        scores = _prefer(index, rows, scores, signals, weights, newer=True)
    elif order == "earliest":
        scores = _prefer(index, rows, scores, signals, weights, newer=False)
    return scores


def _prefer(index: PairIndex, rows: np.ndarray[Any, Any], scores: Floats,
            signals: dict[str, Floats], weights: Weights, newer: bool) -> Floats:
    """A record with a newer (``newer``) or older very similar candidate yields to it."""
    vecs = index.vectors[rows].astype(np.float32)
    sims = vecs @ vecs.T
    times = index.times[rows]
    later = times[None, :] > times[:, None] if newer else times[None, :] < times[:, None]
    has = ((sims >= weights.similar_threshold) & later).any(axis=1).astype(np.float32)
    signals["newer_similar" if newer else "older_similar"] = has
    return scores * np.where(has > 0, weights.newer_similar_factor, 1.0).astype(np.float32)


def _hit(index: PairIndex, items: list[Item], rows: np.ndarray[Any, Any], j: int,
         status: list[str], scores: Floats, signals: dict[str, Floats], chosen: Selection,
         groups: DupGroups, links: TurnLinks, pool: _Pool, weights: Weights) -> SearchHit:
    row = int(rows[j])
    own = {name: float(arr[j]) for name, arr in signals.items()}
    own["diversity_penalty"] = chosen.penalty.get(j, 0.0)
    score = float(scores[j]) - own["diversity_penalty"]
    hit = make_hit(items[j], status[j], score, own)
    copies = [row, *(int(rows[m]) for m in chosen.merged.get(j, []))]
    _count_copies(hit, index, copies, groups)
    if items[j].kind == "message" and len(links.next) == len(pool.semantic):
        _attach_neighbour(hit, index, row, links, pool, weights)
    return hit


def _count_copies(hit: SearchHit, index: PairIndex, copies: list[int],
                  groups: DupGroups) -> None:
    """How often the hit's text was said (identical and near-identical copies), and when."""
    count, first, last, ids = 0, None, None, []
    for row in copies:
        n, a, b = groups.info(row)
        count += n
        when = float(index.times[row])
        first = min(x for x in (first, a, when) if x is not None)
        last = max(x for x in (last, b, when) if x is not None)
        ids += [index.items.id_of(r) for r in groups.members(row, 6) if r != copies[0]]
    hit.count = count
    if count > 1 and first is not None and last is not None:
        hit.first_said, hit.last_said = _iso(first), _iso(last)
        hit.collapsed = ids[:5]
        hit.signals["copies"] = float(count)


def _attach_neighbour(hit: SearchHit, index: PairIndex, row: int, links: TurnLinks,
                      pool: _Pool, weights: Weights) -> None:
    """Attach the previous or next turn when it is about as relevant as the hit itself,
    or, for a question, the turn that answered it."""
    prv, nxt = int(links.prev[row]), int(links.next[row])
    own, before, after = _base(pool, np.array([row, max(prv, 0), max(nxt, 0)]), weights).tolist()
    best, best_score = -1, -1.0
    for other, value in ((prv, before), (nxt, after)):
        if other >= 0 and value > best_score:
            best, best_score = other, value
    if hit.text.rstrip().endswith("?") and nxt >= 0 and best_score < 0.7 * own:
        best = nxt
    elif best < 0 or best_score < 0.7 * own:
        return
    item = index.items[best]
    hit.neighbour = {"id": item.id, "role": item.role or "", "text": item.text}


def _iso(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.timezone.utc).isoformat().replace("+00:00", "Z")
