"""Scoring recorded traces: :func:`score_trace` for one, :func:`score_traces` for a batch.

A ``type="agent"`` scorer gets the trace as an agent run (:func:`trace_to_agent_run`), a
``type="trajectory"`` scorer its trajectory (:func:`extract_trajectory_from_trace`), any
other scorer the target span's input and output.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias, final

import anyio
import attrs
from returns.result import Failure, Result, Success

from scorecore._core._agent import AgentInput, AgentOutput
from scorecore._core._convert import converter
from scorecore._core._runtime import Runtime
from scorecore._core._scorer import Scorer
from scorecore._core._values import ScoreResult, ScorerRunError
from scorecore.traces._mastra import trace_to_agent_run
from scorecore.traces._sinks import ScoreRecord, ScoreSink, deliver
from scorecore.traces._spans import Span, Trace, TraceError, TraceLike, _as_trace
from scorecore.traces._trajectories import extract_trajectory_from_trace
from scorecore.validators import check_count

__all__ = [
    "TraceBatchResult",
    "TraceScoringError",
    "TraceTarget",
    "TraceTargetResult",
    "score_trace",
    "score_traces",
]

TraceScoringError: TypeAlias = TraceError | ScorerRunError
"""Why scoring a trace failed: the trace was unusable, or the scorer run failed."""



def _target_span(trace: Trace, span_id: str | None) -> Span | None:
    if span_id is not None:
        return trace.span(span_id)
    return next((s for s in trace.spans if s.parent_span_id is None), None)


async def score_trace(
    scorer: Scorer[Any, Any, Any, Any],
    trace: TraceLike,
    span_id: str | None = None,
    *,
    runtime: Runtime | None = None,
    sink: ScoreSink | None = None,
) -> Result[ScoreResult[Any, Any], TraceScoringError]:
    """Score one trace (or one span of it) with a scorer; never raises.

    The target span is ``span_id``, or the trace's first root span. A ``type="agent"`` scorer
    gets the whole trace as an agent run (:func:`trace_to_agent_run`); a ``type="trajectory"``
    scorer gets the trajectory from the target span down (``extract_trajectory_from_trace``)
    and the agent run's input (empty for a trace without an agent run); any other scorer gets
    the target span's ``input`` and ``output``. The run's extra fields say where it came from:
    ``score_source="trace"``, ``target_scope="span"``, ``target_entity_type``,
    ``target_trace_id``, ``target_span_id``.

    Args:
        scorer: the scorer to run.
        trace: a :class:`Trace` or Mastra's JSON for one.
        span_id: the span to score; defaults to the root span.
        runtime: the runtime handed to ``Scorer.run``.
        sink: receives a :class:`ScoreRecord` for a successful run; if it raises, the
            result is ``Failure(TraceError(kind="sink_failed"))`` carrying the score.

    Returns:
        ``Success(ScoreResult)``, ``Failure(TraceError)`` for an unusable trace or a missing
        span, or ``Failure(ScorerRunError)`` when the scorer run failed.

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> length = create_scorer(id="len", description="Output length").generate_score(
    ...     lambda ctx: float(len(ctx.run.output)))
    >>> span = {"spanId": "s", "spanType": "tool_call", "startedAt": "2025-01-01T00:00:00Z",
    ...         "input": {"city": "Paris"}, "output": "Sunny"}
    >>> anyio.run(score_trace, length, {"traceId": "t", "spans": [span]}).unwrap().score
    5.0
    >>> anyio.run(score_trace, length, {"traceId": "t", "spans": [span]}, "x").failure().message
    'Span not found for scoring, traceId: t, spanId: x'
    """
    structured = _as_trace(trace)
    if isinstance(structured, Failure):
        return Failure(structured.failure())
    valid = structured.unwrap()
    target = _target_span(valid, span_id)
    scorer_input: Any  # what the scorer was given: its own input and output types
    scorer_output: Any
    if target is None:
        return Failure(TraceError(
            kind="span_not_found", trace_id=valid.trace_id, span_id=span_id,
            message=f"Span not found for scoring, traceId: {valid.trace_id}, spanId: {span_id}",
        ))
    if scorer.type == "trajectory":
        # The trajectory comes from the spans; the input from the agent run when there is one
        # (a workflow trace has none: its input is then empty, and a scorer needing it says so).
        trajectory = extract_trajectory_from_trace(valid, span_id)
        agent_run = trace_to_agent_run(valid)
        scorer_input = agent_run.unwrap()[0] if isinstance(agent_run, Success) else AgentInput()
        scorer_output = trajectory.unwrap()
    elif scorer.type == "agent":
        agent_run = trace_to_agent_run(valid)
        if isinstance(agent_run, Failure):
            return Failure(agent_run.failure())
        scorer_input, messages = agent_run.unwrap()
        # Handing the core its own JSON shape keeps this independent of whether the
        # scorer's input structuring accepts already-built message values.
        scorer_output = converter.unstructure(messages, AgentOutput)
    else:
        scorer_input, scorer_output = target.input, target.output
    outcome = await scorer.run(
        input=scorer_input, output=scorer_output, runtime=runtime,
        extra={"score_source": "trace", "target_scope": "span",
               "target_entity_type": target.span_type, "target_trace_id": valid.trace_id,
               "target_span_id": target.span_id},
    )
    if sink is None or isinstance(outcome, Failure):
        return outcome
    result = outcome.unwrap()
    record = ScoreRecord(
        scorer_id=scorer.id, scorer_name=scorer.name, source="trace", result=result,
        trace_id=valid.trace_id, span_id=target.span_id, entity_type=target.span_type,
        entity_id=target.entity_id or target.entity_name or "unknown",
        scorer_description=scorer.description, has_judge=scorer.has_judge,
    )
    try:
        await deliver(sink, record)
    except Exception as exc:  # noqa: BLE001 - the sink is user code; its failure is a value
        return Failure(TraceError(
            kind="sink_failed", trace_id=valid.trace_id, span_id=target.span_id, result=result,
            message=f"the sink raised {type(exc).__qualname__}: {exc}",
        ))
    return outcome


@final
@attrs.frozen(kw_only=True)
class TraceTarget:
    """One item of a batch: a trace, the span to score (default: the root) and a dataset item."""

    trace: Trace | Mapping[str, object] | None
    span_id: str | None = None
    dataset_item_id: str | None = None


@final
@attrs.frozen(kw_only=True)
class TraceTargetResult:
    """The outcome of one batch target, at its position ``index`` in the input."""

    index: int
    outcome: Result[ScoreResult[Any, Any], TraceScoringError] = attrs.field(repr=False)
    trace_id: str | None = None
    span_id: str | None = None
    dataset_item_id: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the target was scored (or found not scorable)."""
        return isinstance(self.outcome, Success)


@final
@attrs.frozen(kw_only=True)
class TraceBatchResult:
    """The summary of :func:`score_traces` (Mastra's ``scoreTraceBatch`` result).

    ``results`` is in input order. A not-scorable result counts in ``not_scorable_count``,
    not ``scored_count``.
    """

    scored_count: int
    not_scorable_count: int
    failed_count: int
    results: tuple[TraceTargetResult, ...]
    batch_id: str | None = None
    dataset_id: str | None = None


def _check_concurrency(value: object) -> int:
    return check_count("score_traces: concurrency", value, minimum=1)


def _trace_id_of(trace: object) -> str | None:
    if isinstance(trace, Trace):
        return trace.trace_id
    if isinstance(trace, Mapping):
        value = trace.get("traceId")
        return value if isinstance(value, str) else None
    return None


async def score_traces(
    scorer: Scorer[Any, Any, Any, Any],
    targets: Iterable[TraceTarget | Trace | Mapping[str, object]],
    *,
    concurrency: int = 3,
    runtime: Runtime | None = None,
    sink: ScoreSink | None = None,
    batch_id: str | None = None,
    dataset_id: str | None = None,
) -> TraceBatchResult:
    """Score many traces with at most ``concurrency`` runs at a time; never raises for a target.

    Targets are consumed lazily, so a long iterator is never held in memory at once. Each
    target is scored with :func:`score_trace`; a failing target is recorded and the batch
    goes on.

    Raises:
        ValueError: ``concurrency`` is not an int >= 1 (misuse).

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
    >>> ok = {"traceId": "t1", "spans": [{"spanId": "s", "spanType": "generic",
    ...                                   "startedAt": "2025-01-01T00:00:00Z"}]}
    >>> summary = anyio.run(lambda: score_traces(one, [ok, {"traceId": "t2"}]))
    >>> summary.scored_count, summary.failed_count, summary.results[1].outcome.failure().kind
    (1, 1, 'no_spans_array')
    """
    limit = anyio.Semaphore(_check_concurrency(concurrency))
    results: dict[int, TraceTargetResult] = {}

    async def one(index: int, target: TraceTarget) -> None:
        try:
            outcome = await score_trace(scorer, target.trace, target.span_id, runtime=runtime,
                                        sink=sink)
            results[index] = TraceTargetResult(
                index=index, outcome=outcome, trace_id=_trace_id_of(target.trace),
                span_id=target.span_id, dataset_item_id=target.dataset_item_id,
            )
        finally:
            limit.release()

    async with anyio.create_task_group() as group:
        for index, item in enumerate(targets):
            target = item if isinstance(item, TraceTarget) else TraceTarget(trace=item)
            await limit.acquire()
            group.start_soon(one, index, target)
    ordered = tuple(results[i] for i in sorted(results))
    scored = not_scorable = failed = 0
    for entry in ordered:
        if isinstance(entry.outcome, Failure):
            failed += 1
        elif entry.outcome.unwrap().not_scorable is not None:
            not_scorable += 1
        else:
            scored += 1
    return TraceBatchResult(
        scored_count=scored, not_scorable_count=not_scorable, failed_count=failed,
        results=ordered, batch_id=batch_id, dataset_id=dataset_id,
    )
