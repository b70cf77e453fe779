"""Checked by ``mypy --strict``, never executed: batch, trace, registry and live-scoring types."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, assert_type

from returns.result import Result

from scorecore import AgentInput, AgentOutput, Scorer, ScoreResult, create_scorer
from scorecore.evals import EvalReport, Threshold, run_evals
from scorecore.live import Registry, scored
from scorecore.traces import (
    Trace,
    TraceBatchResult,
    TraceError,
    TraceScoringError,
    read_otlp_json_lines,
    read_otlp_requests,
    score_trace,
    score_traces,
    trace_to_agent_run,
)

exact = create_scorer(id="exact", description="d").generate_score(
    lambda ctx: float(ctx.run.output == ctx.run.ground_truth)
)


async def batch() -> None:
    report = await run_evals(
        [{"input": "q", "output": "a"}], [exact], thresholds={"exact": Threshold(min=0.5)}
    )
    assert_type(report, EvalReport)
    await run_evals([{"input": "q"}], [exact], concurrency="8")  # type: ignore[arg-type]


async def traces(trace_json: dict[str, Any]) -> None:
    assert_type(trace_to_agent_run(trace_json), Result[tuple[AgentInput, AgentOutput], TraceError])
    assert_type(
        await score_trace(exact, trace_json), Result[ScoreResult[Any, Any], TraceScoringError]
    )
    assert_type(await score_traces(exact, [trace_json]), TraceBatchResult)


def otlp_streams(request: dict[str, Any]) -> None:
    assert_type(read_otlp_requests([("line 1", request)]), Iterator[Result[Trace, TraceError]])
    assert_type(read_otlp_json_lines(["{}"]), Iterator[Result[Trace, TraceError]])
    read_otlp_requests([request])  # type: ignore[list-item]


registry = Registry(scorers={"exact": exact})
assert_type(registry.add(exact, "again"), bool)
found: Scorer[Any, Any] = registry.get("exact")


@scored(exact, sampling="none")
async def agent(question: str) -> str:
    return question.upper()


async def call_agent() -> None:
    # the decorator keeps the function's signature
    assert_type(await agent("q"), str)
    await agent(1)  # type: ignore[arg-type]
