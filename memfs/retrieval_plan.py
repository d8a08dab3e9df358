"""The retrieval plan: the shape of the decision a turn makes before it searches.

The shape lives in the storage layer (context assembly reads it); who decides it — a
model's tool call or offline rules — is the agent layer's business
(``agent/plan.py``), handed to the storage layer as a ``Planner``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from memfs.cards import CARD_TYPES
from memfs.errors import BadInputError, MemfsError

TIME_SCOPES = ("any", "most_recent", "past")
SUGGESTION_DOMAINS = ("food", "drink", "activity", "gift", "place")
"""Domains whose constraints and preferences a suggestion must respect (``memfs.constraints``)."""

ABOUT_ASSISTANT = re.compile(
    r"\byou(?:'d| had| have)?\s+(?:said|told|mentioned|suggested|recommended|gave|listed|"
    r"explained|wrote|described|provided|shared|proposed|came up with)\b|"
    r"\bdid you (?:say|tell|mention|suggest|recommend|give|list|explain|write|describe|"
    r"provide|share|propose)\b|"
    r"\byour (?:suggestion|recommendation|advice|answer|list|idea)s?\b|"
    r"\b(?:our|the) (?:previous|last|earlier) (?:chat|conversation|discussion)\b|"
    r"\bremind me\b(?! (?:of |about )?(?:what|when|where|who|how|why)? ?(?:i|my)\b)",
    re.I)
"""The question asks what the assistant said: its turns are the evidence, not filler
(``memfs.ranker``), and it asks for no new suggestion ("which cocktail did you recommend?":
the planner). Here, not in the ranker, so the offline planner needs no numpy."""


@dataclass(frozen=True)
class RetrievalPlan:
    """What the retrieval step should do for one turn (see the module docstring)."""

    need_retrieval: bool
    memory_types: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    time_scope: str = "any"
    search_query: str = ""
    confidence: float = 0.5
    reason: str = ""
    constraint_domains: tuple[str, ...] = ()
    """For a request for a suggestion: the domains it touches, what it asks for first
    (``memfs.constraints.classify_request`` names the nearest first). Their constraints and
    preferences are searched too, since they rarely share words with the request; the first
    domain's best limit keeps a slot whatever the others' score (stop 28)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["memory_types"] = list(self.memory_types)
        data["entities"] = list(self.entities)
        data["constraint_domains"] = list(self.constraint_domains)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, error: type[MemfsError] = BadInputError
    ) -> RetrievalPlan:
        """Validate ``data`` field by field. ``error`` is the class raised on a bad field:
        ``BadInputError`` for files a person wrote, ``LLMError`` for a model's answer."""
        if not isinstance(data, Mapping):
            raise error(f"retrieval plan: expected an object, got {type(data).__name__}")
        need = _field(data, "need_retrieval", bool, error)
        types = _str_list(data, "memory_types", error)
        bad = [t for t in types if t not in CARD_TYPES]
        if bad:
            raise error(f"retrieval plan: memory_types: unknown type {bad[0]!r} "
                        f"(allowed: {', '.join(CARD_TYPES)})")
        scope = _field(data, "time_scope", str, error)
        if scope not in TIME_SCOPES:
            raise error(f"retrieval plan: time_scope: {scope!r} is not one of {TIME_SCOPES}")
        query = _field(data, "search_query", str, error).strip()
        if need and not query:
            raise error("retrieval plan: search_query: empty although need_retrieval is true")
        conf = data.get("confidence")
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
            raise error(f"retrieval plan: confidence: {conf!r} is not a number in [0, 1]")
        reason = data.get("reason", "")
        if not isinstance(reason, str):
            raise error("retrieval plan: reason: expected a string")
        domains = _str_list(data, "constraint_domains", error) \
            if "constraint_domains" in data else []
        odd = [d for d in domains if d not in SUGGESTION_DOMAINS]
        if odd:
            raise error(f"retrieval plan: constraint_domains: unknown domain {odd[0]!r} "
                        f"(allowed: {', '.join(SUGGESTION_DOMAINS)})")
        return cls(need, tuple(types), tuple(_str_list(data, "entities", error)), scope,
                   query, float(conf), reason, tuple(dict.fromkeys(domains)))

    @classmethod
    def from_json(cls, text: str, *, error: type[MemfsError] = BadInputError) -> RetrievalPlan:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"retrieval plan: not valid JSON: {exc}") from exc
        return cls.from_dict(data, error=error)


def _field(data: Mapping[str, Any], name: str, kind: type, error: type[MemfsError]) -> Any:
    if name not in data:
        raise error(f"retrieval plan: {name}: missing")
    value = data[name]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise error(f"retrieval plan: {name}: expected {kind.__name__}, "
                    f"got {type(value).__name__}")
    return value


def _str_list(data: Mapping[str, Any], name: str, error: type[MemfsError]) -> list[str]:
    value = _field(data, name, list, error)
    if not all(isinstance(v, str) for v in value):
        raise error(f"retrieval plan: {name}: every item must be a string")
    return list(value)
