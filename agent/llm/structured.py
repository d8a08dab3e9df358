"""Structured output: force one tool call and get its input as a validated dict.

Dreaming and the retrieval decision need JSON, not prose. The reliable way to get it from
either provider is to offer one tool and force ``tool_choice`` to it. Models still slip
(a missing required field, a string where an array belongs, no call at all, especially
small local models), so ``complete_json`` checks the input against the tool's schema and
makes ONE repair attempt that tells the model exactly what was wrong. A second failure is
an ``LLMError``: the caller decides what to do (dreaming retries next cycle).

The validator covers the subset of JSON Schema our tool schemas use (``type``, ``enum``,
``required``, ``properties``, ``additionalProperties: false``, ``items``, ``minimum``,
``maximum``, ``minItems``, ``maxItems``); ``jsonschema`` is not a dependency.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memfs.agent.llm.base import LLM, Completion, Message, Tool

from memfs.errors import LLMError

MAX_PROBLEMS = 8

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def complete_json(
    llm: LLM,
    system: Sequence[str],
    messages: Sequence[Message],
    tool: Tool,
    *,
    max_tokens: int = 1024,
    schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Call ``llm`` forcing ``tool``; return its input once it matches ``tool.input_schema``.

    ``schema`` checks less than the tool advertises, for callers that validate the parts
    themselves (dreaming drops one bad op instead of repairing a whole answer).
    Raises ``LLMError`` when the provider cannot do tool calls (offline) or when the reply
    is still unusable after one repair attempt.
    """
    if llm.name == "offline":
        raise LLMError("the offline provider cannot produce structured output; use the rules")
    conversation = list(messages)
    problems: list[str] = []
    for attempt in range(2):
        reply = llm.complete(
            system, conversation, tools=[tool], tool_choice=tool.name, max_tokens=max_tokens
        )
        payload, problems = _extract(reply, tool, schema or tool.input_schema)
        if payload is not None and not problems:
            return payload
        if attempt == 0:
            conversation += _repair_turns(reply, tool, problems)
    raise LLMError(
        f"{llm.name}: the {tool.name} tool input is still invalid after a repair: "
        + "; ".join(problems)
    )


TRUNCATED = "the answer was cut off at the output cap (stop_reason max_tokens)"


def _extract(reply: Completion, tool: Tool,
             schema: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    if reply.stop_reason in ("max_tokens", "length"):
        return None, [f"{TRUNCATED}; answer again, shorter: fewer ops, shorter bodies"]
    for call in reply.tool_calls:
        if call.name == tool.name:
            return call.input, validate(call.input, schema)
    if reply.tool_calls:
        called = ", ".join(call.name for call in reply.tool_calls)
        return None, [f"called {called} instead of {tool.name}"]
    return None, [f"answered in prose instead of calling {tool.name}"]


def _repair_turns(reply: Completion, tool: Tool, problems: list[str]) -> list[Message]:
    """What the model said, then what was wrong with it, as two plain-text turns."""
    mine = next((c for c in reply.tool_calls if c.name == tool.name), None)
    if mine is not None:
        said = f"I called {tool.name} with: {json.dumps(mine.input, ensure_ascii=False)[:4000]}"
    else:
        said = reply.text.strip()[:2000] or f"(I did not call {tool.name}.)"
    fix = (
        f"That {tool.name} call could not be used: {'; '.join(problems)}. "
        f"Call {tool.name} again, with input that satisfies its input schema exactly."
    )
    return [{"role": "assistant", "content": said}, {"role": "user", "content": fix}]


def validate(value: Any, schema: dict[str, Any], path: str = "input") -> list[str]:
    """Problems with ``value`` under ``schema``, each naming where (``input.ops[2].type``)."""
    problems = _check_type(value, schema, path)
    if problems:
        return problems
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        problems += _check_object(value, schema, path)
    elif isinstance(value, list):
        problems += _check_array(value, schema, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path}: {value} is above the maximum {schema['maximum']}")
    return problems[:MAX_PROBLEMS]


def _check_type(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    expected = schema.get("type")
    if expected is None:
        return []
    names = expected if isinstance(expected, list) else [expected]
    for name in names:
        kinds = _TYPES.get(name, (object,))
        is_bool = isinstance(value, bool)
        if isinstance(value, kinds) and (name == "boolean" or not is_bool):
            return []
    return [f"{path}: expected {' or '.join(names)}, got {_json_type(value)}"]


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
    properties: dict[str, Any] = schema.get("properties", {})
    problems = [
        f"{path}.{key}: required but missing"
        for key in schema.get("required", [])
        if key not in value
    ]
    for key, item in value.items():
        if key in properties:
            problems += validate(item, properties[key], f"{path}.{key}")
        elif schema.get("additionalProperties") is False:
            problems.append(f"{path}.{key}: not an allowed field")
    return problems


def _check_array(value: list[Any], schema: dict[str, Any], path: str) -> list[str]:
    problems: list[str] = []
    if "minItems" in schema and len(value) < schema["minItems"]:
        problems.append(f"{path}: needs at least {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        problems.append(f"{path}: allows at most {schema['maxItems']} items")
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            problems += validate(item, items, f"{path}[{index}]")
    return problems


def _json_type(value: Any) -> str:
    for name, kinds in _TYPES.items():
        if isinstance(value, kinds) and (name == "boolean") == isinstance(value, bool):
            return name
    return type(value).__name__
