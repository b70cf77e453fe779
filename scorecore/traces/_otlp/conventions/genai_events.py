"""The GenAI conventions' per-message events (before messages moved to span attributes).

Semantic conventions before 1.37 recorded each message as an event, ``gen_ai.system.message``
/ ``gen_ai.user.message`` / ``gen_ai.assistant.message`` / ``gen_ai.tool.message`` with the
answer as ``gen_ai.choice``; the current ones may put one
``gen_ai.client.inference.operation.details`` event per model call. Instrumentations write
them as log records (the official OpenAI instrumentation) or as a JSON list in an ``events``
span attribute (pydantic-ai's format 1). Either way they become the current attributes
(``gen_ai.input.messages`` …), which the GenAI reader reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from scorecore.traces._otlp._values import maybe_json

DETAILS: Final = "gen_ai.client.inference.operation.details"
INPUT_EVENTS: Final[Mapping[str, str]] = {
    "gen_ai.system.message": "system", "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool",
}
CHOICE: Final = "gen_ai.choice"
_COPIED: Final = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")


def _parts(message: Mapping[str, Any]) -> list[dict[str, object]]:
    parts: list[dict[str, object]] = []
    content = message.get("content")
    if isinstance(content, str) and content:
        parts.append({"type": "text", "content": content})
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            parts.append({"type": "tool_call", "id": call.get("id"),
                          "name": function.get("name"), "arguments": function.get("arguments")})
    return parts


def event_attributes(records: Iterable[Mapping[str, Any]]) -> dict[str, object]:
    """The GenAI attributes a span's records amount to."""
    out: dict[str, object] = {}
    inputs: list[dict[str, object]] = []
    outputs: list[dict[str, object]] = []
    for record in records:
        body = record["body"] if isinstance(record["body"], Mapping) else {}
        if record["event"] == DETAILS:
            out.update({k: record["attributes"][k] for k in _COPIED
                        if k in record["attributes"]})
        elif record["event"] == CHOICE:
            message = body.get("message")
            if isinstance(message, Mapping):
                outputs.append({"role": "assistant", "parts": _parts(message)})
        else:
            inputs.append({"role": INPUT_EVENTS[record["event"]], "parts": _parts(body)})
    if inputs:
        out.setdefault("gen_ai.input.messages", inputs)
    if outputs:
        out.setdefault("gen_ai.output.messages", outputs)
    return out


def span_events(attributes: Mapping[str, Any]) -> dict[str, object]:
    """The message attributes a span's ``events`` attribute (pydantic-ai's format 1: a JSON
    list of events, each with its ``event.name`` and body keys) amounts to; empty when the
    span records its messages as attributes already or has no such list."""
    raw = attributes.get("events")
    if "gen_ai.input.messages" in attributes or not isinstance(raw, str | list):
        return {}
    events = maybe_json(raw)
    if not isinstance(events, list):
        return {}
    records = [{"event": e["event.name"], "body": e, "attributes": {}}
               for e in events if isinstance(e, Mapping) and isinstance(e.get("event.name"), str)
               and (e["event.name"] in INPUT_EVENTS or e["event.name"] == CHOICE)]
    return event_attributes(records)
