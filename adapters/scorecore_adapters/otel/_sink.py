"""Scores as OpenTelemetry: one ``gen_ai.evaluation.result`` event per scored run."""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any, Final, final

from opentelemetry import trace
from opentelemetry._logs import LoggerProvider
from opentelemetry.context import Context
from opentelemetry.trace import (
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    Tracer,
    TracerProvider,
)
from returns.result import Failure

from scorecore import JudgeExecution, ScoreResult, ScorerRunError, redact_secrets
from scorecore.evals import ItemResult, Threshold
from scorecore.evals.engine import failure_kind
from scorecore.evals.results import ScorerOutcome
from scorecore.traces import ScoreRecord, TraceBatchResult
from scorecore_adapters.otel._direct import DirectSpans
from scorecore_adapters.report._causes import cause_of_outcome

__all__ = ["EVENT_NAME", "OtelSink", "otel_sink"]

EVENT_NAME: Final = "gen_ai.evaluation.result"
"""The GenAI semantic conventions' event for an evaluation's result."""

_SCOPE: Final = "scorecore"
_TRACE_ID: Final = re.compile(r"[0-9a-f]{32}")
_SPAN_ID: Final = re.compile(r"[0-9a-f]{16}")
_MAX_EXPLANATION: Final = 4096  # attribute values travel in every export; keep them bounded


@functools.lru_cache(maxsize=256)  # an item's scorers all judge the same span
def _judged(trace_id: str | None, span_id: str | None) -> tuple[Context, SpanContext] | None:
    """The judged span as a (remote) parent, when its ids are OpenTelemetry ids: the context
    to start a child in, and the span's own context (both immutable, so shared)."""
    if trace_id is None or span_id is None:
        return None
    trace_id, span_id = trace_id.lower(), span_id.lower()
    if not (_TRACE_ID.fullmatch(trace_id) and _SPAN_ID.fullmatch(span_id)):
        return None
    if int(trace_id, 16) == 0 or int(span_id, 16) == 0:
        return None
    context = SpanContext(trace_id=int(trace_id, 16), span_id=int(span_id, 16), is_remote=True,
                          trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return trace.set_span_in_context(NonRecordingSpan(context)), context


def _parent(trace_id: str | None, span_id: str | None) -> Context | None:
    judged = _judged(trace_id, span_id)
    return judged[0] if judged is not None else None


def _explanation(text: str | None) -> str | None:
    if not text:
        return None
    cleaned = str(redact_secrets(text))
    return cleaned if len(cleaned) <= _MAX_EXPLANATION else cleaned[:_MAX_EXPLANATION] + "…"


@final
class OtelSink:
    """Reports each scored run as a ``gen_ai.evaluation.result`` event; see :func:`otel_sink`.

    Call it with a :class:`~scorecore.traces.ScoreRecord` (a ``sink=`` of ``score_trace``,
    ``score_traces`` and live scoring) or an :class:`~scorecore.evals.ItemResult` (the
    ``on_item_complete=`` of ``run_evals``: one event per scorer outcome, failed ones with
    ``error.type``). Never raises for a record it cannot parent: it carries the run's ids
    instead.
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None,
        logger_provider: LoggerProvider | None,
        thresholds: Mapping[str, float | Threshold],
        gates: Iterable[str],
        evaluation_spans: bool = False,
    ) -> None:
        self._tracer: Tracer | None = (
            tracer_provider.get_tracer(_SCOPE) if tracer_provider is not None else None)
        self._direct = DirectSpans.of(self._tracer) if self._tracer is not None else None
        self._logger = (logger_provider.get_logger(_SCOPE)
                        if logger_provider is not None else None)
        self._thresholds = {k: v if isinstance(v, Threshold) else Threshold(min=v)
                            for k, v in thresholds.items()}
        self._gates = frozenset(gates)
        self._evaluation_spans = evaluation_spans and self._tracer is not None

    def __call__(self, value: ScoreRecord | ItemResult) -> None:
        """Emit the events of one score record or one batch item."""
        if isinstance(value, ScoreRecord):
            self._emit_record(value)
        else:
            self._emit_item(value)

    def report_failures(self, batch: TraceBatchResult, *, scorer_id: str) -> None:
        """Emit an event with ``error.type`` for each target of a ``score_traces`` batch that
        failed: a sink only receives the runs that succeeded.

        ``error.type`` is the failure's kind (``raised RuntimeError``, ``judge`` …) for a
        failed scorer run, the :class:`~scorecore.traces.TraceError` kind (``invalid_span``,
        ``no_root_agent_span`` …) for an unusable trace; the event is parented to the target
        span when it is known.
        """
        for entry in batch.results:
            outcome = entry.outcome
            if not isinstance(outcome, Failure):
                continue
            error = outcome.failure()
            trace_id, span_id = entry.trace_id, entry.span_id
            attributes: dict[str, Any] = {"scorecore.scorer.id": scorer_id,
                                          "scorecore.score_source": "trace"}
            if isinstance(error, ScorerRunError):
                kind, message = failure_kind(error.cause), error.cause.describe()
                if error.partial is not None:
                    run = error.partial.run
                    trace_id = run.extra.get("target_trace_id", trace_id)
                    span_id = run.extra.get("target_span_id", span_id)
                    if run.run_id is not None:
                        attributes["scorecore.run_id"] = run.run_id
            else:
                kind, message = error.kind, error.message
                trace_id, span_id = error.trace_id or trace_id, error.span_id or span_id
            self._emit(name=scorer_id, score=None, label=None, explanation=message,
                       error_type=kind, trace_id=trace_id, span_id=span_id, extra=attributes)

    def _label(self, scorer_id: str, score: float | None) -> str | None:
        if score is None:
            return None
        threshold = self._thresholds.get(scorer_id)
        if threshold is not None:
            return "pass" if threshold.check(score) else "fail"
        if scorer_id in self._gates:
            return "pass" if score == 1.0 else "fail"
        return None

    def _emit_record(self, record: ScoreRecord) -> None:
        result: ScoreResult[Any, Any] = record.result
        not_scorable = result.not_scorable
        attributes: dict[str, Any] = {
            "scorecore.run_id": record.run_id,
            "scorecore.scorer.id": record.scorer_id,
            "scorecore.score_source": record.source,
        }
        if not_scorable is not None:
            attributes["scorecore.not_scorable"] = True
        explanation = not_scorable.reason if not_scorable is not None else result.reason
        self._emit(
            name=record.scorer_id, score=result.score,
            label=self._label(record.scorer_id, result.score),
            explanation=explanation, error_type=None,
            trace_id=record.trace_id, span_id=record.span_id, extra=attributes,
        )

    def _emit_item(self, item: ItemResult) -> None:
        extra = item.item.extra if item.item is not None else item.extra
        trace_id = extra.get("target_trace_id")
        span_id = extra.get("target_span_id")
        outcomes = [o for o in item.outcomes if not o.resumed]  # resumed: reported when run
        if self._evaluation_spans and outcomes:
            self._item_spans(item, outcomes, trace_id, span_id)
            return
        for outcome in outcomes:
            self._emit_outcome(item, outcome, trace_id, span_id)

    def _item_spans(
        self, item: ItemResult, outcomes: list[ScorerOutcome], trace_id: object, span_id: object
    ) -> None:
        """The evaluation itself as spans: the item, a child per scorer, one per judge call.

        Made when the item completes: spans end now, and each judge span lasts its measured
        duration (scorers run one after the other, so the item starts that much earlier).
        """
        assert self._tracer is not None  # noqa: S101 - evaluation_spans needs a tracer
        end = time.time_ns()
        executions = {o.scorer_id: _executions(o) for o in outcomes}
        total = sum(int(e.duration * 1e9) for runs in executions.values() for e in runs)
        parent = _parent(trace_id if isinstance(trace_id, str) else None,
                         span_id if isinstance(span_id, str) else None)
        label = item.item_id if item.item_id is not None else f"#{item.index}"
        item_span = self._tracer.start_span(
            f"evaluate {label}", context=parent, start_time=end - total,
            attributes={"scorecore.run_id": item.run_id, "scorecore.item_id": label})
        if item.error is not None:
            item_span.set_status(Status(StatusCode.ERROR, _explanation(item.error)))
        start = end - total
        in_item = trace.set_span_in_context(item_span)
        for outcome in outcomes:
            runs = executions[outcome.scorer_id]
            took = sum(int(e.duration * 1e9) for e in runs)
            scorer_span = self._tracer.start_span(
                f"score {outcome.scorer_id}", context=in_item, start_time=start,
                attributes={"scorecore.scorer.id": outcome.scorer_id,
                            "scorecore.status": outcome.status})
            in_scorer = trace.set_span_in_context(scorer_span)
            at = start
            for execution in runs:
                at = self._judge_span(execution, in_scorer, at)
            self._emit_outcome(item, outcome, trace_id, span_id, carrier=scorer_span)
            if outcome.status == "failed":
                scorer_span.set_status(Status(StatusCode.ERROR))
            start += took
            scorer_span.end(end_time=start)
        item_span.end(end_time=end)

    def _judge_span(self, execution: JudgeExecution, parent: Context, start: int) -> int:
        assert self._tracer is not None  # noqa: S101 - only called with a tracer
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": execution.provider,
            "gen_ai.request.model": execution.model_id,
            "scorecore.judge.model_calls": execution.model_call_count,
            "scorecore.judge.cache_hits": execution.cache_hits,
        }
        usage = execution.usage
        if usage is not None and usage.input_tokens is not None:
            attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
        if usage is not None and usage.output_tokens is not None:
            attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
        if execution.cost_usd is not None:
            attributes["scorecore.judge.cost_usd"] = execution.cost_usd
        if execution.finish_reason is not None:
            attributes["gen_ai.response.finish_reasons"] = [execution.finish_reason]
        end = start + int(execution.duration * 1e9)
        span = self._tracer.start_span(f"chat {execution.model_id}", context=parent,
                                       kind=SpanKind.CLIENT, start_time=start,
                                       attributes=attributes)
        if execution.status == "failed":
            error = execution.error
            span.set_attribute("error.type",
                               failure_kind(error) if error is not None else "judge failed")
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=end)
        return end

    def _emit_outcome(
        self, item: ItemResult, outcome: ScorerOutcome, trace_id: object, span_id: object,
        carrier: Span | None = None,
    ) -> None:
        attributes: dict[str, Any] = {
            "scorecore.run_id": item.run_id,
            "scorecore.scorer.id": outcome.scorer_id,
            "scorecore.score_source": "batch",
        }
        if item.item_id is not None:
            attributes["scorecore.item_id"] = item.item_id
        error_type = None
        explanation = outcome.reason
        if outcome.status == "failed":
            cause = cause_of_outcome(outcome, item_error=item.error,
                                     item_error_kind=item.error_kind)
            error_type = cause.kind
            explanation = cause.message
        elif outcome.status == "not_scorable":
            attributes["scorecore.not_scorable"] = True
        self._emit(
            name=outcome.scorer_id, score=outcome.score,
            label=self._label(outcome.scorer_id, outcome.score), explanation=explanation,
            error_type=error_type,
            trace_id=trace_id if isinstance(trace_id, str) else None,
            span_id=span_id if isinstance(span_id, str) else None, extra=attributes,
            carrier=carrier,
        )

    def _emit(
        self, *, name: str, score: float | None, label: str | None, explanation: str | None,
        error_type: str | None, trace_id: str | None, span_id: str | None,
        extra: dict[str, Any], carrier: Span | None = None,
    ) -> None:
        attributes: dict[str, Any] = {"gen_ai.evaluation.name": name}
        if score is not None:
            attributes["gen_ai.evaluation.score.value"] = float(score)
        if label is not None:
            attributes["gen_ai.evaluation.score.label"] = label
        text = _explanation(explanation)
        if text is not None:
            attributes["gen_ai.evaluation.explanation"] = text
        if error_type is not None:
            attributes["error.type"] = error_type
        judged = _judged(trace_id, span_id)
        parent = judged[0] if judged is not None else None
        if parent is None:
            # Not an OpenTelemetry span (a dataset item, a Mastra trace): say what was judged.
            if trace_id is not None:
                attributes["scorecore.trace_id"] = trace_id
            if span_id is not None:
                attributes["scorecore.span_id"] = span_id
        attributes.update(extra)
        if self._logger is not None:
            self._logger.emit(event_name=EVENT_NAME, attributes=attributes, context=parent,
                              body=None)
        if carrier is not None:
            # With evaluation spans, the scorer's own span carries the event.
            carrier.set_attributes(attributes)
            carrier.add_event(EVENT_NAME, attributes=attributes)
        elif self._direct is not None and self._direct.emit(
                f"evaluation {name}", EVENT_NAME, attributes, judged):
            pass  # the same span as below, made without the SDK's span life cycle
        elif self._tracer is not None:
            # A span beside the judged one (its child) carrying the event: tracing backends
            # that take no logs (Jaeger, Phoenix) show the score next to the span it judges.
            span = self._tracer.start_span(f"evaluation {name}", context=parent,
                                           kind=SpanKind.INTERNAL, attributes=attributes)
            span.add_event(EVENT_NAME, attributes=attributes)
            span.end()


def _executions(outcome: ScorerOutcome) -> list[JudgeExecution]:
    score = outcome.result
    if score is None and outcome.run_error is not None:
        score = outcome.run_error.partial
    if score is None:
        return []
    return [e for runs in score.judge.values() for e in runs]


def otel_sink(
    *,
    tracer_provider: TracerProvider | None = None,
    logger_provider: LoggerProvider | None = None,
    thresholds: Mapping[str, float | Threshold] | None = None,
    gates: Iterable[str] = (),
    evaluation_spans: bool = False,
) -> OtelSink:
    """A score sink reporting every scored run as OpenTelemetry.

    Each run becomes one ``gen_ai.evaluation.result`` event (GenAI semantic conventions) with
    ``gen_ai.evaluation.name`` (the scorer's id), ``gen_ai.evaluation.score.value``,
    ``gen_ai.evaluation.score.label`` (``"pass"``/``"fail"``, for a scorer given a threshold
    or listed in ``gates``), ``gen_ai.evaluation.explanation`` (the reason, secrets redacted)
    and ``error.type`` (a failed batch run's cause kind), plus ``scorecore.run_id`` and
    ``scorecore.scorer.id``. When the run judged an OpenTelemetry span (trace scoring, or
    ``scorecore eval-traces``), the event is parented to that span (its trace and span ids);
    otherwise it carries ``scorecore.item_id`` / ``scorecore.trace_id`` / ``scorecore.span_id``.

    The event is emitted as a log record (``event_name``, the judged span as its context)
    through ``logger_provider``, and, through ``tracer_provider``, as a span named
    ``evaluation NAME`` under the judged span carrying the event and the same attributes (for
    backends that take traces only). Give either or both; with neither the global tracer
    provider is used (a no-op until an SDK is configured).

    ``evaluation_spans=True`` (off by default; needs a tracer provider) shows the evaluation
    itself for batch items: a span ``evaluate ITEM`` per item with a child ``score SCORER``
    per scorer (carrying the event) and, below it, a ``chat MODEL`` span per judge execution
    with ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.usage.*`` and
    ``scorecore.judge.cost_usd``: a slow or expensive scorer stands out in a tracing UI.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    >>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    >>> from scorecore import ScoreResult, ScorerRun
    >>> exporter = InMemorySpanExporter()
    >>> provider = TracerProvider()
    >>> provider.add_span_processor(SimpleSpanProcessor(exporter))
    >>> sink = otel_sink(tracer_provider=provider, thresholds={"helpful": 0.5})
    >>> sink(ScoreRecord(scorer_id="helpful", scorer_name="helpful", source="trace",
    ...                  trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
    ...                  span_id="00f067aa0ba902b7",
    ...                  result=ScoreResult(run=ScorerRun(input="q", output="a", run_id="r1"),
    ...                                     score=0.8, reason="clear")))
    >>> (span,) = exporter.get_finished_spans()
    >>> span.parent.span_id == 0x00f067aa0ba902b7, span.events[0].name
    (True, 'gen_ai.evaluation.result')
    >>> span.attributes["gen_ai.evaluation.score.label"]
    'pass'
    """
    if tracer_provider is None and logger_provider is None:
        tracer_provider = trace.get_tracer_provider()
    return OtelSink(tracer_provider=tracer_provider, logger_provider=logger_provider,
                    thresholds=thresholds or {}, gates=gates, evaluation_spans=evaluation_spans)
