"""Reading OTLP/JSON requests: one request, JSON lines, or any framing's sequence of requests."""

from __future__ import annotations

import collections
import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import Final, cast, final

import attrs
from returns.result import Failure, Result, Success

from scorecore.traces._otlp._assembly import complete, merge_span
from scorecore.traces._otlp._span import spans_of
from scorecore.traces._spans import Span, Trace, TraceError

RECENT_TRACES: Final = 1024
"""How many traces read from a stream are remembered to recognise a second delivery."""


def otlp_to_traces(payload: object) -> Result[tuple[Trace, ...], TraceError]:
    """The traces of one OTLP/JSON ``ExportTraceServiceRequest``, one per trace id.

    Traces come in the order their first span appears; a trace's spans keep file order, a
    span sent twice is kept once. ``Failure`` names the span (its id and name) and the field
    for the first malformed span, or the id two different spans share (``duplicate_span``).

    >>> span = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
    ...         "name": "chat gpt-4o", "startTimeUnixNano": "1544712660000000000",
    ...         "attributes": [
    ...             {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
    ...             {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}}]}
    >>> traces = otlp_to_traces({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    >>> traces.unwrap()[0].spans[0].span_type, traces.unwrap()[0].spans[0].attributes["model"]
    ('model_generation', 'gpt-4o')
    >>> otlp_to_traces({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "ab"}]}]}]}
    ...               ).failure().message
    'span ab: traceId: required, a hex string'
    """
    grouped: dict[str, dict[str, Span]] = {}
    for item in spans_of(payload):
        if isinstance(item, Failure):
            return Failure(item.failure())
        span = item.unwrap()
        trace_id = cast(str, span.trace_id)
        problem = merge_span(grouped.setdefault(trace_id, {}), span)
        if problem is not None:
            return Failure(TraceError(kind="duplicate_span", message=problem,
                                      trace_id=trace_id, span_id=span.span_id))
    return Success(tuple(complete(Trace(spans=tuple(s.values()), trace_id=t))
                         for t, s in grouped.items()))


def read_otlp_json_lines(lines: Iterable[str | bytes]) -> Iterator[Result[Trace, TraceError]]:
    """Stream the traces of a file of OTLP/JSON requests, one request per line.

    This is what the OpenTelemetry Collector's file exporter writes; a file holding a single
    (possibly pretty-printed) request is read whole when its first line does not parse alone.
    A trace is yielded once its root span (no parent) has been read, at the end of that line:
    exporters send a span when it ends, and a root ends after its children. Spans of a trace
    without a root are yielded at the end. Memory holds only the traces still waiting for
    their root. A line that is not JSON or not a request is a ``Failure`` naming its line
    number; a malformed span fails its trace (the rest of the file goes on).

    >>> line = ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "01", '
    ...         '"spanId": "02", "name": "root", "startTimeUnixNano": "1"}]}]}]}')
    >>> first, second = read_otlp_json_lines([line, "not json"])
    >>> first.unwrap().trace_id, second.failure().message
    ('01', 'line 2: not JSON (Expecting value at character 0)')
    """
    return read_otlp_requests((f"line {n}", p) for n, p in json_lines(lines))


def read_otlp_requests(
    requests: Iterable[tuple[str, object]],
) -> Iterator[Result[Trace, TraceError]]:
    """Stream the traces of a sequence of OTLP/JSON requests, each with where it was read.

    What :func:`read_otlp_json_lines` does once it has parsed the lines, for readers of other
    framings (the protobuf reader of ``scorecore_adapters.otel``): each item is a request (as
    ``otlp_to_traces`` takes it) with a label for the messages (``"line 3"``, ``"frame 2 at
    byte 120"``); a trace is yielded once its root span has been read, the spans of a trace
    without a root at the end. An item that is already a ``TraceError`` (a request its reader
    could not decode) is passed on as a ``Failure``.

    >>> root = {"traceId": "01", "spanId": "02", "name": "root", "startTimeUnixNano": "1"}
    >>> request = {"resourceSpans": [{"scopeSpans": [{"spans": [root]}]}]}
    >>> first, second = read_otlp_requests([("frame 1", request), ("frame 2", {"x": 1})])
    >>> first.unwrap().trace_id, second.failure().message
    ('01', 'frame 2: resourceSpans: required, a list, got None')
    """
    reading = _Streams()
    for where, payload in requests:
        if isinstance(payload, TraceError):
            yield Failure(payload)
            continue
        rooted: list[str] = []
        for item in spans_of(payload):
            if isinstance(item, Failure):
                error = item.failure()
                if error.trace_id is None:
                    yield Failure(attrs.evolve(error, message=f"{where}: {error.message}"))
                else:
                    reading.fail(error.trace_id.lower(),
                                 attrs.evolve(error, message=f"{where}: {error.message}"))
                continue
            span = item.unwrap()
            trace_id = cast(str, span.trace_id)
            reading.add(trace_id, span, where)
            if span.parent_span_id is None:
                rooted.append(trace_id)
        for trace_id in dict.fromkeys(rooted):
            if trace_id in reading.pending:
                yield from reading.finish(trace_id)
    for trace_id in list(reading.pending):
        yield from reading.finish(trace_id)
    for error in reading.broken.values():
        yield Failure(error)
    reading.broken.clear()


@final
class _Streams:
    """The traces of a stream still waiting for their root, and a digest of each one read."""

    def __init__(self) -> None:
        self.pending: dict[str, dict[str, Span]] = {}
        self.broken: dict[str, TraceError] = {}
        # trace id -> (its root span ids, a digest of it), for the RECENT traces read: a trace
        # delivered again (an exporter's retry comes soon after) is recognised without keeping
        # its spans, and memory stays flat however long the stream
        self.read: collections.OrderedDict[str, bytes] = collections.OrderedDict()

    def fail(self, trace_id: str, error: TraceError) -> None:
        self.broken.setdefault(trace_id, error)

    def add(self, trace_id: str, span: Span, where: str) -> None:
        problem = merge_span(self.pending.setdefault(trace_id, {}), span)
        if problem is not None:
            self.fail(trace_id, TraceError(kind="duplicate_span", trace_id=trace_id,
                                           span_id=span.span_id,
                                           message=f"{where}: {problem}"))

    def finish(self, trace_id: str) -> Iterator[Result[Trace, TraceError]]:
        spans = tuple(self.pending.pop(trace_id).values())
        error = self.broken.pop(trace_id, None)
        if error is not None:
            yield Failure(error)
            return
        roots = hashlib.blake2b(" ".join(sorted(s.span_id for s in spans
                                                if s.parent_span_id is None)).encode(),
                                digest_size=8).digest()
        digest = roots + _digest(spans)
        earlier = self.read.get(trace_id)
        if earlier is not None and earlier[:8] == roots:
            # the root again: the same trace delivered twice, not late spans of a read trace
            same = earlier == digest
            yield Failure(TraceError(
                kind="duplicate_trace" if same else "conflicting_trace", trace_id=trace_id,
                message=(f"trace {trace_id} was delivered again with the same spans: "
                         f"read once" if same else
                         f"trace {trace_id} was delivered again with different spans under "
                         f"the same ids: which copy is right cannot be known")))
            return
        self.read[trace_id] = digest
        if len(self.read) > RECENT_TRACES:
            self.read.popitem(last=False)
        yield Success(complete(Trace(spans=spans, trace_id=trace_id)))


def _digest(spans: tuple[Span, ...]) -> bytes:
    # What tells two deliveries apart cheaply: every span id with its parent, name and times,
    # and the whole root span (a digest of every span's attributes would double the cost of
    # reading a file); values are bounded in depth, so repr cannot recurse too far.
    shape = sorted((s.span_id, s.parent_span_id or "", s.name or "", str(s.started_at),
                    str(s.ended_at)) for s in spans)
    roots = [s for s in spans if s.parent_span_id is None]
    return hashlib.blake2b(repr((shape, roots)).encode(), digest_size=16).digest()


def _text(line: str | bytes) -> str:
    return line.decode("utf-8", "replace") if isinstance(line, bytes) else line


def _not_json(number: int, exc: ValueError) -> TraceError:
    reason = (f"{exc.msg} at character {exc.pos}" if isinstance(exc, json.JSONDecodeError)
              else str(exc))
    return TraceError(kind="invalid_otlp", message=f"line {number}: not JSON ({reason})")


def _load(text: str) -> object:
    """One line's JSON; ``ValueError`` also for nesting too deep or a 4,300-digit number."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deep to read") from None


def json_lines(lines: Iterable[str | bytes]) -> Iterator[tuple[int, object | TraceError]]:
    """Each non-blank line's JSON, numbered from 1; a line that is not JSON as a TraceError."""
    iterator = iter(lines)
    number = 0
    for line in iterator:
        number += 1
        text = _text(line)
        if not text.strip():
            continue
        try:
            yield number, _load(text)
        except ValueError as exc:
            if number > 1:
                yield number, _not_json(number, exc)
                continue
            # A pretty-printed single request spans many lines: try the whole file.
            rest = [_text(r) for r in iterator]
            try:
                yield 1, _load(text + "".join(rest))
            except ValueError:
                # Not that either: JSON lines whose first line is broken.
                yield 1, _not_json(1, exc)
                for offset, other in enumerate(rest, start=2):
                    if other.strip():
                        try:
                            yield offset, _load(other)
                        except ValueError as error:
                            yield offset, _not_json(offset, error)
            return
