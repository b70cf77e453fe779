"""Evaluation spans handed straight to the SDK's own span processors: the sink's fast path.

An ``evaluation NAME`` span is made and ended at once and carries one event; through
``Tracer.start_span`` the SDK spends most of its time validating the same attributes twice (the
span's and the event's) and driving a span's life cycle that nobody observes. That cost is
about that of scoring a trivial item, so the sink builds the finished span itself and gives it
to the processors' ``on_end``, as the SDK's ``Span.end`` does.

Only where that is exactly what the SDK would have exported: an SDK ``Tracer`` enabled, without
the SDK's self-metrics, whose processors are all the SDK's own ``BatchSpanProcessor`` /
``SimpleSpanProcessor`` or the command line's ``ExportQueue`` (their ``on_start`` does
nothing) and whose limits would truncate nothing. Anything else (a custom processor, an
attribute length limit, another SDK's tracer, an SDK whose internals moved) takes the public
path, ``Tracer.start_span``. The sampler is asked as the SDK asks it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, final

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace import Tracer as SdkTracer
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, DEFAULT_ON
from opentelemetry.trace import SpanContext, SpanKind, TraceFlags, Tracer

from scorecore_adapters.otel._export import ExportQueue

__all__ = ["DirectSpans"]

_PASSIVE_PROCESSORS: Final = (BatchSpanProcessor, SimpleSpanProcessor, ExportQueue)
_RANDOM_TRACE_ID: Final = int(getattr(TraceFlags, "RANDOM_TRACE_ID", 0))


@final
class DirectSpans:
    """Finished one-event spans for an SDK tracer; :meth:`of` says whether it applies."""

    def __init__(self, tracer: Any, processor: Any, max_attributes: int) -> None:
        self._tracer = tracer
        self._processor = processor
        self._processors: object = None  # the processors last found all passive
        self._max_attributes = max_attributes

    @classmethod
    def of(cls, tracer: Tracer) -> DirectSpans | None:
        """The fast path for ``tracer``, or None where it would not export what the SDK does."""
        if type(tracer) is not SdkTracer:
            return None
        try:
            processor = tracer.span_processor
            limits = tracer._span_limits
            if type(tracer._tracer_metrics).__name__ != "NoOpTracerMetrics":
                return None  # the SDK's self-metrics count spans started through it
            if limits.max_span_attribute_length is not None or (
                    limits.max_attribute_length is not None):
                return None  # the SDK would truncate long values
            if limits.max_events is not None and limits.max_events < 1:
                return None
            counts = [c for c in (limits.max_span_attributes, limits.max_event_attributes)
                      if c is not None]
            # what emit reads, present on every SDK tracer it can serve
            _ = (tracer.sampler, tracer.id_generator, tracer.resource,
                 tracer.instrumentation_info, tracer._instrumentation_scope)
            direct = cls(tracer, processor, min(counts, default=1 << 30))
        except AttributeError:  # an SDK whose internals moved: the public path
            return None
        return direct if direct.usable() else None

    def usable(self) -> bool:
        """Whether the tracer is enabled and its processors are still the SDK's own."""
        tracer = self._tracer
        try:
            processors = self._processor._span_processors
            enabled = tracer._is_enabled()
        except AttributeError:
            return False
        if processors is not self._processors:  # a processor was added since: look again
            if not all(type(p) in _PASSIVE_PROCESSORS for p in processors):
                return False
            self._processors = processors
        return bool(enabled)

    def emit(
        self, name: str, event: str, attributes: Mapping[str, Any],
        parent: tuple[Context, SpanContext] | None,
    ) -> bool:
        """End a span ``name`` carrying ``attributes`` and one event ``event`` with them.

        False when this path cannot take it (the caller then uses the public path).
        """
        if len(attributes) > self._max_attributes or not self.usable():
            return False
        tracer = self._tracer
        if parent is None:
            context, parent_span = None, None
            trace_id = tracer.id_generator.generate_trace_id()
            random_id = tracer.id_generator.is_trace_id_random()
        else:
            context, parent_span = parent
            trace_id = parent_span.trace_id
            random_id = bool(parent_span.trace_flags & _RANDOM_TRACE_ID)
        sampler = tracer.sampler
        if sampler is DEFAULT_ON or sampler is ALWAYS_ON:
            # What they answer, known without asking: the parent (built sampled) or a root is
            # recorded and sampled, with these attributes and the parent's trace state.
            flags = TraceFlags.SAMPLED
            state = parent_span.trace_state if parent_span is not None else None
            values = MappingProxyType(dict(attributes))
        else:
            sampling = sampler.should_sample(
                context, trace_id, name, SpanKind.INTERNAL, attributes, ())
            if not sampling.decision.is_recording():
                return True  # sampled out: the SDK would export nothing either
            flags = TraceFlags.SAMPLED if sampling.decision.is_sampled() else TraceFlags.DEFAULT
            state = sampling.trace_state
            values = MappingProxyType(dict(sampling.attributes))
        if random_id:
            flags |= _RANDOM_TRACE_ID
        span_context = SpanContext(trace_id, tracer.id_generator.generate_span_id(),
                                   is_remote=False, trace_flags=TraceFlags(flags),
                                   trace_state=state)
        now = time.time_ns()
        self._processor.on_end(ReadableSpan(
            name, context=span_context, parent=parent_span, resource=tracer.resource,
            attributes=values, events=(Event(event, values, timestamp=now),),
            kind=SpanKind.INTERNAL, start_time=now, end_time=now,
            instrumentation_info=tracer.instrumentation_info,
            instrumentation_scope=tracer._instrumentation_scope,
        ))
        return True
