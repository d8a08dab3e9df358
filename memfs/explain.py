"""Why a search hit ranked where it did, and what each layer of the context costs.

``memfs search --explain`` prints raw signals; a person needs them in words, with the
weight each one carries and how much of the score it made (``memfs.ranking.fuse`` is a
weighted sum; the status and "newer similar record" factors multiply it). The context
view turns ``Context.tokens`` into the layers of DESIGN.md, in the order they get room.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memfs.ranking import Weights

if TYPE_CHECKING:
    from memfs.context import Context
    from memfs.search import SearchHit

MEANINGS = {
    "semantic": "similar in meaning to the query (embedding cosine)",
    "bm25": "shares the query's words, framing words left out (BM25, scaled to the best match"
            " or to the query's ideal match when that is higher)",
    "entity": "share of the names in the query that this record mentions",
    "recency": "how recent it is (halves every 30 days, with a floor)",
    "salience": "how much it matters to the user (set when the card or message was written)",
    "type_match": "a card of the type the retrieval plan asked for",
    "status_factor": "stale or expired: kept only part of its score",
    "newer_similar": "a newer, very similar record exists, so this one yields",
    # issue 12
    "neighbour": "the turn before or after it matches the query (evidence spread over turns)",
    "time_match": "said inside the time the query names (\"last month\", \"in May\")",
    "speaker": "said by the assistant, and the query asks what the assistant said",
    "salience_factor": "small talk or filler (low salience, set when the message was written)"
                       " keeps only part of its score",
    "older_similar": "\"the first time\": an older, very similar record exists, so this one yields",
    "diversity_penalty": "subtracted: how much it repeats a better hit's topic (MMR)",
    "copies": "how many times this text (or a near-identical one) was said: one hit for all",
    # issue 12, second round
    "request_factor": "the query asks for a suggestion and this is the assistant's turn:"
                      " the user's own words come first, so it keeps only part of its score",
    "topic": "about the suggestion's domain (food, drink, activity, gift, place)",
    "limit": "sounds like a limit (cannot, must avoid, gave up) rather than personal news",
    "domain_limit": "sounds like a limit of the requested domain (a food limit for a meal)",
    # issue 12, fourth round
    "topic_query": "the query asks for a suggestion: its vector was moved this share towards"
                   " its topic words alone, framing left out (\"activities evening\")",
}
_FACTORS = {"status_factor", "newer_similar", "older_similar", "salience_factor",
            "diversity_penalty", "copies", "request_factor", "topic_query"}


@dataclass(frozen=True)
class Signal:
    name: str
    value: float
    weight: float | None
    """None for a factor that multiplies the score rather than adding to it."""
    contribution: float | None
    meaning: str


def explain(hit: SearchHit, weights: Weights | None = None) -> list[Signal]:
    """Every signal of ``hit``: added ones by contribution, then the factors."""
    weights = weights or Weights()
    added, factors = [], []
    for name, value in hit.signals.items():
        meaning = MEANINGS.get(name, name)
        if name in _FACTORS or not hasattr(weights, name):
            factors.append(Signal(name, value, None, None, meaning))
        else:
            weight = float(getattr(weights, name))
            added.append(Signal(name, value, weight, weight * value, meaning))
    added.sort(key=lambda s: -(s.contribution or 0.0))
    return added + factors


@dataclass(frozen=True)
class Layer:
    name: str
    tokens: int
    text: str


def layers(ctx: Context) -> list[Layer]:
    """The context as the model gets it: system/ (always whole), the memory block
    (summary, then what was retrieved), and the recent window."""
    memory = ctx.system[1] if len(ctx.system) > 1 else ""
    window = "\n".join(f"{m['role']}: {m['content']}" for m in ctx.messages)
    return [Layer("system", ctx.tokens.get("system", 0), ctx.system[0] if ctx.system else ""),
            Layer("summary", ctx.tokens.get("summary", 0), ""),
            Layer("retrieved", ctx.tokens.get("retrieved", 0), memory),
            Layer("window", ctx.tokens.get("window", 0), window)]
