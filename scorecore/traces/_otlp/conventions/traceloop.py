"""OpenLLMetry / Traceloop: ``traceloop.span.kind`` for the spans its SDK's decorators make
(``@agent``, ``@tool``), and ``llm.request.type`` for its model-call instrumentations.

A decorated span keeps the function's call as ``traceloop.entity.input`` (JSON: ``{"args": [...],
"kwargs": {...}}``) and its return value as ``traceloop.entity.output``; its name is
``traceloop.entity.name``. Model spans carry the older GenAI attributes
(``gen_ai.prompt.N.*``), read by the GenAI reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from scorecore.traces._otlp._values import maybe_json, serialized, text_or_none
from scorecore.traces._otlp.conventions.genai_current import read_genai

TRACELOOP_KINDS: Final[Mapping[str, str]] = {"agent": "agent_run", "tool": "tool_call"}
"""``traceloop.span.kind`` → span type (``workflow`` and ``task`` stay generic)."""

LLM_REQUEST_TYPES: Final[Mapping[str, str]] = {
    "chat": "model_generation", "completion": "model_generation",
}
"""``llm.request.type`` → span type."""


def _arguments(value: object) -> object:
    # the decorator records the call; a tool's arguments are its keyword arguments, or its
    # one positional argument
    call = maybe_json(value)
    if isinstance(call, Mapping) and set(call) <= {"args", "kwargs"}:
        args, kwargs = call.get("args") or [], call.get("kwargs") or {}
        if kwargs or not args:
            return kwargs
        return args[0] if isinstance(args, list) and len(args) == 1 else args
    return call


def read_traceloop(
    span_type: str, attributes: Mapping[str, object], name: str
) -> dict[str, object]:
    """A Traceloop-decorated span's fields (model spans: the GenAI reader's)."""
    if span_type == "model_generation":
        return read_genai(span_type, attributes, name)
    entity = text_or_none(attributes.get("traceloop.entity.name")) or name
    output = serialized(attributes.get("traceloop.entity.output"))
    if span_type == "agent_run":
        arguments = _arguments(attributes.get("traceloop.entity.input"))
        question = arguments if isinstance(arguments, str) else None
        if isinstance(arguments, Mapping):
            question = next((v for v in arguments.values() if isinstance(v, str)), None)
        text = output if isinstance(output, str) else None
        return {"entity_type": "agent", "entity_name": entity, "entity_id": entity,
                "input": question, "output": None if text is None else {"text": text}}
    return {"entity_type": "tool", "entity_name": entity, "entity_id": entity,
            "input": _arguments(attributes.get("traceloop.entity.input")), "output": output}
