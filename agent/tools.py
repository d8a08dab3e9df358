"""Self-editing in the turn: tools the character may call to edit its own memory.

As Letta's agents do, the character can search its memory, write a card and mark one
stale while it talks. Each edit is a commit by author ``agent`` (``Memfs-Actor: agent``),
validated like any card, and can never touch ``system/`` — that stays the user's
(refused by ``memfs.repo.safe_path`` and by the hook).
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Sequence
from typing import Any

from memfs.agent.llm.base import LLM, Message, Tool, ToolCall

from memfs.cards import CARD_TYPES, Card, Source, utcnow
from memfs.errors import BadInputError, CardParseError, MemfsError
from memfs.gitio import AGENT
from memfs.ids import check_id
from memfs.store import MemoryPair

TOOLS = (
    Tool("search_memory", "Search your long-term memory about the user.",
         {"type": "object", "properties": {"query": {"type": "string"},
                                           "k": {"type": "integer"}},
          "required": ["query"]}),
    Tool("write_card", "Remember a durable fact, preference, plan, event, relationship or "
         "boundary about the user. The body must make sense alone, weeks later.",
         {"type": "object", "properties": {
             "type": {"type": "string", "enum": list(CARD_TYPES)},
             "body": {"type": "string"},
             "entities": {"type": "array", "items": {"type": "string"}},
             "salience": {"type": "number"},
             "expires": {"type": "string", "description": "YYYY-MM-DD, for plans"}},
          "required": ["type", "body"]}),
    Tool("mark_stale", "Mark a memory card as no longer true.",
         {"type": "object", "properties": {"id": {"type": "string"},
                                           "reason": {"type": "string"}},
          "required": ["id"]}),
)


def run_tool(pair: MemoryPair, call: ToolCall, session: str | None = None) -> str:
    """Carry out one tool call; the result text goes back to the model."""
    try:
        if call.name == "search_memory":
            return _search(pair, call.input)
        if call.name == "write_card":
            return _write(pair, call.input, session)
        if call.name == "mark_stale":
            return _mark_stale(pair, call.input, session)
    except MemfsError as exc:
        return f"error: {exc}"
    return f"error: unknown tool {call.name!r}"


def _search(pair: MemoryPair, args: dict[str, Any]) -> str:
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise BadInputError("search_memory: query must be a non-empty string")
    k = args.get("k", 5)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 10:
        raise BadInputError(f"search_memory: k must be a whole number from 1 to 10 (got {k!r})")
    hits = pair.search(query, k=k)
    return "\n".join(f"{h.id} [{h.kind}, {h.status}] {h.text}" for h in hits) or "nothing found"


def _write(pair: MemoryPair, args: dict[str, Any], session: str | None) -> str:
    now = utcnow()
    expires = args.get("expires")
    try:
        card = Card(id=f"c-{secrets.token_hex(3)}", type=str(args.get("type")),
                    body=str(args.get("body", "")).strip(),
                    entities=_names(args.get("entities")),
                    created=now, updated=now, salience=float(args.get("salience", 0.5)),
                    expires=dt.date.fromisoformat(expires) if expires else None,
                    source=Source(session, ()) if session else None)
        card = Card.from_text(card.to_text(), card.path)  # the same validation as any card
    except (ValueError, TypeError) as exc:
        raise BadInputError(f"write_card: {exc}") from None
    except CardParseError as exc:
        raise BadInputError(f"write_card: {exc.field}: {exc.reason}") from None
    pair.repo.commit({card.path: card.to_text()}, "card", f"agent writes {card.id}", AGENT,
                     session=session)
    return f"saved as {card.id}"


def _names(value: Any) -> tuple[str, ...]:
    """Entities as the model gave them: a list, or one name as a string."""
    if value is None or value == []:
        return ("user",)
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise BadInputError("write_card: entities must be a list of names")


def _mark_stale(pair: MemoryPair, args: dict[str, Any], session: str | None) -> str:
    card = pair.card(check_id(str(args.get("id", "")), "card id"))
    if card.status != "active":
        return f"{card.id} is already {card.status}"
    updated = card.evolve(status="stale", updated=utcnow())
    pair.repo.commit({card.path: updated.to_text()}, "card",
                     f"agent marks {card.id} stale: {args.get('reason') or 'no longer true'}",
                     AGENT, session=session)
    return f"{card.id} marked stale"


def reply_with_tools(llm: LLM, pair: MemoryPair, system: Sequence[str],
                     messages: Sequence[Message], session: str | None = None,
                     max_rounds: int = 4) -> tuple[str, list[str]]:
    """Let the model call memory tools until it answers in text; returns text and edits."""
    convo = [dict(m) for m in messages]
    edits: list[str] = []
    for _ in range(max_rounds):
        reply = llm.complete(system, convo, tools=TOOLS, max_tokens=1024)
        if not reply.tool_calls:
            return reply.text, edits
        results = []
        for call in reply.tool_calls:
            result = run_tool(pair, call, session)
            if call.name != "search_memory" and not result.startswith("error"):
                edits.append(result)
            results.append({"tool": call.name, "input": call.input, "result": result})
        # Plain-text tool turns work with every provider (and OpenAI-compatible servers).
        convo.append({"role": "assistant", "content": reply.text or "(using memory tools)"})
        convo.append({"role": "user", "content": "Tool results:\n" + json.dumps(results, ensure_ascii=False)})
    final = llm.complete(system, convo, max_tokens=1024)
    return final.text, edits
