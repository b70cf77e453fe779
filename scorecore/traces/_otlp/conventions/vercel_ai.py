"""The Vercel AI SDK's ``ai.*`` spans (what Mastra and many TypeScript agents emit).

``ai.operationId`` names the span: ``ai.generateText`` / ``ai.streamText`` (the whole call: the
agent run), their ``.doGenerate`` / ``.doStream`` (one provider call) and ``ai.toolCall``.
Messages are JSON in ``ai.prompt`` (``{"system", "prompt", "messages"}``) and
``ai.prompt.messages``; answers in ``ai.response.text``; tools in ``ai.toolCall.name`` /
``.args`` / ``.result``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from scorecore.traces._otlp._values import maybe_json, serialized, text_or_none, usage

VERCEL_AI_OPERATIONS: Final[Mapping[str, str]] = {
    "ai.generateText": "agent_run",
    "ai.streamText": "agent_run",
    "ai.generateText.doGenerate": "model_generation",
    "ai.streamText.doStream": "model_generation",
    "ai.toolCall": "tool_call",
}
"""``ai.operationId`` → span type."""


def _content(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(p["text"] for p in value
                         if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return ""


def _messages(value: object) -> list[dict[str, object]]:
    raw = maybe_json(value)
    if isinstance(raw, Mapping):  # ai.prompt: {"system", "prompt", "messages"}
        found = [{"role": "system", "content": raw["system"]}] if isinstance(
            raw.get("system"), str) else []
        if isinstance(raw.get("prompt"), str):
            found.append({"role": "user", "content": raw["prompt"]})
        listed = raw.get("messages")
        raw = found + (listed if isinstance(listed, list) else [])
    return [{"role": m["role"], "content": _content(m.get("content"))}
            for m in raw if isinstance(m, Mapping) and isinstance(m.get("role"), str)] if (
        isinstance(raw, list)) else []


def read_vercel_ai(
    span_type: str, attributes: Mapping[str, object], name: str
) -> dict[str, object]:
    """A Vercel AI SDK span's fields."""
    text = attributes.get("ai.response.text")
    output = {"text": text} if isinstance(text, str) else None
    if span_type == "tool_call":
        tool = text_or_none(attributes.get("ai.toolCall.name")) or name
        return {"entity_type": "tool", "entity_name": tool, "entity_id": tool,
                "input": maybe_json(attributes.get("ai.toolCall.args")),
                "output": serialized(attributes.get("ai.toolCall.result"))}
    if span_type == "model_generation":
        messages = _messages(attributes.get("ai.prompt.messages"))
        model = text_or_none(attributes.get("ai.model.id"))
        tokens = ("ai.usage.inputTokens", "ai.usage.outputTokens") if (
            "ai.usage.inputTokens" in attributes) else ("ai.usage.promptTokens",
                                                        "ai.usage.completionTokens")
        return {"entity_type": "llm", "entity_name": model, "entity_id": model,
                "input": {"messages": messages} if messages else None, "output": output,
                "mastra_attributes": {"model": model, "usage": usage(attributes, *tokens)}}
    agent = text_or_none(attributes.get("ai.telemetry.functionId")) or name
    users = [m for m in _messages(attributes.get("ai.prompt")) if m["role"] == "user"]
    return {"entity_type": "agent", "entity_name": agent, "entity_id": agent,
            "input": users[-1:] or None, "output": output}
