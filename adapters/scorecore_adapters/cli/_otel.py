"""``--otel-endpoint``: report each scored run of ``eval`` / ``eval-traces`` over OTLP/HTTP;
``--otel-evaluation-spans``: the evaluation itself too, as spans."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import final

from scorecore.evals import ItemResult, Threshold
from scorecore_adapters.cli._common import UsageError


@final
class OtelReporter:
    """The ``otel_sink`` of a command: one ``gen_ai.evaluation.result`` event per scorer
    outcome, sent by a batch span processor to the endpoint; :meth:`close` flushes them. With
    ``evaluation_spans``, an item span with a span per scorer and per judge call as well."""

    def __init__(
        self, endpoint: str, *, thresholds: Mapping[str, Threshold], gates: Iterable[str],
        evaluation_spans: bool = False,
    ) -> None:
        try:
            # Imported here: the otel extra is optional, and only this flag needs it.
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
                OTLPSpanExporter,
            )
            from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
            from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
            from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: PLC0415

            from scorecore_adapters.otel import otel_sink  # noqa: PLC0415
        except ImportError:
            raise UsageError("--otel-endpoint needs the otel extra: "
                             "pip install 'scorecore[otel]'") from None
        if not endpoint.startswith(("http://", "https://")):
            raise UsageError(f"--otel-endpoint must be an http(s) URL of an OTLP/HTTP traces "
                             f"receiver (e.g. http://127.0.0.1:4318/v1/traces), got {endpoint!r}")
        # Resource.create reads OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME as usual.
        self._provider = TracerProvider(resource=Resource.create({"service.name": "scorecore"}))
        self._provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        self._sink = otel_sink(tracer_provider=self._provider, thresholds=thresholds, gates=gates,
                               evaluation_spans=evaluation_spans)

    def __call__(self, result: ItemResult) -> None:
        """Report one completed item's outcomes."""
        self._sink(result)

    def close(self) -> None:
        """Send what is still queued and stop."""
        self._provider.shutdown()
