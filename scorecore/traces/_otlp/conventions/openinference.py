"""Arize's OpenInference conventions (``openinference.span.kind``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from scorecore._core._reprs import short_repr
from scorecore.traces._otlp._values import (
    Malformed,
    json_text,
    last_text,
    maybe_json,
    text_or_none,
    usage,
)

OPENINFERENCE_KINDS: Final[Mapping[str, str]] = {
    "AGENT": "agent_run",
    "LLM": "model_generation",
    "TOOL": "tool_call",
}
"""``openinference.span.kind`` → span type; any other kind (``CHAIN``, ``RETRIEVER`` …) is a
``generic`` span."""

# Indexes of up to 9 digits: a longer one is not a message of a real span (and int() of more
# than 4,300 digits raises), so its key stays an ordinary attribute.
_OI_MESSAGE: Final = re.compile(r"llm\.(input|output)_messages\.(\d{1,9})\.message\.(.+)")
_OI_TOOL_CALL: Final = re.compile(r"tool_calls\.(\d{1,9})\.tool_call\.(.+)")
_OI_CONTENT: Final = re.compile(r"contents\.(\d{1,9})\.message_content\.(.+)")


def _oi_messages(attributes: Mapping[str, Any], direction: str) -> list[dict[str, object]] | None:
    """``llm.input_messages.N.message.*`` (flattened) as ``{"role", "content"}`` dicts."""
    found: dict[int, dict[str, Any]] = {}
    contents: dict[int, dict[int, str]] = {}
    for key, value in attributes.items():
        match = _OI_MESSAGE.fullmatch(key)
        if match is None or match.group(1) != direction:
            continue
        message = found.setdefault(int(match.group(2)), {"role": None, "content": ""})
        rest = match.group(3)
        if rest == "role":
            message["role"] = value
        elif rest == "content":
            message["content"] = value
        elif (content := _OI_CONTENT.fullmatch(rest)) and content.group(2) == "text":
            contents.setdefault(int(match.group(2)), {})[int(content.group(1))] = value
        elif call := _OI_TOOL_CALL.fullmatch(rest):
            calls = message.setdefault("toolCalls", {})
            entry = calls.setdefault(int(call.group(1)), {})
            entry[call.group(2)] = value
    if not found:
        return None
    out: list[dict[str, object]] = []
    for index in sorted(found):
        message = found[index]
        field = f"llm.{direction}_messages.{index}.message"
        if not isinstance(message["role"], str):
            raise Malformed(f"{field}.role", f"required, a string, "
                                              f"got {short_repr(message['role'])}")
        if index in contents and not message["content"]:
            message["content"] = "\n".join(str(contents[index][i]) for i in sorted(contents[index]))
        if not isinstance(message["content"], str):
            raise Malformed(f"{field}.content", f"must be a string, "
                                                 f"got {short_repr(message['content'])}")
        if "toolCalls" in message:
            message["toolCalls"] = [
                {"id": c.get("id"), "name": c.get("function.name"),
                 "arguments": maybe_json(c.get("function.arguments"))}
                for _, c in sorted(message["toolCalls"].items())
            ]
        out.append(message)
    return out


def _oi_value(attributes: Mapping[str, Any], key: str) -> object:
    value = attributes.get(key)
    if attributes.get(f"{key.rsplit('.', 1)[0]}.mime_type") == "application/json":
        return json_text(value, key)
    return value


def read_openinference(
    span_type: str, attributes: Mapping[str, Any], name: str
) -> dict[str, object]:
    if span_type == "agent_run":
        agent = text_or_none(attributes.get("agent.name")) or name
        value = _oi_value(attributes, "input.value")
        output = attributes.get("output.value")
        if output is not None and not isinstance(output, str):
            output = json.dumps(output)  # depth bounded by MAX_DEPTH when it was read
        return {"entity_type": "agent", "entity_name": agent, "entity_id": agent,
                "input": value, "output": None if output is None else {"text": output}}
    if span_type == "model_generation":
        inputs = _oi_messages(attributes, "input")
        text = last_text(_oi_messages(attributes, "output"))
        model = text_or_none(attributes.get("llm.model_name"))
        return {"entity_type": "llm", "entity_name": model, "entity_id": model,
                "input": {"messages": inputs} if inputs else None,
                "output": None if text is None else {"text": text},
                "mastra_attributes": {
                    "model": model,
                    "usage": usage(attributes, "llm.token_count.prompt",
                                    "llm.token_count.completion"),
                }}
    tool = text_or_none(attributes.get("tool.name")) or name
    return {"entity_type": "tool", "entity_name": tool, "entity_id": tool,
            "input": maybe_json(attributes.get("input.value")),
            "output": maybe_json(attributes.get("output.value"))}


