"""``filter_run``: a ``prepare_run`` that trims what a scorer sees, as Mastra's ``filterRun``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from scorecore._agent import AgentInput, AgentMessage, ToolInvocationPart
from scorecore._values import ScorerRun

__all__ = ["filter_run"]


def _matches(value: str, patterns: Sequence[str]) -> bool:
    return any(value.startswith(p) for p in patterns)


def _keep(
    message: AgentMessage, part_types: Sequence[str] | None, tool_names: Sequence[str] | None
) -> bool:
    parts = message.content.parts
    if parts is None:
        return True  # plain-string content is always kept
    tools = [p for p in parts if isinstance(p, ToolInvocationPart)]
    if not tools:
        return part_types is None or any(_matches(p.type, part_types) for p in parts)
    if tool_names is not None and not any(
        _matches(p.tool_invocation.tool_name, tool_names) for p in tools
    ):
        return False
    return part_types is None or any(_matches(p.type, part_types) for p in parts)


def filter_run(
    *,
    drop_request_context: bool = False,
    drop_ground_truth: bool = False,
    drop_expected_trajectory: bool = False,
    part_types: Sequence[str] | None = None,
    tool_names: Sequence[str] | None = None,
    max_remembered_messages: int | None = None,
    max_output_messages: int | None = None,
) -> Callable[[ScorerRun[Any, Any]], ScorerRun[Any, Any]]:
    """Build a ``prepare_run`` that drops fields and filters agent messages.

    Exactly Mastra's ``filterRun``: ``part_types`` and ``tool_names`` match by prefix
    (``"data-"`` matches every data part); ``max_*`` keep the last N messages (0 or ``None``
    keeps all); only remembered messages and output messages are filtered. A message whose
    content is a plain string is always kept; with ``part_types`` set, a message without tool
    calls is kept only if one of its parts matches; a message with tool calls must match
    ``tool_names`` (when set) and ``part_types`` (when set).

    >>> prepare = filter_run(drop_ground_truth=True)
    >>> prepare(ScorerRun(input="q", output="a", ground_truth="g")).ground_truth is None
    True
    """
    # An empty list still counts as "set", as in Mastra (JS truthiness of []).
    filtering = part_types is not None or tool_names is not None

    def filter_messages(messages: Sequence[AgentMessage]) -> tuple[AgentMessage, ...]:
        return tuple(m for m in messages if _keep(m, part_types, tool_names))

    def prepare(run: ScorerRun[Any, Any]) -> ScorerRun[Any, Any]:
        changes: dict[str, Any] = {}
        if drop_request_context:
            changes["request_context"] = None
        if drop_expected_trajectory:
            changes["expected_trajectory"] = None
        if drop_ground_truth:
            changes["ground_truth"] = None
        if isinstance(run.input, AgentInput):
            remembered: tuple[AgentMessage, ...] = run.input.remembered_messages
            if filtering:
                remembered = filter_messages(remembered)
            if max_remembered_messages and len(remembered) > max_remembered_messages:
                remembered = remembered[-max_remembered_messages:]
            changes["input"] = attrs.evolve(run.input, remembered_messages=remembered)
        if isinstance(run.output, tuple | list) and all(
            isinstance(m, AgentMessage) for m in run.output
        ):
            output: tuple[AgentMessage, ...] = tuple(run.output)
            if filtering:
                output = filter_messages(output)
            if max_output_messages and len(output) > max_output_messages:
                output = output[-max_output_messages:]
            changes["output"] = output
        return attrs.evolve(run, **changes) if changes else run

    return prepare
