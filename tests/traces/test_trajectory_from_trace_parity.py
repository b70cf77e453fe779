"""extract_trajectory_from_trace equals @mastra/core 1.71.0's extractTrajectoryFromTrace on 200
seeded span forests (``tests/scorers/oracle/trace_cases.py``, ``run_mastra_trace.mjs``).

Mastra's steps are compared as JSON: durations in milliseconds, camelCase keys, absent fields
and empty ``children`` left out on both sides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scorecore.agent import Trajectory, TrajectoryStep
from scorecore.traces import extract_trajectory_from_trace

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "scorers" / "oracle" / "mastra_trace_1_71_0.json"
     ).read_text("utf-8"))

_FIELDS = {"tool_args": "toolArgs", "tool_result": "toolResult", "success": "success",
           "mcp_server": "mcpServer", "model_id": "modelId", "prompt_tokens": "promptTokens",
           "completion_tokens": "completionTokens", "finish_reason": "finishReason",
           "agent_id": "agentId", "step_id": "stepId", "output": "output",
           "workflow_id": "workflowId", "metadata": "metadata"}


def _step_json(step: TrajectoryStep) -> dict[str, Any]:
    out: dict[str, Any] = {"name": step.name, "stepType": step.step_type}
    if step.duration is not None:
        out["durationMs"] = round(step.duration * 1000)
    for field, key in _FIELDS.items():
        value = getattr(step, field)
        if value is not None:
            out[key] = value
    if step.children:
        out["children"] = [_step_json(c) for c in step.children]
    return out


def _ours(trajectory: Trajectory) -> dict[str, Any]:
    out: dict[str, Any] = {"steps": [_step_json(s) for s in trajectory.steps]}
    if trajectory.total_duration is not None:
        out["totalDurationMs"] = round(trajectory.total_duration * 1000)
    return out


def _theirs(value: Any) -> Any:
    # Mastra leaves undefined fields out of its JSON already; drop empty children and nulls.
    if isinstance(value, dict):
        return {k: _theirs(v) for k, v in value.items()
                if v is not None and not (k == "children" and v == [])}
    if isinstance(value, list):
        return [_theirs(v) for v in value]
    return value


@pytest.mark.parametrize("case", CASES, ids=[f"trace-{i}" for i in range(len(CASES))])
def test_extraction_equals_mastra(case: dict[str, Any]) -> None:
    """The same nested steps, fields, durations and total duration as Mastra."""
    trajectory = extract_trajectory_from_trace(
        {"traceId": "t", "spans": case["spans"]}, case["rootSpanId"]).unwrap()
    assert _ours(trajectory) == _theirs(case["mastra"])
