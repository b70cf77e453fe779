"""``--otel-endpoint`` against a slow receiver: every event of a batch arrives (the exporter
makes scoring wait for room instead of dropping), and what could not be sent in the time
allowed is counted, printed and in the JSON report.

The receiver is a real OTLP/HTTP server on 127.0.0.1 answering each export after a small real
delay; the OpenTelemetry batch settings (``OTEL_BSP_*``) make its queue small, so a few dozen
events fill it as 10,000 would fill the default 2,048.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanContext, TraceFlags

from scorecore_adapters.cli import main
from scorecore_adapters.otel import EVENT_NAME
from scorecore_adapters.otel._export import ExportQueue
from tests.otlp_receiver import otlp_receiver

SCORERS = '''
from scorecore import create_scorer

one = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
'''


@pytest.fixture
def small_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    """A queue of 8 spans sent 4 at a time, at once when 4 wait (the standard variables)."""
    monkeypatch.setenv("OTEL_BSP_MAX_QUEUE_SIZE", "8")
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "20")


def _eval(tmp_path: Path, items: int, *flags: str) -> tuple[int, str, dict[str, object]]:
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{n}", "input": "q", "output": "a"}) + "\n"
                            for n in range(items)))
    report = tmp_path / "report.json"
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", str(scorers), "--data", str(data), "--store",
                 f"sqlite:{tmp_path / 's.db'}", "--no-cache", "--output", str(report), *flags],
                out=out, err=err)
    return code, out.getvalue() + err.getvalue(), json.loads(report.read_text())


@pytest.mark.usefixtures("small_queue")
def test_a_slow_endpoint_receives_every_event_of_the_batch(tmp_path: Path) -> None:
    """40 events through a queue of 8 to a receiver taking 0.05 s per export: all 40 arrive,
    and the command says so (the SDK's batch processor dropped what did not fit)."""
    with otlp_receiver(delay=0.05) as receiver:
        code, printed, report = _eval(tmp_path, 40, "--otel-endpoint", receiver.url)
        received = [s for s in receiver.spans() if s["name"] == "evaluation one"]
    assert code == 0, printed
    assert len(received) == 40
    assert "otel: 40 evaluation event(s) sent" in printed
    assert report["otel"] == {"endpoint": receiver.url, "events": 40, "eventsSent": 40,
                              "eventsDropped": 0}
    assert printed.rstrip().splitlines()[-1].startswith("verdict: ")  # still the last line


@pytest.mark.usefixtures("small_queue")
def test_events_not_sent_in_the_time_allowed_are_counted(tmp_path: Path) -> None:
    """A receiver that answers after 30 s and ``--otel-timeout 0.2``: scoring waits at most
    0.2 s for room, the end at most 0.2 s more; every event not sent is counted, in the output
    and the JSON report, and the verdict and exit code do not change."""
    with otlp_receiver(delay=30) as receiver:
        started = time.monotonic()
        code, printed, report = _eval(tmp_path, 40, "--otel-endpoint", receiver.url,
                                      "--otel-timeout", "0.2")
        took = time.monotonic() - started
    assert code == 0, printed
    otel = report["otel"]
    assert isinstance(otel, dict)
    assert otel["events"] == 40
    assert otel["eventsSent"] == 0  # no export was answered in time
    assert otel["eventsDropped"] == 40
    assert "otel: 40 of 40 evaluation event(s) not delivered" in printed
    assert "--otel-timeout" in printed  # says what to change
    assert took < 20  # bounded: nowhere near the receiver's 30 s per export


def test_the_otel_timeout_must_be_a_positive_number() -> None:
    """A bad ``--otel-timeout`` is a usage error naming the flag and the value."""
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", "x.py", "--data", "d.jsonl", "--otel-endpoint", "http://127.0.0.1:9/",
                 "--otel-timeout", "-1"], out=out, err=err)
    assert code == 2
    assert "--otel-timeout" in err.getvalue()
    assert "expected a positive number of seconds, got '-1'" in err.getvalue()


def test_the_otel_timeout_needs_an_endpoint(tmp_path: Path) -> None:
    """``--otel-timeout`` without ``--otel-endpoint`` is a usage error, before anything runs."""
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"input": "q", "output": "a"}) + "\n")
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", str(scorers), "--data", str(data), "--store",
                 f"sqlite:{tmp_path / 's.db'}", "--otel-timeout", "5"], out=out, err=err)
    assert code == 2
    assert "--otel-timeout needs --otel-endpoint URL" in err.getvalue()
    assert not (tmp_path / "s.db").exists()


def _span(number: int) -> ReadableSpan:
    context = SpanContext(trace_id=1, span_id=number + 1, is_remote=False,
                          trace_flags=TraceFlags(TraceFlags.SAMPLED))
    return ReadableSpan(f"evaluation s{number}", context=context,
                        events=(Event(EVENT_NAME, {}),), start_time=0, end_time=0)


class _Gated(SpanExporter):
    """An exporter that holds each export until released, then answers ``result``."""

    def __init__(self, result: SpanExportResult = SpanExportResult.SUCCESS) -> None:
        self.gate = threading.Event()
        self.exported: list[str] = []
        self.result = result

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.gate.wait(10)
        self.exported += [s.name for s in spans]
        return self.result

    def shutdown(self) -> None:
        self.gate.set()


def test_a_full_queue_makes_the_caller_wait_for_room() -> None:
    """With the queue full, ``on_end`` waits until an export makes room, then queues the span:
    nothing is dropped while the wait lasts less than its bound."""
    exporter = _Gated()
    queue = ExportQueue(exporter, event_name=EVENT_NAME, max_queue=2, max_batch=1,
                        schedule_delay=0.01, wait=10)
    for n in range(3):  # one in the exporter's hands, two queued
        queue.on_end(_span(n))
    queued = threading.Event()

    def last() -> None:
        queue.on_end(_span(3))
        queued.set()

    thread = threading.Thread(target=last)
    thread.start()
    assert not queued.wait(0.1)  # waiting for room
    exporter.gate.set()
    assert queued.wait(10)
    thread.join()
    tally = queue.close(timeout=10)
    assert exporter.exported == ["evaluation s0", "evaluation s1", "evaluation s2",
                                 "evaluation s3"]
    assert (tally.events, tally.sent, tally.dropped) == (4, 4, 0)


def test_a_failed_export_counts_its_events_as_not_delivered() -> None:
    """An export the exporter reports failed (after its own retries) counts as dropped."""
    exporter = _Gated(SpanExportResult.FAILURE)
    exporter.gate.set()
    queue = ExportQueue(exporter, event_name=EVENT_NAME, max_queue=8, max_batch=2,
                        schedule_delay=0.01, wait=10)
    for n in range(5):
        queue.on_end(_span(n))
    tally = queue.close(timeout=10)
    assert (tally.events, tally.sent, tally.dropped) == (5, 0, 5)


def test_the_sinks_fast_path_hands_spans_to_the_queue() -> None:
    """The queue is one of the processors the sink hands finished spans to directly (its
    ``on_start`` does nothing), so the command keeps the sink's measured cost."""
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415

    from scorecore_adapters.otel._direct import DirectSpans  # noqa: PLC0415

    exporter = _Gated()
    exporter.gate.set()
    provider = TracerProvider()
    queue = ExportQueue(exporter, event_name=EVENT_NAME, max_queue=8, max_batch=2,
                        schedule_delay=0.01, wait=10)
    provider.add_span_processor(queue)
    direct = DirectSpans.of(provider.get_tracer("t"))
    assert direct is not None
    assert direct.emit("evaluation x", EVENT_NAME, {"a": 1}, None)
    assert queue.close(timeout=10).sent == 1
    assert exporter.exported == ["evaluation x"]


class _Slow(SpanExporter):
    """An exporter taking ``seconds`` per export (a slow but working endpoint)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.exported = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        time.sleep(self.seconds)
        self.exported += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def test_the_end_waits_while_exports_succeed() -> None:
    """Draining takes longer than the timeout, but each export takes less: the end keeps
    waiting while exports succeed, and every span arrives (the timeout bounds a stall)."""
    exporter = _Slow(0.05)
    queue = ExportQueue(exporter, event_name=EVENT_NAME, max_queue=16, max_batch=1,
                        schedule_delay=10.0, wait=10)
    for n in range(8):
        queue.on_end(_span(n))
    tally = queue.close(timeout=0.15)  # 8 exports of 0.05 s: 0.4 s in all
    assert (tally.events, tally.sent, tally.dropped) == (8, 8, 0)


def test_the_end_gives_up_after_one_timeout_without_progress() -> None:
    """An endpoint that never answers costs one timeout at the end, and everything is
    counted dropped."""
    exporter = _Gated()  # never released until shutdown
    queue = ExportQueue(exporter, event_name=EVENT_NAME, max_queue=16, max_batch=2,
                        schedule_delay=0.01, wait=10)
    for n in range(6):
        queue.on_end(_span(n))
    started = time.monotonic()
    tally = queue.close(timeout=0.2)
    assert time.monotonic() - started < 5
    assert (tally.events, tally.sent, tally.dropped) == (6, 0, 6)
