"""Dataset items from recorded agent traces: production traffic as regression data."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from returns.result import Failure, Result, Success

from scorecore._core._convert import converter
from scorecore.datasets._items import DatasetItem
from scorecore.traces import (
    Trace,
    TraceError,
    agent_traces,
    extract_trajectory_from_trace,
    trace_to_agent_run,
)

__all__ = ["items_from_traces"]


def _json(value: object) -> Any:
    """A run value as plain JSON: camelCase keys, times as ISO 8601, unset fields left out."""
    def default(other: object) -> str:
        if isinstance(other, datetime):
            return other.isoformat()
        raise TypeError(f"{type(other).__name__} is not JSON")

    def drop_none(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: drop_none(v) for k, v in node.items() if v is not None}
        if isinstance(node, list):
            return [drop_none(v) for v in node]
        return node

    return drop_none(json.loads(json.dumps(converter.unstructure(value), default=default)))


def _expected_steps(trace: Trace) -> list[Any] | None:
    """The trace's trajectory as expected steps (names, types and arguments; durations and
    metadata dropped), or ``None`` when it recorded no step."""
    trajectory = extract_trajectory_from_trace(trace)
    if isinstance(trajectory, Failure) or not trajectory.unwrap().steps:
        return None
    steps = _json(trajectory.unwrap())["steps"]

    def strip(step: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in step.items() if k not in ("duration", "metadata")}
        if kept.get("children"):
            kept["children"] = [strip(c) for c in kept["children"]]
        else:
            kept.pop("children", None)
        return kept

    return [strip(s) for s in steps]


def items_from_traces(
    traces: Iterable[Result[Trace, TraceError]],
) -> Iterator[Result[DatasetItem, TraceError]]:
    """One item per agent run of each trace (each agent span with no agent above it).

    The item's id is ``TRACE_ID-SPAN_ID`` (the agent span's: what ``scorecore eval-traces``
    names the run), ``input`` and ``output`` are the agent's messages as an agent scorer
    receives them (Mastra's JSON), ``expected_trajectory`` is the steps the agent took
    (names, types, arguments) when the trace recorded any, and ``extra`` names the trace and
    span it came from. A trace that cannot be read, or an agent run that cannot be turned
    into messages, is passed on as a ``Failure``.

    >>> trace = Trace.from_mastra_json({"traceId": "t", "spans": [
    ...     {"spanId": "a", "spanType": "agent_run", "startedAt": "2025-01-01T00:00:00Z",
    ...      "input": "Weather in Paris?", "output": {"text": "Sunny."}},
    ...     {"spanId": "m", "parentSpanId": "a", "spanType": "model_generation",
    ...      "startedAt": "2025-01-01T00:00:01Z", "input": {"messages": []}}]})
    >>> item = next(items_from_traces([trace])).unwrap()
    >>> item.id, item.fields["extra"], item.fields["expected_trajectory"][0]["stepType"]
    ('t-a', {'trace_id': 't', 'span_id': 'a'}, 'model_generation')
    """
    for outcome in traces:
        if isinstance(outcome, Failure):
            yield Failure(outcome.failure())
            continue
        for agent in agent_traces(outcome.unwrap()):
            root = next(s for s in agent.spans if s.parent_span_id is None)
            run = trace_to_agent_run(agent)
            if isinstance(run, Failure):
                yield Failure(run.failure())
                continue
            agent_input, agent_output = run.unwrap()
            fields: dict[str, Any] = {"input": _json(agent_input), "output": _json(agent_output)}
            expected = _expected_steps(agent)
            if expected is not None:
                fields["expected_trajectory"] = expected
            fields["extra"] = {"trace_id": agent.trace_id, "span_id": root.span_id}
            yield Success(DatasetItem(id=f"{agent.trace_id}-{root.span_id}", fields=fields))
