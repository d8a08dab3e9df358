"""Context assembly: exactly what the model sees on a turn, within one token budget.

Layers, in the order they are given room:
1. every file in ``system/`` at committed HEAD — always, whole, never dropped to fit;
2. ``summary.md`` at HEAD;
3. what the retrieval plan found (cards and past messages), only when the plan asks;
4. the recent window, newest messages first until the budget is spent.

The retrieval decision itself comes from above, as the ``Planner`` in the pair's
services (a model's tool call or the offline rules, ``agent/plan.py``).

The result is shaped for ``anthropic.messages.create(system=..., messages=...)``: system
block 0 is the ``system/`` block (stable every turn, so providers cache it), block 1 the
memory block.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memfs.atomic import atomic_write
from memfs.errors import BadInputError
from memfs.gitio import head_sha
from memfs.history import Message
from memfs.pins import parse_pins
from memfs.retrieval_plan import RetrievalPlan
from memfs.services import PlanRequest
from memfs.tokens import count_tokens
from memfs.window import current_window

if TYPE_CHECKING:
    from memfs.search import SearchHit
    from memfs.store import MemoryPair


@dataclass
class Context:
    system: list[str]
    messages: list[dict[str, str]]
    plan: RetrievalPlan
    hits: list[SearchHit] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    head: str = ""

    @property
    def system_text(self) -> str:
        return "\n\n".join(block for block in self.system if block)

    def to_json(self) -> dict[str, Any]:
        """The ``memfs context --json`` document."""
        return {"system": self.system_text, "messages": self.messages,
                "plan": self.plan.to_dict(), "tokens": self.tokens,
                "retrieved": [h.to_json() for h in self.hits], "warnings": self.warnings,
                "head": self.head}

    def anthropic_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``client.messages.create`` (block 0 cached)."""
        blocks: list[dict[str, Any]] = []
        for i, text in enumerate(b for b in self.system if b):
            block: dict[str, Any] = {"type": "text", "text": text}
            if i == 0:
                block["cache_control"] = {"type": "ephemeral"}
            blocks.append(block)
        return {"system": blocks, "messages": self.messages}


def system_block(pair: MemoryPair, rev: str = "HEAD") -> tuple[str, str]:
    """All of ``system/`` at ``rev`` (persona first, then pins, then the rest) and the pins."""
    paths = pair.repo.list_head("system", rev)
    order = sorted(paths, key=lambda p: (p != "system/persona.md", p != "system/pins.md", p))
    parts, pins = [], ""
    for path in order:
        text = pair.repo.read_head(path, rev) or ""
        if path == "system/pins.md":
            pins = "\n".join(f"- {t}" for t in parse_pins(text).texts())
            text = "# Pinned by the user (always true, always relevant)\n\n" + pins if pins else ""
        if text.strip():
            parts.append(text.strip())
    return "\n\n".join(parts), pins


def build_context(pair: MemoryPair, message: str, *, now: dt.datetime | None = None,
                  window: list[Message] | None = None) -> Context:
    """Assemble the context for ``message`` (read-only: nothing is appended or committed)."""
    if not message.strip():
        raise BadInputError("message: is empty")
    config = pair.config
    head, system, pins, summary = committed_layers(pair)
    window = current_window(pair) if window is None else window
    if window and window[-1].role == "user" and window[-1].content == message:
        window = window[:-1]  # the message was already appended to history by the turn
    recent = [m.content for m in window[-12:]]
    request = PlanRequest(message, recent, summary, pins, memory_names(pair, head))
    plan = pair.store.services.planner.plan(pair, request)
    hits = _retrieve(pair, plan, window, now, message) if plan.need_retrieval else []
    memory, used = _memory_block(summary, hits, config.retrieval_budget)
    tokens = {"system": count_tokens(system), "summary": count_tokens(summary),
              "retrieved": used}
    room = config.context_budget - sum(tokens.values()) - count_tokens(message)
    messages, tokens["window"] = _fit_window(window, message, room)
    ctx = Context(system=[system, memory], messages=messages, plan=plan, hits=hits,
                  tokens=tokens, head=head)
    _warn(ctx, pair, pins)
    return ctx


_LAYERS: dict[str, tuple[str, str, str, str]] = {}
_LAYERS_LOCK = threading.Lock()


def committed_layers(pair: MemoryPair) -> tuple[str, str, str, str]:
    """(HEAD, the ``system/`` block, the pins, the summary) at committed HEAD.

    What a commit holds never changes, so they are kept per pair and read again only when
    HEAD moves: a turn reads HEAD from the ref files and starts no git process."""
    head = head_sha(pair.root) or pair.repo.head()
    key = os.path.abspath(pair.root)
    with _LAYERS_LOCK:
        cached = _LAYERS.get(key)
    if cached is not None and cached[0] == head:
        return cached
    system, pins = system_block(pair, head)
    layers = (head, system, pins, (pair.summary(head) or "").strip())
    with _LAYERS_LOCK:
        _LAYERS[key] = layers
    return layers


def memory_names(pair: MemoryPair, head: str) -> frozenset[str]:
    """Lower-cased entities of the active cards at ``head``, cached per commit in .memfs/."""
    cache = pair.root / ".memfs" / "names.json"
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("head") == head:
            return frozenset(data["names"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # derived data: anything unreadable is recomputed
    names = sorted({e.lower() for c in pair.cards(rev=head) if c.status == "active"
                    for e in c.entities if e.lower() != "user"})
    atomic_write(cache, json.dumps({"head": head, "names": names}) + "\n")
    return frozenset(names)


NEIGHBOUR_CHARS = 400
"""A hit's neighbouring turn is quoted up to this many characters."""
CONSTRAINT_SLOTS = 3
"""Of ``search_k`` slots, how many a suggestion gives to its domains' constraints."""


def _retrieve(pair: MemoryPair, plan: RetrievalPlan, window: list[Message],
              now: dt.datetime | None, message: str = "") -> list[SearchHit]:
    in_window = {m.id for m in window}
    k = pair.config.search_k
    # The window and the summary are in front of the model already: retrieving them again
    # only costs slots and tokens, so the search never considers them.
    hits = pair.search(plan.search_query, k=k, time_scope=plan.time_scope,
                       entities=list(plan.entities), now=now, kinds=("card", "message"),
                       exclude=in_window)
    if plan.constraint_domains:
        hits = _with_constraints(pair, plan, hits, window, k, now, message)
    return hits[:k]


def _with_constraints(pair: MemoryPair, plan: RetrievalPlan, hits: list[SearchHit],
                      window: list[Message], k: int, now: dt.datetime | None,
                      message: str = "") -> list[SearchHit]:
    """``hits`` with up to ``CONSTRAINT_SLOTS`` of their last places given to the
    constraints and preferences of the plan's domains (a constraint the plain search also
    found moves into those places rather than appearing twice). Mid-conversation the
    constraint search reads ``message`` with the window's last turns (``memfs.constraints.
    occasion``: who it is for, and what for), the text the planner classified, so the
    window is embedded once a turn at most."""
    from memfs.constraints import occasion
    from memfs.search import constraint_search

    in_window = {m.id for m in window}
    slots = min(CONSTRAINT_SLOTS, max(1, k // 2))
    recent = [m.content for m in window]
    request = occasion(recent, message.strip()) if recent and message.strip() else plan.search_query
    extra = constraint_search(pair, request, plan.constraint_domains, k=slots,
                              now=now, exclude=in_window)
    chosen = {h.id for h in extra}
    keep = [h for h in hits if h.id not in chosen][:max(0, k - len(extra))]
    return keep + extra


def _memory_block(summary: str, hits: list[SearchHit], budget: int) -> tuple[str, int]:
    parts = []
    if summary:
        parts.append("# Summary of earlier conversation\n\n" + summary)
    lines: list[str] = []
    used = 0
    for hit in hits:
        line = f"- {_label(hit)} {' '.join(hit.text.split())}"
        if hit.neighbour is not None:
            said = "you replied" if hit.neighbour["role"] == "assistant" else "the user said"
            line += f" ({said}: {' '.join(hit.neighbour['text'].split())[:NEIGHBOUR_CHARS]})"
        cost = count_tokens(line)
        if used + cost > budget and lines:
            break
        lines.append(line)
        used += cost
    if lines:
        parts.append("# Memories that may be relevant (retrieved)\n\n" + "\n".join(lines))
    return "\n\n".join(parts), used


def _label(hit: SearchHit) -> str:
    if hit.kind == "card":
        return f"[memory {hit.id}, {hit.type or 'card'}{'' if hit.status == 'active' else ', ' + hit.status}]"
    if hit.kind == "message":
        if hit.count > 1:
            return (f"[past message, said {hit.count} times, {(hit.first_said or '')[:10]}"
                    f" to {(hit.last_said or '')[:10]}]")
        return f"[past message {(hit.ts or '')[:10]}]"
    return "[summary]"


def _fit_window(window: list[Message], message: str, room: int) -> tuple[list[dict[str, str]], int]:
    """Newest messages that fit ``room`` tokens, roles alternating, ending with ``message``."""
    start, used = len(window), 0
    while start > 0:
        cost = count_tokens(window[start - 1].content)
        if used + cost > room:
            break
        start, used = start - 1, used + cost
    while start < len(window) and window[start].role != "user":
        used -= count_tokens(window[start].content)
        start += 1
    kept = window[start:]
    messages: list[dict[str, str]] = []
    for role, content in [*((k.role, k.content) for k in kept), ("user", message)]:
        if messages and messages[-1]["role"] == role:
            messages[-1] = {"role": role, "content": messages[-1]["content"] + "\n\n" + content}
        else:
            messages.append({"role": role, "content": content})
    return messages, used


def _warn(ctx: Context, pair: MemoryPair, pins: str) -> None:
    pin_tokens = count_tokens(pins)
    if pin_tokens > pair.config.pins_budget:
        ctx.warnings.append(f"pins use ~{pin_tokens} tokens, over the pins budget of "
                            f"{pair.config.pins_budget}: they are kept, but crowd every turn")
    if ctx.tokens["system"] + ctx.tokens["summary"] > pair.config.context_budget:
        ctx.warnings.append("system/ and the summary alone exceed the context budget")
