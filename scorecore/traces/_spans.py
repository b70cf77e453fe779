"""Trace values: :class:`Span`, :class:`Trace` and :class:`TraceError`, with Mastra's JSON.

A trace is a list of spans (``agent_run``, ``model_generation``, ``tool_call`` …) linked by
parent ids, as Mastra's observability records them. Transforms (:mod:`scorecore.traces._mastra`)
turn a trace into what a scorer receives; :mod:`scorecore.traces._scoring` runs scorers on them.

Every invalid trace is a :class:`TraceError` value, never an exception.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias, cast, final, get_args

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._reprs import short_repr
from scorecore._core._values import ScoreResult

__all__ = [
    "Span",
    "Trace",
    "TraceError",
    "TraceErrorKind",
    "TraceLike",
]

TraceErrorKind: TypeAlias = Literal[
    "null_trace",
    "no_spans_array",
    "invalid_span",
    "no_spans",
    "dangling_parent",
    "no_root_agent_span",
    "no_agent_output",
    "no_model_span",
    "span_not_found",
    "sink_failed",
    "invalid_otlp",
    "duplicate_span",
    "duplicate_trace",
    "conflicting_trace",
]
"""Why a trace could not be scored (see :class:`TraceError`)."""


def _non_empty_str(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value:
        owner = type(instance).__name__
        raise ValueError(f"{owner}.{attribute.name} must be a non-empty str, got {value!r}")


def _datetime(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, datetime):
        owner = type(instance).__name__
        raise TypeError(f"{owner}.{attribute.name} must be a datetime, got {value!r}")


def _optional_datetime(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        _datetime(instance, attribute, value)


@final
@attrs.frozen(kw_only=True)
class Span:
    """One recorded span of a trace (Mastra's span record, in snake_case).

    Attributes:
        span_id: the span's id, unique in its trace.
        span_type: ``"agent_run"``, ``"model_generation"``, ``"tool_call"``, or any other type.
        started_at: when the span started; children are ordered by it.
        parent_span_id: the parent span's id; ``None`` for a root span.
        trace_id: the trace the span belongs to.
        name: the span's display name.
        entity_type: what kind of entity ran (``"agent"``, ``"tool"`` …).
        entity_id: the entity's id (e.g. the tool id).
        entity_name: the entity's name (e.g. the tool name).
        input: what the span received (JSON).
        output: what the span produced (JSON); an agent span's output holds ``text``.
        ended_at: when the span ended.
        error: the recorded error, if the span failed.
        attributes: span attributes.
        metadata: span metadata.
        extra: any other keys of the span's JSON, kept as they were.

    >>> span = Span(span_id="s1", span_type="tool_call", started_at=datetime(2025, 1, 1))
    >>> span.parent_span_id is None
    True
    """

    span_id: str = attrs.field(validator=_non_empty_str)
    span_type: str = attrs.field(validator=_non_empty_str)
    started_at: datetime = attrs.field(validator=_datetime)
    parent_span_id: str | None = None
    trace_id: str | None = None
    name: str | None = None
    entity_type: str | None = None
    entity_id: str | None = None
    entity_name: str | None = None
    # The span's values are the traced program's own (any JSON): ``Any`` so that a scorer
    # reads them as the shapes it knows its agent writes.
    input: Any = None
    output: Any = None
    ended_at: datetime | None = attrs.field(default=None, validator=_optional_datetime)
    error: Any = None
    attributes: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def from_mastra_json(cls, data: object) -> Result[Span, TraceError]:
        """Structure one span from Mastra's camelCase JSON.

        ``Failure(TraceError)`` (kind ``invalid_span``) when the JSON is not a span: the message
        names the bad field and its value, ``span_id`` and ``trace_id`` are kept when readable.
        Timestamps may be ISO 8601 strings (a trailing ``Z`` is accepted) or datetimes.
        Unknown keys are kept in ``extra``.

        >>> Span.from_mastra_json({"spanId": "s", "spanType": "agent_run",
        ...                        "startedAt": "2025-01-01T00:00:00Z"}).unwrap().started_at.year
        2025
        >>> error = Span.from_mastra_json({"spanId": "s"}).failure()
        >>> error.kind, error.message, error.span_id
        ('invalid_span', 'spanType: required, a non-empty string', 's')
        """
        if not isinstance(data, Mapping):
            return Failure(TraceError(kind="invalid_span",
                                      message=f"a span must be an object, got {short_repr(data)}"))
        values: dict[str, Any] = {}
        problem = _span_values(cast(Mapping[str, object], data), values)
        if problem is not None:
            span_id, trace_id = data.get("spanId"), data.get("traceId")
            return Failure(TraceError(
                kind="invalid_span", message=problem,
                span_id=span_id if isinstance(span_id, str) and span_id else None,
                trace_id=trace_id if isinstance(trace_id, str) else None,
            ))
        values["input"] = data.get("input")
        values["output"] = data.get("output")
        values["error"] = data.get("error")
        values["extra"] = {k: v for k, v in data.items() if k not in _SPAN_KEYS}
        return Success(cls(**values))

    def to_mastra_json(self) -> dict[str, Any]:
        """This span as Mastra's camelCase JSON (the inverse of :meth:`from_mastra_json`)."""
        out: dict[str, Any] = dict(self.extra)
        for key, field in _SPAN_KEYS.items():
            value = getattr(self, field)
            out[key] = value.isoformat() if isinstance(value, datetime) else value
        return out


_SPAN_KEYS: Mapping[str, str] = {
    "spanId": "span_id", "spanType": "span_type", "startedAt": "started_at",
    "parentSpanId": "parent_span_id", "traceId": "trace_id", "name": "name",
    "entityType": "entity_type", "entityId": "entity_id", "entityName": "entity_name",
    "input": "input", "output": "output", "endedAt": "ended_at", "error": "error",
    "attributes": "attributes", "metadata": "metadata",
}


_LONGEST_TIME = 64


def _parse_time(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    # Python reads ISO 8601's basic format leniently: any run of 14 or more digits is a time
    # (5,000 ones parse as 1111-11-11 11:11:11.111111). No real timestamp is that long: the
    # longest, with nanoseconds and an offset, is 35 characters.
    if not isinstance(value, str) or len(value) > _LONGEST_TIME:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _span_values(data: Mapping[str, object], values: dict[str, Any]) -> str | None:
    """Read a span's typed keys into ``values``; the first bad field's message, or ``None``."""
    for key in ("spanId", "spanType"):
        value = data.get(key)
        if not isinstance(value, str) or not value:
            return (f"{key}: required, a non-empty string" if value is None
                    else f"{key}: must be a non-empty string, got {short_repr(value)}")
        values[_SPAN_KEYS[key]] = value
    for key in ("parentSpanId", "traceId", "name", "entityType", "entityId", "entityName"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key}: must be a string or null, got {short_repr(value)}"
        values[_SPAN_KEYS[key]] = value
    for key in ("startedAt", "endedAt"):
        value = data.get(key)
        if value is None:
            if key == "startedAt":
                return "startedAt: required, an ISO 8601 timestamp"
            continue
        parsed = _parse_time(value)
        if parsed is None:
            return f"{key}: must be an ISO 8601 timestamp, got {short_repr(value)}"
        values[_SPAN_KEYS[key]] = parsed
    for key in ("attributes", "metadata"):
        value = data.get(key)
        if value is not None and not isinstance(value, Mapping):
            return f"{key}: must be an object or null, got {short_repr(value)}"
        values[key] = value
    return None


def _to_spans(value: Iterable[Span]) -> tuple[Span, ...]:
    return tuple(value)


def _spans_are_spans(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    for index, span in enumerate(cast(tuple[object, ...], value)):
        if not isinstance(span, Span):
            raise TypeError(f"Trace.spans[{index}] must be a Span, got {short_repr(span)}")


@final
@attrs.frozen(kw_only=True)
class Trace:
    """A recorded trace: its spans, in any order.

    A ``Trace`` may be empty or inconsistent (a dangling parent id); :func:`trace_to_agent_run`
    reports such problems as :class:`TraceError` values. ``trace_id`` defaults to the first
    span's ``trace_id`` when built from JSON.

    >>> trace = Trace.from_mastra_json({"traceId": "t1", "spans": []}).unwrap()
    >>> trace.trace_id, trace.spans
    ('t1', ())
    """

    spans: tuple[Span, ...] = attrs.field(converter=_to_spans, validator=_spans_are_spans)
    trace_id: str | None = None

    @classmethod
    def from_mastra_json(cls, data: object) -> Result[Trace, TraceError]:
        """Structure a trace from Mastra's JSON: ``{"traceId": ..., "spans": [...]}``.

        ``Failure`` for ``None`` (``null_trace``), a missing or non-list ``spans``
        (``no_spans_array``) and a malformed span (``invalid_span``, naming its index and field).
        """
        if data is None:
            return Failure(TraceError(kind="null_trace", message="Trace is null or undefined"))
        spans_json = data.get("spans") if isinstance(data, Mapping) else None
        if not isinstance(spans_json, list | tuple):
            return Failure(TraceError(kind="no_spans_array",
                                      message="Trace must have a spans array"))
        trace_id = cast(Mapping[str, object], data).get("traceId")
        spans: list[Span] = []
        for index, item in enumerate(spans_json):
            span = Span.from_mastra_json(item)
            if isinstance(span, Failure):
                error = span.failure()
                return Failure(attrs.evolve(
                    error, message=f"spans[{index}]: {error.message}",
                    trace_id=trace_id if isinstance(trace_id, str) else error.trace_id,
                ))
            spans.append(span.unwrap())
        if not isinstance(trace_id, str):
            trace_id = next((s.trace_id for s in spans if s.trace_id), None)
        return Success(cls(spans=spans, trace_id=trace_id))

    def to_mastra_json(self) -> dict[str, Any]:
        """This trace as Mastra's JSON (``traceId``, ``spans``)."""
        return {"traceId": self.trace_id, "spans": [s.to_mastra_json() for s in self.spans]}

    def span(self, span_id: str) -> Span | None:
        """The span with this id, or ``None``."""
        return next((s for s in self.spans if s.span_id == span_id), None)


@final
@attrs.frozen(kw_only=True)
class TraceError:
    """Why a trace could not be scored; ``message`` is Mastra's wording.

    Attributes:
        kind: ``null_trace`` · ``no_spans_array`` · ``invalid_span`` · ``no_spans`` ·
            ``dangling_parent`` · ``no_root_agent_span`` · ``no_agent_output`` ·
            ``no_model_span`` · ``span_not_found`` · ``sink_failed`` (the score was computed
            but the sink raised; see ``result``) · ``invalid_otlp`` (an OTLP payload that is
            not JSON or not a trace request; a malformed OTLP span is ``invalid_span``) ·
            ``duplicate_span`` (two different OTLP spans of a trace share an id) ·
            ``duplicate_trace`` (a trace read from a stream was delivered again, identical:
            it is read once, and this says so) · ``conflicting_trace`` (delivered again with
            different spans under the same ids).
        message: a readable message, e.g. ``Span s2 references non-existent parent s9``.
        trace_id: the trace, when known.
        span_id: the span concerned, when there is one.
        result: the score that could not be delivered, for ``sink_failed``.
    """

    kind: TraceErrorKind
    message: str
    trace_id: str | None = None
    span_id: str | None = None
    result: ScoreResult[Any, Any] | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.kind not in get_args(TraceErrorKind):
            raise ValueError(f"TraceError.kind must be one of {get_args(TraceErrorKind)}, "
                             f"got {self.kind!r}")


TraceLike: TypeAlias = Trace | Mapping[str, object] | None
"""A :class:`Trace`, or Mastra's JSON for one (structured with :meth:`Trace.from_mastra_json`)."""



def _as_trace(trace: TraceLike) -> Result[Trace, TraceError]:
    if isinstance(trace, Trace):
        return Success(trace)
    return Trace.from_mastra_json(trace)


def _utc(moment: datetime) -> datetime:
    # Naive timestamps are read as UTC so that mixed traces still sort instead of raising.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
