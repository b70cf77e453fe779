"""``filter_run``: a ``prepare_run`` that trims what a scorer sees, as Mastra's ``filterRun``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from scorecore._core._agent import AgentInput, AgentMessage, ToolInvocationPart
from scorecore._core._values import ScorerRun

__all__ = ["filter_run"]


def _matches(value: str, patterns: Sequence[str]) -> bool:
    return any(value.startswith(p) for p in patterns)


# Messages may be AgentMessage values (agent scorers) or Mastra-shaped JSON mappings
# (untyped scorers); these read either shape.
def _parts(message: object) -> Sequence[object] | None:
    if isinstance(message, AgentMessage):
        return message.content.parts
    content = message.get("content") if isinstance(message, Mapping) else None
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return parts if isinstance(parts, list | tuple) else None


def _part_type(part: object) -> str:
    kind = part.get("type") if isinstance(part, Mapping) else getattr(part, "type", None)
    return kind if isinstance(kind, str) else ""


def _tool_name(part: object) -> str:
    if isinstance(part, ToolInvocationPart):
        return part.tool_invocation.tool_name
    invocation = part.get("toolInvocation") if isinstance(part, Mapping) else None
    name = invocation.get("toolName") if isinstance(invocation, Mapping) else None
    return name if isinstance(name, str) else ""


def _keep(
    message: object, part_types: Sequence[str] | None, tool_names: Sequence[str] | None
) -> bool:
    parts = _parts(message)
    if parts is None:
        return True  # content that is not a list of parts (a plain string) is always kept
    tools = [p for p in parts if _part_type(p) == "tool-invocation"]
    if not tools:
        return part_types is None or any(_matches(_part_type(p), part_types) for p in parts)
    if tool_names is not None and not any(_matches(_tool_name(p), tool_names) for p in tools):
        return False
    return part_types is None or any(_matches(_part_type(p), part_types) for p in parts)


def filter_run(
    *,
    drop_request_context: bool = False,
    drop_ground_truth: bool = False,
    drop_expected_trajectory: bool = False,
    part_types: Sequence[str] | None = None,
    tool_names: Sequence[str] | None = None,
    max_remembered_messages: int | None = None,
    max_output_messages: int | None = None,
) -> Callable[[ScorerRun], ScorerRun]:
    """Build a ``prepare_run`` that drops fields and filters agent messages.

    Exactly Mastra's ``filterRun``: ``part_types`` and ``tool_names`` match by prefix
    (``"data-"`` matches every data part); ``max_*`` keep the last N messages (0 or ``None``
    keeps all); only remembered messages (an ``AgentInput``'s, or a mapping input's
    ``rememberedMessages``) and an output that is a list of messages are filtered; messages may
    be ``AgentMessage`` values or Mastra-shaped JSON. A message whose
    content is a plain string is always kept; with ``part_types`` set, a message without tool
    calls is kept only if one of its parts matches; a message with tool calls must match
    ``tool_names`` (when set) and ``part_types`` (when set).

    >>> prepare = filter_run(drop_ground_truth=True)
    >>> prepare(ScorerRun(input="q", output="a", ground_truth="g")).ground_truth is None
    True
    """
    # An empty list still counts as "set", as in Mastra (JS truthiness of []).
    filtering = part_types is not None or tool_names is not None

    def trim(messages: Sequence[Any], limit: int | None) -> Sequence[Any]:
        if filtering:
            messages = [m for m in messages if _keep(m, part_types, tool_names)]
        if limit and len(messages) > limit:
            messages = messages[-limit:]
        return messages

    def prepare(run: ScorerRun) -> ScorerRun:
        changes: dict[str, Any] = {}
        if drop_request_context:
            changes["request_context"] = None
        if drop_expected_trajectory:
            changes["expected_trajectory"] = None
        if drop_ground_truth:
            changes["ground_truth"] = None
        if isinstance(run.input, AgentInput):
            remembered = tuple(trim(run.input.remembered_messages, max_remembered_messages))
            changes["input"] = attrs.evolve(run.input, remembered_messages=remembered)
        elif isinstance(run.input, Mapping) and "rememberedMessages" in run.input:
            remembered_json = run.input["rememberedMessages"] or []
            changes["input"] = {
                **run.input,
                "rememberedMessages": list(trim(remembered_json, max_remembered_messages)),
            }
        if isinstance(run.output, tuple | list):
            trimmed = trim(run.output, max_output_messages)
            changes["output"] = tuple(trimmed) if isinstance(run.output, tuple) else list(trimmed)
        return attrs.evolve(run, **changes) if changes else run

    return prepare
