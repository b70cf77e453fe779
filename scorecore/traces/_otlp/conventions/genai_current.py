"""The OpenTelemetry GenAI semantic conventions (``gen_ai.operation.name``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from scorecore._core._reprs import short_repr
from scorecore.traces._otlp._values import (
    Malformed,
    json_text,
    last_text,
    maybe_json,
    text_or_none,
    usage,
)
from scorecore.traces._otlp.conventions.genai_events import span_events
from scorecore.traces._otlp.conventions.genai_legacy import legacy_messages

GENAI_OPERATIONS: Final[Mapping[str, str]] = {
    "invoke_agent": "agent_run",
    "chat": "model_generation",
    "text_completion": "model_generation",
    "generate_content": "model_generation",
    "execute_tool": "tool_call",
}
"""``gen_ai.operation.name`` → span type; any other operation (``embeddings``,
``create_agent`` …) is a ``generic`` span."""



def _part_text(parts: object, field: str) -> str:
    if not isinstance(parts, list):
        raise Malformed(field, f"parts must be a list, got {short_repr(parts)}")
    texts = [p.get("content") for p in parts
             if isinstance(p, Mapping) and p.get("type") == "text"
             and isinstance(p.get("content"), str)]
    return "\n".join(cast(list[str], texts))


def _genai_messages(attributes: Mapping[str, object], key: str) -> list[dict[str, Any]] | None:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` as ``{"role", "content"}`` dicts."""
    if key not in attributes:
        return None
    messages = json_text(attributes[key], key)
    if not isinstance(messages, list):
        raise Malformed(key, f"must be a list of messages, got {short_repr(messages)}")
    out: list[dict[str, object]] = []
    for index, message in enumerate(messages):
        where = f"{key}[{index}]"
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise Malformed(where, f"must be a message with a string role, "
                                    f"got {short_repr(message)}")
        parts = message.get("parts", [])
        converted: dict[str, object] = {"role": message["role"],
                                     "content": _part_text(parts, where)}
        calls = [{"id": p.get("id"), "name": p.get("name"), "arguments": p.get("arguments")}
                 for p in parts if isinstance(p, Mapping) and p.get("type") == "tool_call"]
        if calls:
            converted["toolCalls"] = calls
        results = [{"id": p.get("id"), "result": p.get("response")}
                   for p in parts if isinstance(p, Mapping)
                   and p.get("type") == "tool_call_response"]
        if results:
            converted["toolResults"] = results
        out.append(converted)
    return out


def _system_instructions(attributes: Mapping[str, object]) -> list[dict[str, object]]:
    key = "gen_ai.system_instructions"
    if key not in attributes:
        return []
    parts = json_text(attributes[key], key)
    text = _part_text(parts, key)
    return [{"role": "system", "content": text}] if text else []


def _first(attributes: Mapping[str, object], keys: tuple[str, ...]) -> object:
    return next((attributes[k] for k in keys if attributes.get(k) is not None), None)


TOOL_ARGUMENTS: Final = ("gen_ai.tool.call.arguments", "tool_arguments")
"""Where a tool span's arguments are, first found wins (``tool_arguments``: pydantic-ai's
formats 1 and 2)."""
TOOL_RESULT: Final = ("gen_ai.tool.call.result", "tool_response")
AGENT_NAME: Final = ("gen_ai.agent.name", "agent_name")


def read_genai(span_type: str, attributes: Mapping[str, object], name: str = "") -> dict[str, Any]:
    """A GenAI span's fields (``name`` is unused: GenAI names things in attributes)."""
    if span_type == "agent_run":
        agent = text_or_none(_first(attributes, AGENT_NAME))
        inputs = _genai_messages(attributes, "gen_ai.input.messages")
        outputs = _genai_messages(attributes, "gen_ai.output.messages")
        text = last_text(outputs)
        final = attributes.get("final_result")  # pydantic-ai 1.x's agent run span
        if text is None and isinstance(final, str):
            text = final
        return {"entity_type": "agent", "entity_name": agent,
                "entity_id": text_or_none(attributes.get("gen_ai.agent.id")) or agent,
                "input": inputs, "output": None if text is None else {"text": text}}
    if span_type == "model_generation":
        attributes = {**attributes, **span_events(attributes), **legacy_messages(attributes)}
        inputs = _genai_messages(attributes, "gen_ai.input.messages")
        outputs = _genai_messages(attributes, "gen_ai.output.messages")
        text = last_text(outputs)
        # OpenLIT 1.45 writes the system prompt both ways: as instructions and as a message
        instructions = [m for m in _system_instructions(attributes) if m not in (inputs or [])]
        messages = instructions + (inputs or [])
        model = (text_or_none(attributes.get("gen_ai.response.model"))
                 or text_or_none(attributes.get("gen_ai.request.model")))
        reasons = attributes.get("gen_ai.response.finish_reasons")
        extra: dict[str, object] = {"model": model,
                                 "usage": usage(attributes, "gen_ai.usage.input_tokens",
                                                 "gen_ai.usage.output_tokens")}
        if isinstance(reasons, list) and reasons:
            extra["finishReason"] = reasons[0]
        calls = [c for m in outputs or [] for c in m.get("toolCalls", [])]
        if calls:
            extra["toolCalls"] = calls  # the tool calls the model asked for, by id
        return {"entity_type": "llm", "entity_name": model, "entity_id": model,
                "input": {"messages": messages} if messages else None,
                "output": None if text is None else {"text": text},
                "mastra_attributes": extra}
    tool = text_or_none(attributes.get("gen_ai.tool.name"))
    return {"entity_type": "tool", "entity_name": tool, "entity_id": tool,
            "input": maybe_json(_first(attributes, TOOL_ARGUMENTS)),
            "output": maybe_json(_first(attributes, TOOL_RESULT))}


