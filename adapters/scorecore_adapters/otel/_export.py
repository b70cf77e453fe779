"""Spans exported in the background with back-pressure and a count of what never arrived.

The SDK's ``BatchSpanProcessor`` drops a span when its queue is full and says only ``Queue
full, dropping Span.`` on stderr: against an endpoint taking 10 s per export, a batch of
10,000 score events delivered 2,048. :class:`ExportQueue` exports the same way (a worker
thread, batches of ``max_batch``, at once when a batch is waiting, else every
``schedule_delay``) but a full queue makes the caller wait for room, up to ``wait`` seconds,
and :meth:`ExportQueue.close` sends the rest while exports succeed, giving up after a
``timeout`` without one; every span is counted as sent (the exporter said so), or dropped (no
room in time, an export that failed after the exporter's own retries, or still unsent at the
end).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Final, final

import attrs
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["DeliveryTally", "ExportQueue", "batch_settings"]


@final
@attrs.frozen(kw_only=True)
class DeliveryTally:
    """How many evaluation events (spans carrying one) were handed over, sent and dropped.

    Attributes:
        events: every event handed to the queue.
        sent: those the exporter reported sent.
        dropped: the rest: no room in the queue in time, a failed export, or not sent by the
            end (``events - sent``, once the queue is closed).
        spans: every span handed over (with evaluation spans, more than ``events``).
        spans_dropped: the spans among them that were not sent.
    """

    events: int = 0
    sent: int = 0
    dropped: int = 0
    spans: int = 0
    spans_dropped: int = 0


_DEFAULTS: Final = {"OTEL_BSP_MAX_QUEUE_SIZE": 2048, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": 512,
                    "OTEL_BSP_SCHEDULE_DELAY": 5000}


def batch_settings() -> tuple[int, int, float]:
    """``(max_queue, max_batch, schedule_delay seconds)`` from the standard ``OTEL_BSP_*``
    variables, as the SDK's batch processor reads them (a bad value takes the default)."""
    values: dict[str, int] = {}
    for name, default in _DEFAULTS.items():
        text = os.environ.get(name, "")
        values[name] = int(text) if text.isdigit() and int(text) > 0 else default
    queue = values["OTEL_BSP_MAX_QUEUE_SIZE"]
    batch = min(values["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"], queue)
    return queue, batch, values["OTEL_BSP_SCHEDULE_DELAY"] / 1000


@final
class ExportQueue(SpanProcessor):
    """A span processor exporting in batches from a worker thread, with back-pressure.

    ``on_end`` queues a sampled span; when ``max_queue`` spans wait, it blocks until an export
    makes room, at most ``wait`` seconds, and counts the span dropped after that. Spans
    carrying an event named ``event_name`` are counted as events (:class:`DeliveryTally`).
    """

    def __init__(
        self, exporter: SpanExporter, *, event_name: str, max_queue: int, max_batch: int,
        schedule_delay: float, wait: float,
    ) -> None:
        self._exporter = exporter
        self._event_name = event_name
        self._max_queue = max_queue
        self._max_batch = max_batch
        self._delay = schedule_delay
        self._wait = wait
        self._queue: deque[ReadableSpan] = deque()
        self._lock = threading.Condition()  # guards everything below
        self._closing = False  # no new spans; the worker sends what is queued, then stops
        self._abandoned = False  # close gave up waiting: the worker counts nothing more
        # A wait for room timed out and no room was made since: later spans are dropped at once
        # (a stuck endpoint costs one wait, not one per span).
        self._starved = False
        self._flushes = 0  # force_flush calls waiting: send a partial batch at once
        self._in_flight: list[ReadableSpan] = []
        self._counts = {"events": 0, "sent": 0, "spans": 0, "spans_sent": 0}
        self._worker = threading.Thread(target=self._run, name="scorecore-otlp-export",
                                        daemon=True)
        self._worker.start()

    def _events(self, spans: Sequence[ReadableSpan]) -> int:
        name = self._event_name
        return sum(1 for span in spans if any(e.name == name for e in span.events))

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing: spans are queued when they end."""

    def on_end(self, span: ReadableSpan) -> None:
        """Queue ``span`` for export, waiting (bounded) for room when the queue is full."""
        context = span.context
        if context is None or not context.trace_flags.sampled:
            return
        with self._lock:
            self._counts["spans"] += 1
            self._counts["events"] += self._events((span,))
            deadline = time.monotonic() + self._wait
            while len(self._queue) >= self._max_queue and not self._closing:
                left = deadline - time.monotonic()
                if left <= 0 or self._starved:
                    self._starved = True
                    return  # counted as handed over, never sent: dropped
                self._lock.wait(left)
            if self._closing:
                return
            self._queue.append(span)
            if len(self._queue) >= self._max_batch:
                self._lock.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._abandoned and (self._queue or not self._closing):
                    if self._queue and (self._closing or self._flushes
                                        or len(self._queue) >= self._max_batch):
                        break
                    if not self._lock.wait(self._delay) and self._queue:
                        break  # the delay passed: send what waits
                if self._abandoned or not self._queue:
                    return  # closed and everything sent, or given up on
                count = min(self._max_batch, len(self._queue))
                batch = [self._queue.popleft() for _ in range(count)]
                self._in_flight = batch
                self._starved = False
                self._lock.notify_all()  # room for a caller waiting in on_end
            try:
                sent = self._exporter.export(batch) is SpanExportResult.SUCCESS
            # The exporter is a third party's: whatever it raises is a failed export.
            except Exception:  # noqa: BLE001 - see above
                sent = False
            with self._lock:
                self._in_flight = []
                if sent and not self._abandoned:
                    self._counts["sent"] += self._events(batch)
                    self._counts["spans_sent"] += len(batch)
                self._lock.notify_all()

    def tally(self) -> DeliveryTally:
        """The counts so far (what is queued or being sent counts as not sent yet)."""
        with self._lock:
            counts = dict(self._counts)
        return DeliveryTally(events=counts["events"], sent=counts["sent"],
                             dropped=counts["events"] - counts["sent"], spans=counts["spans"],
                             spans_dropped=counts["spans"] - counts["spans_sent"])

    def close(self, *, timeout: float) -> DeliveryTally:
        """Send what is queued, then stop; the final counts (whatever was not sent is dropped).

        Waits while exports succeed, and gives up once ``timeout`` seconds pass without one:
        a slow endpoint gets the whole queue (at most ``max_queue / max_batch`` exports, each
        bounded by the exporter's timeout), one that does not answer costs one ``timeout``.
        """
        with self._lock:
            self._closing = True
            self._lock.notify_all()
        while True:
            with self._lock:
                before = self._counts["spans_sent"]
            self._worker.join(timeout)
            with self._lock:
                stalled = self._counts["spans_sent"] == before
            if not self._worker.is_alive() or stalled:
                break
        with self._lock:
            self._abandoned = True  # an export still running is not waited for
            self._queue.clear()
            self._lock.notify_all()
        tally = self.tally()
        self._exporter.shutdown()
        return tally

    def shutdown(self) -> None:
        """Close, waiting at most ``wait`` seconds (the tracer provider's shutdown calls it)."""
        if not self._abandoned:
            self.close(timeout=self._wait)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Wait until everything queued was exported, at most ``timeout_millis``."""
        deadline = time.monotonic() + timeout_millis / 1000
        with self._lock:
            self._flushes += 1
            self._lock.notify_all()
            try:
                while self._queue or self._in_flight:
                    left = deadline - time.monotonic()
                    if left <= 0 or self._abandoned:
                        return False
                    self._lock.wait(left)
            finally:
                self._flushes -= 1
        return True
