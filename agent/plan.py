"""The retrieval decision: does this turn need long-term memory, and what to look for.

Searching on every turn is not free and not harmless: when the answer is already in the
recent window, the summary or the pins, a search can only add a chance of pulling in an
outdated record ("the meeting is on Thursday") next to the current one. So before any
search the companion writes a ``RetrievalPlan``; ``need_retrieval`` false means "answer
from what is already in context".

Two deciders produce the same plan shape: ``plan_with_llm`` (a forced tool call) and
``plan_offline`` (deterministic rules, weaker but honest, used by the offline mode, the
demo and the tests). ``decide`` picks one. ``agent/evals/decision.py`` measures both on
hand-written probes, the "no" cases as much as the "yes" cases.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from memfs.agent.llm.base import LLM, Tool
from memfs.agent.plan_rules import (
    Classify,
    Needs,
    extract_entities,
    plan_offline,
    search_query,
    suggestion,
)

from memfs.cards import CARD_TYPES
from memfs.errors import LLMError
from memfs.retrieval_plan import SUGGESTION_DOMAINS, TIME_SCOPES, RetrievalPlan

__all__ = ["TIME_SCOPES", "RetrievalPlan", "decide", "extract_entities", "plan_offline",
           "plan_with_llm", "search_query"]

PLAN_MAX_TOKENS = 400


# --------------------------------------------------------------------------- deciders


def decide(
    llm: LLM | None, message: str, window: Sequence[str], summary: str = "", pins: str = "",
    memory_names: Collection[str] = (), classify: Classify | None = None,
    needs: Needs | None = None, need_threshold: float = 1.01,
) -> RetrievalPlan:
    """The plan for this turn: rules when there is no model or the model is the offline
    one (whose "decision" would only be these same rules), otherwise the model.
    ``memory_names``: lower-cased names long-term memory knows (card entities);
    ``classify``: a request's suggestion domains by meaning (the embedding model);
    ``needs``, ``need_threshold``: see ``plan_offline``."""
    if llm is None or getattr(llm, "name", "") == "offline":
        return plan_offline(message, window, summary, pins, memory_names=memory_names,
                            classify=classify, needs=needs, need_threshold=need_threshold)
    return plan_with_llm(llm, message, window, summary, pins, classify=classify)


PLAN_TOOL = Tool(
    name="retrieval_plan",
    description="Decide whether this turn needs a search of long-term memory, and plan it.",
    input_schema={
        "type": "object",
        "properties": {
            "need_retrieval": {"type": "boolean"},
            "memory_types": {"type": "array",
                             "items": {"type": "string", "enum": list(CARD_TYPES)}},
            "entities": {"type": "array", "items": {"type": "string"}},
            "time_scope": {"type": "string", "enum": list(TIME_SCOPES)},
            "search_query": {"type": "string"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string"},
            "constraint_domains": {"type": "array",
                                   "items": {"type": "string", "enum": list(SUGGESTION_DOMAINS)}},
        },
        "required": ["need_retrieval", "memory_types", "entities", "time_scope",
                     "search_query", "confidence", "reason"],
        "additionalProperties": False,
    },
)


def plan_with_llm(
    llm: LLM, message: str, window: Sequence[str], summary: str = "", pins: str = "",
    *, max_tokens: int = PLAN_MAX_TOKENS, classify: Classify | None = None,
) -> RetrievalPlan:
    """Ask the model for a plan through a forced tool call. A provider failure or an
    unusable answer falls back to ``plan_offline``: a turn must never fail because the
    planner did, and the reason says that it fell back. A plan that searches for a
    suggestion but names no ``constraint_domains`` gets the ones ``classify`` finds:
    missing a constraint is the failure memory exists to prevent."""
    from memfs.agent.llm.structured import complete_json

    messages = [{"role": "user", "content": render_request(message, window, summary, pins)}]
    try:
        data = complete_json(llm, [plan_prompt()], messages, PLAN_TOOL, max_tokens=max_tokens)
        plan = RetrievalPlan.from_dict(data, error=LLMError)
    except LLMError as exc:
        fallback = plan_offline(message, window, summary, pins, classify=classify)
        return replace(fallback, reason=f"llm failed ({exc}); offline rules: {fallback.reason}")
    if plan.need_retrieval and not plan.constraint_domains and classify is not None:
        suggests, domains = suggestion(message, classify)
        if suggests and domains:
            plan = replace(plan, constraint_domains=domains)
    return plan


def plan_prompt() -> str:
    """The planner's system prompt, ``templates/plan_prompt.md``."""
    from memfs.assets import read_template

    return read_template("plan_prompt.md")


def render_request(message: str, window: Sequence[str], summary: str, pins: str) -> str:
    """The user turn the planner sees: everything already in context, then the message."""
    lines = "\n".join(f"- {m}" for m in window) or "(empty)"
    return (f"<pins>\n{pins.strip() or '(none)'}\n</pins>\n"
            f"<summary>\n{summary.strip() or '(none)'}\n</summary>\n"
            f"<recent_window>\n{lines}\n</recent_window>\n"
            f"<message>\n{message}\n</message>")
