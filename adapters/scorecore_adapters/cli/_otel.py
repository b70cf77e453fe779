"""``--otel-endpoint``: report each scored run of ``eval`` / ``eval-traces`` over OTLP/HTTP;
``--otel-evaluation-spans``: the evaluation itself too, as spans; ``--otel-timeout``: how long
scoring waits for room in the export queue, and the end for the last events."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TextIO, final

from scorecore.evals import ItemResult, Threshold
from scorecore_adapters.cli._common import UsageError

if TYPE_CHECKING:  # the otel extra is optional: imported when the flag is given
    from scorecore_adapters.otel._export import DeliveryTally

DEFAULT_TIMEOUT = 30.0
"""Seconds ``--otel-timeout`` defaults to (the SDK's own shutdown timeout)."""


@final
class OtelReporter:
    """The ``otel_sink`` of a command: one ``gen_ai.evaluation.result`` event per scorer
    outcome, exported in the background to the endpoint; with ``evaluation_spans``, an item
    span with a span per scorer and per judge call as well.

    A full export queue makes scoring wait for room (at most ``timeout`` seconds) instead of
    dropping events; :meth:`close` sends the rest while exports succeed (giving up after
    ``timeout`` seconds without one), and says how many events were sent and how many were not.
    """

    def __init__(
        self, endpoint: str, *, thresholds: Mapping[str, Threshold], gates: Iterable[str],
        evaluation_spans: bool = False, timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        try:
            # Imported here: the otel extra is optional, and only this flag needs it.
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # noqa: PLC0415
                OTLPSpanExporter,
            )
            from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
            from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415

            from scorecore_adapters.otel import EVENT_NAME, otel_sink  # noqa: PLC0415
            from scorecore_adapters.otel._export import (  # noqa: PLC0415
                ExportQueue,
                batch_settings,
            )
        except ImportError:
            raise UsageError("--otel-endpoint needs the otel extra: "
                             "pip install 'scorecore[otel]'") from None
        if not endpoint.startswith(("http://", "https://")):
            raise UsageError(f"--otel-endpoint must be an http(s) URL of an OTLP/HTTP traces "
                             f"receiver (e.g. http://127.0.0.1:4318/v1/traces), got {endpoint!r}")
        self.endpoint = endpoint
        self._timeout = timeout
        # Resource.create reads OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME as usual; the
        # queue and batch sizes come from the standard OTEL_BSP_* variables.
        self._provider = TracerProvider(resource=Resource.create({"service.name": "scorecore"}))
        max_queue, max_batch, delay = batch_settings()
        # One export waits as long as the rest does (an endpoint taking 10 s per export
        # answers in time), unless the standard variables set the exporter's own timeout.
        own = any(os.environ.get(name) for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                                                    "OTEL_EXPORTER_OTLP_TIMEOUT"))
        exporter = OTLPSpanExporter(endpoint=endpoint, timeout=None if own else timeout)
        self._queue = ExportQueue(exporter, event_name=EVENT_NAME,
                                  max_queue=max_queue, max_batch=max_batch,
                                  schedule_delay=delay, wait=timeout)
        self._provider.add_span_processor(self._queue)
        self._sink = otel_sink(tracer_provider=self._provider, thresholds=thresholds, gates=gates,
                               evaluation_spans=evaluation_spans)
        self.tally: DeliveryTally | None = None

    def __call__(self, result: ItemResult) -> None:
        """Report one completed item's outcomes."""
        self._sink(result)

    def close(self) -> None:
        """Send what is still queued (while exports succeed) and stop; :attr:`tally` then
        holds the final counts."""
        if self.tally is None:
            self.tally = self._queue.close(timeout=self._timeout)
            self._provider.shutdown()

    def to_json(self) -> dict[str, Any]:
        """The counts for the JSON report (``otel``)."""
        tally = self._closed()
        return {"endpoint": self.endpoint, "events": tally.events, "eventsSent": tally.sent,
                "eventsDropped": tally.dropped}

    def print(self, out: TextIO) -> None:
        """One line: every event sent, or how many were not and what to change."""
        tally = self._closed()
        if not tally.dropped:
            print(f"otel: {tally.sent:,} evaluation event(s) sent to {self.endpoint}", file=out)
            return
        print(f"otel: {tally.dropped:,} of {tally.events:,} evaluation event(s) not delivered "
              f"to {self.endpoint} (not sent within --otel-timeout {self._timeout:g}s, or the "
              f"export failed; {tally.sent:,} sent): a slow or unreachable endpoint; raise "
              f"--otel-timeout to wait longer", file=out)

    def _closed(self) -> DeliveryTally:
        if self.tally is None:
            raise RuntimeError("OtelReporter: close() it before reading its counts")
        return self.tally
