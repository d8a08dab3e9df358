"""Suggestions must respect what the user cannot or will not do, however it was said.

"Which cocktail should I order?" shares no word and little meaning with "three years
without a single drink now", yet that sentence is the one thing the reply must not miss.
A plain search for the request finds cocktails; so for a request for a suggestion the
retrieval plan also names the **domains** it touches (food, drink, activity, gift, place;
``classify_request`` decides them from the embedding when no model planned the turn), and
``rank_constraints`` looks in those domains for the user's constraints and preferences.
It does not start from the request's words: an indirect constraint ("the physio says the
new knee needs another six months") is far from "trampoline park?" and near nothing but the
notion of a standing limit. Each row carries a write-time limit score (``PairIndex.limit``,
``memfs.salience.message_limit``: close to a limit of any domain or to a circumstance that
binds the user, rather than to news or chatter); the candidates are the ``pool`` rows that
score highest above ``bar``, at any history size, and they are ranked by how close they
are to one of the *requested* domain's prototype limits (``memfs.constraint_domains``, the
domain model: one sentence per cause, in general terms), to the request, and by the limit
score; a line the user said again, in the same words or others, counts less (small talk
comes back, a limit told in passing is said once: ``ConstraintWeights.repeat``). Context
assembly gives the best a few of its slots.

Calibrated on the spent constraint splits (``memfs eval constraints --split``: test, dev,
blind2 to blind5; blind6 is the blind set of the sixth round). Whether a message is a
request at all (``classify_request``'s bars) is calibrated on ``request_dev.jsonl`` and the
spent sets' requests (issue 12, fifth round).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memfs.constraint_domains import (
    CASUAL,
    CIRCUMSTANCES,
    DOMAIN_LIMITS,
    DOMAINS,
    LIMITS,
    NEWS,
    NOT_REQUESTS,
    OPTIONS,
    REQUESTS,
    TOPICS,
)
from memfs.dedupe import DupGroups
from memfs.embed import Embedder
from memfs.embed_memo import expect_text
from memfs.index_items import KIND_CODES
from memfs.pair_index import PairIndex
from memfs.ranker import eligibility
from memfs.salience import limit_domains
from memfs.search_types import Query, SearchHit, effective_status, make_hit
from memfs.similarity import dot

CLASSIFY_THRESHOLD = 0.45
"""A request belongs to a domain when its best cosine to that domain's requests is at
least this, or it is within ``CLASSIFY_MARGIN`` of the best domain and the best is near
the threshold."""
CLASSIFY_MARGIN = 0.05
IMPLICIT_MARGIN = 0.0
"""A request without suggestion or advice words ("what's good to sip at my desk?") needs
this much more than the threshold, unless ``REQUEST_MARGIN`` says it is a request. Was
0.10 (0.55) before issue 12f: 16 of blind4's 30 requests, which only imply a suggestion,
fell under it (BENCHMARKS.md, fifth round)."""
REQUEST_MARGIN = 0.12
"""A question is a request when its best cosine to a request exceeds its best cosine to
``NOT_REQUESTS`` (news, questions about the past or about what the assistant said, questions
of fact) by this much, whatever its cosine: "we're bored, what now?" is 0.51 nearer to a
request than to anything else. Calibrated on ``agent/evals/data/request_dev.jsonl``."""
CHOICE_FLOOR = 0.3
"""A request to choose or approve (wording "choice": "…, a pot of tea?", "A or B?") or for
advice ("which … should I …") names
its nearest domains when its best cosine to a domain's requests or ``OPTIONS`` is at least
this; below it the option is not a dish, a drink, an outing, a present or a place ("should
I take the job offer?"). On the dev splits' 190 requests 0.25 and 0.3 gave the same domain
hits (169, 168), 0.35 gave 163 (BENCHMARKS.md, seventh round)."""
WORDINGS = ("explicit", "choice", "advice", "implicit", "reply", "statement")

__all__ = ["DOMAINS", "DOMAIN_LIMITS", "LIMITS", "NEWS", "REQUESTS", "TOPICS", "WORDINGS",
           "ConstraintWeights", "classify_in_window", "classify_request", "occasion",
           "rank_constraints"]

_ALL_REQUESTS = {d: REQUESTS[d] + CASUAL[d] for d in DOMAINS}
_UNASKED = ("implicit", "reply", "statement")
"""Wordings that carry no suggestion or advice words: checked against ``NOT_REQUESTS``."""


@dataclass(frozen=True)
class ConstraintWeights:
    """Tuned on the dev constraint splits (test, dev, blind2 to blind5; 1,600 and 200
    messages of small talk, one constraint per domain per pair; BENCHMARKS.md, issue 12,
    sixth round). The candidates are the rows that state a limit of any kind (the write-time
    ``PairIndex.limit``, ``memfs.salience.message_limit``), not the rows near the request:
    an indirect constraint ("the physio says the new knee needs months") is far from
    "trampoline park?" and near nothing but the notion of a limit. Among them, the ones of
    the *requested* domains win (``domain_limit``): the user's other constraints (a food
    limit for a concert) and personal news must not take the slots."""

    bar: float = 0.2
    """Rows whose write-time limit score is below this are not candidates (on the dev
    splits it keeps 99% of the constraints and drops 59% of the distinct small talk)."""
    pool: int = 80
    """At most this many candidates, the best by the limit score: the search costs the
    same at any history size. 60 to 120 gave the same dev results."""
    domain_limit: float = 1.0
    """Best cosine to the requested domains' ``DOMAIN_LIMITS``: a limit of this domain."""
    request: float = 0.9
    """Cosine to the request itself (a cocktail is nearer to drinking than to bread)."""
    limit: float = 1.0
    """The write-time limit score: a limit rather than news or small talk."""
    relative: float = 0.5
    """Per requested domain, its ``domain_limit`` minus the best of the other domains': a
    line that is plainly another domain's limit (a drink's, for a weekend outing) loses. On
    the dev splits at 1,600 messages it halved the other constraints in a probe's slots
    (141 -> 75) for the same passes."""
    circumstance: float = 0.5
    """Best cosine to ``CIRCUMSTANCES`` (a standing circumstance that binds the user,
    whatever its domain), read at query time. Stop 27: among 1,600 messages the slots went
    to small talk near a domain's limits ("my legs are still sore from a spin class" for
    an outing); a constraint is a standing circumstance, that talk is not. With ``news``, on
    the spent splits (test, blind2-11, 275 probes) the constraint reached the right domain's
    top 3 in 161 probes (was 132, 3 lost) among 1,600 messages and 213 (203, 6 lost) among
    200; 1.0 and 1.0 gave 170 and 206, with 22 lost among 200 (BENCHMARKS.md, stop 27)."""
    news: float = 0.5
    """Minus the best cosine to ``NEWS`` (personal news that is not a limit)."""
    dup_threshold: float = 0.8
    """Cosine at or above which a constraint hit is a repeat of a better one (and dropped):
    one limit, one slot. A limit restated with an opener ("like i said, i don't drink
    alcohol …", "reminder, …") is 0.85-0.95 from the first saying, and at 0.93 its copies took
    every slot; two different limits of one domain ("i can't eat gluten" / "… dairy", "no
    peanuts" / "no tree nuts") are 0.6-0.7 (BENCHMARKS.md, stop 31)."""
    repeat: float = 0.5
    """Minus this x log(1 + copies): how often the user said the line, in these words or
    others (``repeat_threshold``). Small talk comes back ("have you heard of Small Hours?
    I'm hooked", "okay, have you heard of …", "oh, and …"); a limit told in passing is said
    once. Stop 31: among 1,600 messages the lines that kept a limit out of its domain's
    top 3 were mostly such lines said again with another opener; with this, on the spent
    splits (535 probes) the right domain's top 3 held 279 -> 325 limits and the context
    230 -> 266 (36 won, none lost), with no change among 200 messages (BENCHMARKS.md,
    stop 31, c-rank). It holds back a limit the user restates just as much: the
    threshold is a paraphrase's, not a topic's, so two different limits of one domain
    are not copies of each other."""
    repeat_threshold: float = 0.8
    """Cosine at or above which another line is the same line said again: "okay, have you
    heard of …" and "oh, and have you heard of …" are 0.9 and more; two lines on one topic
    ("I'm halfway through Circe …", "… through Pachinko …") 0.5-0.7, and on the spent
    splits no limit had another of the user's lines nearer than 0.62."""
    learned_pool: int = 40
    """Besides ``pool``, this many candidates best by the learned limit model
    (``PairIndex.learned``, ``memfs.salience.learned_limit``) and at or above ``learned_bar``:
    the prototype score misses limits told indirectly. Stop 35 (c-limit): among 1,600 messages
    of blind18-20 the prototype pool held 79 of 120 limits, this one with it 112 (out of
    fold)."""
    learned_bar: float = 0.0
    """The learned model's logit from which a row can be such a candidate."""
    learned: float = 0.5
    """Times the learned model's probability, in the score: how much a candidate reads as
    a limit to the model fit on real limits and chat."""
    learned_domain: float = 0.5
    """Times the learned model's probability that the candidate is a limit of the requested
    domain (its limit probability x its domain regression's, ``memfs.salience.limit_domains``):
    the prototype ``domain_limit`` reads a domain by likeness to a few general sentences, and
    limits the plan's domain finds lost the ranking to other people's limits and chat (stop 35,
    c-limit2). 0.5, not the 1.0 first written: at 1.0 a friend's move abroad (a limit to the
    model, 0.94) took a place slot from another domain's limit in
    ``tests/test_constraint_candidates.py``; out of fold on blind18-22, 0.5 and 1.0 gave 119 and 126
    of 200 at 1,600 messages against c-limit's 113."""
    ask_pool: int = 40
    """Besides those, this many candidates best by the second learned model
    (``PairIndex.learned_ask``, fit with questions to an assistant as chat) and at or above
    ``learned_bar``. In real chat with an assistant the first model's best 40 are long
    questions to it (of 280 limits planted in LongMemEval's chat, 70 reached the context);
    the second model misses long, explanatory limits in chat between friends. Each pool
    holds what the other misses (stop 38, c-mix)."""
    ask_mix: float = 0.5
    """The learned probability in the score is the first model's times ``1 - ask_mix`` plus
    the second's times ``ask_mix``. Out of fold on blind18-24 (280 limits, stop 38), against the
    first model alone: in LongMemEval's chat with an assistant 70 -> 88 in context with the
    second pool and ``ask_mix`` 0, 122 with 0.5; in the sets' chat between friends 177 -> 177 / 173
    at 1,600 messages and 188 -> 188 / 184 at 200. Judged once on the fresh blind26 (questions to
    the assistant) and blind27 (chat between friends): 17 -> 20 and 25 -> 25 at 1,600 messages."""
    reference: int = 160
    """The copies are counted among the candidates best by the limit score, this many
    (twice ``pool``: a copy just outside the pool still counts), so the count costs the
    same at any history size: ``pool`` x ``reference`` cosines."""


_VECTORS: dict[tuple[str, str], npt.NDArray[np.float32]] = {}


def _prototypes(embedder: Embedder, table: dict[str, tuple[str, ...]], domain: str,
                kind: str) -> npt.NDArray[np.float32]:
    key = (embedder.name, f"{kind}:{domain}")
    if key not in _VECTORS:
        _VECTORS[key] = np.asarray(embedder.embed(list(table[domain])), dtype=np.float32)
    return _VECTORS[key]


def classify_request(embedder: Embedder, text: str, wording: str = "advice") -> tuple[str, ...]:
    """The suggestion domains ``text`` asks about (may be empty), by how it is worded
    (``WORDINGS``):

    - "explicit" ("suggest a winter sport"): at least its nearest domains, even below the
      threshold — missing a constraint costs more than three slots of a suggestion's context;
    - "choice" (asks to choose between options or approve one: "…, a pot of tea?") and
      "advice" ("which … should I …"): the act is clear, so the nearest domains count, by the
      requests and by what the options of each domain are (``OPTIONS``), unless the thing
      asked about is nothing of any domain (``CHOICE_FLOOR``);
    - "implicit" (no suggestion or advice words: "what's good to sip at my desk?"): when the
      request is close to a domain's requests, or clearly nearer to a request than to
      anything that is not one (``REQUEST_MARGIN``);
    - "reply" (a reply to the assistant's question that asks nothing itself: "go on,
      nothing fancy"): as "implicit", and only when plainly a request (``REQUEST_MARGIN``);
    - "statement" (neither a question nor a reply to one: "his 50th is next week and i'm
      clueless what to get him"): only when close to a domain's requests
      (``CLASSIFY_THRESHOLD``) and plainly a request (``REQUEST_MARGIN``): news worded the
      same way ("the cat just knocked my coffee over") is not one (stop 27).

    The domains come nearest first (``_nearest_first``). The prototypes are embedded once
    per model; ``text`` in one run (the turn's query rides
    along: ``memfs.embed_memo``)."""
    return _domains(embedder, *_request_closeness(embedder, text, wording), wording)


WINDOW_TURNS = 4
"""How many of the window's last messages set a request's occasion (``classify_in_window``)."""


def classify_in_window(embedder: Embedder, text: str, wording: str,
                       window: Sequence[str]) -> tuple[str, ...]:
    """``classify_request`` for a request made mid-conversation (``window``: the recent
    message texts, oldest first). "so what do i put in the hamper?" names no domain; the
    turns before it do ("my niece turns 9 on saturday"). When the request alone is not
    close to any domain (below ``CLASSIFY_THRESHOLD``), the last ``WINDOW_TURNS`` messages
    of the window are read with it, as one text, and their domains are the request's. That
    text is embedded in the same model run as the request (the constraint search reads it
    too, ``occasion``). A request that names its domain keeps it, and the nearest domain of
    the request read with the window is added: "so what am i putting out for them?" reads
    as a gift alone, as food after "tea at home for six seven-year-olds" (stop 27: on
    dev3, 12 -> 14 of 40 among 1,600 messages)."""
    around = occasion(window, text)
    if around != text:  # the constraint search reads it too: one model run for both texts
        expect_text(embedder, around)
    best, qvec = _request_closeness(embedder, text, wording)
    domains = _domains(embedder, best, qvec, wording)
    top = max(best.values())
    if around == text:
        return domains
    if top >= CLASSIFY_THRESHOLD:
        if not domains:
            return domains
        near, _ = _request_closeness(embedder, around, "implicit")
        occasion_domain = max(near, key=near.__getitem__)
        return domains if occasion_domain in domains else (*domains, occasion_domain)
    other = _not_request(embedder, qvec) if wording in _UNASKED else 0.0
    if top < other or wording in _UNASKED[1:] and top - other < REQUEST_MARGIN \
            or wording == "statement":
        return domains  # a question of fact, news or the past, whatever the talk is about
    wording = "implicit" if wording == "reply" else wording
    return _domains(embedder, *_request_closeness(embedder, around, wording), wording) or domains


def occasion(window: Sequence[str], text: str) -> str:
    """``text`` read with the last ``WINDOW_TURNS`` messages of ``window`` (oldest first):
    who the suggestion is for and what for ("my niece turns 9 on saturday")."""
    return "\n".join([*(m for m in window[-WINDOW_TURNS:] if m.strip()), text])


def _request_closeness(embedder: Embedder, text: str,
               wording: str) -> tuple[dict[str, float], npt.NDArray[np.float32]]:
    """Per domain, ``text``'s best cosine to its requests (and, for a choice or advice, to
    its options); and ``text``'s vector."""
    qvec = np.asarray(embedder.embed([text])[0], dtype=np.float32)
    best = {d: float((_prototypes(embedder, _ALL_REQUESTS, d, "request") @ qvec).max())
            for d in DOMAINS}
    if wording in ("choice", "advice"):
        best = {d: max(b, float((_prototypes(embedder, OPTIONS, d, "option") @ qvec).max()))
                for d, b in best.items()}
    return best, qvec


def _not_request(embedder: Embedder, qvec: npt.NDArray[np.float32]) -> float:
    """The best cosine to ``NOT_REQUESTS``: news, the past, questions of fact, small talk."""
    return float((_prototypes(embedder, {"any": NOT_REQUESTS}, "any", "not-request")
                  @ qvec).max())


def _domains(embedder: Embedder, best: dict[str, float], qvec: npt.NDArray[np.float32],
             wording: str) -> tuple[str, ...]:
    """The domains ``classify_request`` names from ``_request_closeness``."""
    top = max(best.values())
    if wording in ("choice", "advice"):
        return () if top < CHOICE_FLOOR else \
            _nearest_first(best, [d for d in DOMAINS if best[d] >= top - CLASSIFY_MARGIN])
    if wording != "explicit":  # "implicit": near a domain's requests, or plainly a request
        other = _not_request(embedder, qvec)
        if wording in _UNASKED[1:] and top - other < REQUEST_MARGIN \
                or wording == "statement" and top < CLASSIFY_THRESHOLD:
            return ()  # a reply is a request only when it plainly is one
        if top < CLASSIFY_THRESHOLD + IMPLICIT_MARGIN and top - other < REQUEST_MARGIN:
            return ()
    return _nearest_first(best, [d for d in DOMAINS if best[d] >= top - CLASSIFY_MARGIN
                                 or (wording == "explicit" and best[d] >= CLASSIFY_THRESHOLD)])


def _nearest_first(best: dict[str, float], domains: Sequence[str]) -> tuple[str, ...]:
    """``domains`` nearest first (ties in ``DOMAINS`` order): the first is what the request
    asks for, the others what it touches ("what should I make for the barbecue?" is food
    first, then drink, an outing and a place), and ``rank_constraints`` keeps the first
    domain's best limit in the slots."""
    return tuple(sorted(domains, key=lambda d: (-best[d], DOMAINS.index(d))))


def rank_constraints(index: PairIndex, q: Query, domains: Sequence[str],
                     weights: ConstraintWeights | None = None) -> list[SearchHit]:
    """Up to ``q.k`` rows that state a constraint or preference of ``domains`` (the
    request's own first, as the plan names them: its best limit leads, ``_interleave``).

    Only what the user said and cards count: the assistant does not have constraints
    (its messages carry ``NOT_LIMIT``)."""
    w = weights or ConstraintWeights()
    domains = [d for d in domains if d in DOMAINS]
    if not index.position or not domains:
        return []
    rows, said, groups = _candidates(index, q, w)
    if not len(rows):
        return []
    request, per_domain, standing = _closeness(index, rows, q.text, w)
    limit = index.limit[rows]
    fitted = _probability(index.learned[rows])
    if w.ask_mix:
        fitted = (1.0 - w.ask_mix) * fitted + w.ask_mix * _probability(index.learned_ask[rows])
    # float32 BLAS on one thread (``constraint_search``): simsimd's float16 product took
    # 1.7 ms for these 80 x 160 cosines against 0.4 ms
    near = np.asarray(index.vectors[rows], dtype=np.float32) \
        @ np.asarray(index.vectors[said], dtype=np.float32).T
    copies = _copies(groups, rows, index.kinds[rows] == KIND_CODES["message"], near,
                     w.repeat_threshold)
    standing = (standing - w.repeat * np.log1p(copies)).astype(np.float32)
    wanted = [DOMAINS.index(d) for d in domains]
    mine = per_domain[:, wanted]  # candidates x requested domains
    rest = np.stack([np.delete(per_domain, d, axis=1).max(axis=1) for d in wanted], axis=1)
    scores = (w.domain_limit * mine + w.relative * (mine - rest)
              + (w.request * request + w.limit * limit + w.learned * fitted + standing)[:, None])
    kinds = limit_domains(index.vectors[rows]) if w.learned_domain else None
    if kinds is not None:
        scores = scores + w.learned_domain * fitted[:, None] * kinds[:, wanted]
    in_domain = mine.max(axis=1)
    score = scores.max(axis=1)
    order = _interleave(scores)
    hits: list[SearchHit] = []
    kept: list[int] = []
    for n in order:
        row = int(rows[n])
        if kept and w.dup_threshold <= 1.0:
            vec = np.asarray(index.vectors[row], dtype=np.float32)
            if float((np.asarray(index.vectors[kept], dtype=np.float32) @ vec).max()) \
                    >= w.dup_threshold:
                continue  # the same line said again in other words: one slot is enough
        item = index.items[row]
        own = {"semantic": float(request[n]), "domain_limit": float(in_domain[n]),
               "limit": float(limit[n]), "salience": float(index.salience[row])}
        hits.append(make_hit(item, effective_status(item, q.now, index.is_outdated(item)),
                             float(score[n]), own))
        kept.append(row)
        if len(hits) >= q.k:
            break
    return hits


def _candidates(index: PairIndex, q: Query, w: ConstraintWeights) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.int64], DupGroups]:
    """(the ``pool`` rows best by the write-time limit score among the eligible rows at
    or above ``bar``, the ``learned_pool`` best by the first learned limit regression and the
    ``ask_pool`` best by the second; the messages
    among the ``reference`` best and those, where a candidate's copies are counted; the
    duplicate groups)."""
    groups, _ = index.derived()
    eligible = eligibility(index, q) & groups.representative
    eligible &= index.kinds != KIND_CODES["summary"]
    reference = _best_by(index.limit, np.flatnonzero(eligible & (index.limit >= w.bar)),
                         max(w.pool, w.reference))
    pool = _best_by(index.limit, reference, w.pool)
    for logit, n in ((index.learned, w.learned_pool), (index.learned_ask, w.ask_pool)):
        if n > 0:  # each learned regression's best rows: each holds limits the other misses
            best = _best_by(logit, np.flatnonzero(eligible & (logit >= w.learned_bar)), n)
            pool = np.union1d(pool, best)
            reference = np.union1d(reference, best)
    said = reference[index.kinds[reference] == KIND_CODES["message"]]
    return pool, said, groups


def _probability(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0))), dtype=np.float32)


def _best_by(score: npt.NDArray[np.float32], rows: npt.NDArray[np.int64],
             n: int) -> npt.NDArray[np.int64]:
    """The ``n`` of ``rows`` with the highest write-time ``score`` (all when fewer)."""
    if len(rows) <= n:
        return rows
    return rows[np.argpartition(-score[rows], n - 1)[:n]]


def _copies(groups: DupGroups, rows: npt.NDArray[np.int64], said: npt.NDArray[np.bool_],
            near: npt.NDArray[np.float32], threshold: float) -> npt.NDArray[np.float32]:
    """How many times each of ``rows`` was said besides once: for a message (``said``),
    its identical copies (its duplicate group, ``memfs.dedupe``) and the user's other
    lines at least ``threshold`` close (``near``: rows x the reference messages, each
    message among them). A card counts 0: written from a message, it restates it; the
    user did not say it twice (and dreaming merges cards that say the same)."""
    same = [groups.count[g] - 1 if g >= 0 else 0 for g in groups.group[rows].tolist()]
    others = np.maximum((near >= threshold).sum(axis=1) - 1, 0)
    copies = np.asarray(same, dtype=np.float32) + others
    return np.where(said, copies, 0.0).astype(np.float32)


def _closeness(index: PairIndex, rows: npt.NDArray[np.int64], text: str,
               w: ConstraintWeights) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32],
                                               npt.NDArray[np.float32]]:
    """For ``rows``: (cosine to the request, per domain of ``DOMAINS`` its best cosine
    to one of the domain's limits: rows x 5, and how much each reads as a standing
    circumstance rather than news: ``circumstance`` x its best cosine to ``CIRCUMSTANCES``
    minus ``news`` x its best cosine to ``NEWS``). One product of the candidates with the
    request and the prototypes (~75), on the float16 rows (``memfs.similarity.dot``):
    numpy's threaded BLAS took 7-30 ms for such a small product inside a busy process,
    against ~0.3 ms single-threaded."""
    fixed = index.cached_embedder()
    key = (fixed.name, "rank-prototypes")
    if key not in _VECTORS:
        _VECTORS[key] = np.concatenate([
            *(_prototypes(fixed, DOMAIN_LIMITS, d, "domain-limit") for d in DOMAINS),
            _prototypes(fixed, {"any": CIRCUMSTANCES}, "any", "circumstance"),
            _prototypes(fixed, {"any": NEWS}, "any", "news")])
    sizes = [1, *(len(DOMAIN_LIMITS[d]) for d in DOMAINS), len(CIRCUMSTANCES), len(NEWS)]
    sims = dot(np.asarray(index.vectors[rows], dtype=np.float16),
               np.concatenate([index.query_vector(text)[None, :], _VECTORS[key]]))
    ends = np.cumsum(sizes)
    best = [sims[:, a:b].max(axis=1) for a, b in zip(ends[:-1], ends[1:])]
    per_domain = np.stack(best[:len(DOMAINS)], axis=1)
    standing = w.circumstance * best[-2] - w.news * best[-1]
    return (sims[:, 0].astype(np.float32), per_domain.astype(np.float32),
            standing.astype(np.float32))


def _interleave(scores: npt.NDArray[np.float32]) -> list[int]:
    """Candidate order for several domains (``scores``: candidates x domains, the domains
    as the plan names them, the request's own first): the first domain's best first, then
    each other domain's best, in the order of their scores, then the rest by their best
    score. "Something fun in the city on saturday" asks about activities and places: the
    best place limit must not push the best activity limit out of the slots. And "what
    should I make for the barbecue?" asks for food before it touches drink, an outing and
    a place: with more domains than slots, the three others' limits must not push out the
    food limit (stop 28)."""
    best = scores.max(axis=1)
    order: list[int] = np.argsort(-best, kind="stable").tolist()
    if scores.shape[1] == 1:
        return order
    first = int(np.argmax(scores[:, 0]))
    others = sorted({int(np.argmax(scores[:, d])) for d in range(1, scores.shape[1])} - {first},
                    key=lambda n: -best[n])
    chosen = {first, *others}
    return [first, *others] + [n for n in order if n not in chosen]
