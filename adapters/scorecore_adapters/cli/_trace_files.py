"""Trace files as ``eval``'s items: which format a file is, its agent runs read one by one,
and the log records that may lie next to it.

Read by ``scorecore eval-traces`` and ``scorecore datasets from-traces`` alike.
"""


from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO, final

import attrs
from returns.result import Failure, Result, Success

from scorecore.evals import EvalItem, InvalidItem, ItemLike
from scorecore.traces import (
    OtlpLogs,
    Trace,
    TraceError,
    agent_traces,
    join_otlp_logs,
    read_otlp_json_lines,
    read_otlp_log_lines,
    read_otlp_logs,
    trace_to_agent_run,
)
from scorecore_adapters.cli._common import UsageError

PROTOBUF_SUFFIXES = (".pb", ".binpb", ".protobuf")
"""A file with one of these suffixes holds one binary OTLP ExportTraceServiceRequest."""

FORMATS = ("json", "protobuf", "collector-proto")
"""``--format``: OTLP/JSON (lines, or one request), one protobuf request, or the Collector
file exporter's ``format: proto`` (length-prefixed protobuf requests)."""


def file_format(path: Path, given: str | None) -> str:
    """The format to read ``path`` in: ``given``, else found from the file.

    A file starting with a zero byte holds length-prefixed requests (the Collector's
    ``format: proto``; a first frame under 16 MiB starts with one), which neither JSON nor a
    protobuf request ever does; otherwise the suffix decides (:data:`PROTOBUF_SUFFIXES`: one
    protobuf request), and anything else is JSON.
    """
    if given is not None:
        return given
    try:
        with path.open("rb") as handle:
            first = handle.read(1)
    except OSError:
        first = b""  # reported when the file is read
    if first == b"\x00":
        return "collector-proto"
    return "protobuf" if path.suffix in PROTOBUF_SUFFIXES else "json"


def _item_id(trace: Trace) -> tuple[str, str]:
    root = next(s for s in trace.spans if s.parent_span_id is None)
    return f"{trace.trace_id}-{root.span_id}", root.span_id


@final
class OtlpTraceReader:
    """Streams one item per agent run from an OTLP/JSON trace file (JSON lines, or a single
    request); a line or span that cannot be read becomes an :class:`InvalidItem` (counted in
    :attr:`invalid`, written to ``warn``), an agent run that cannot be scored a failed item."""

    def __init__(self, path: Path, *, warn: TextIO, given_format: str | None = None,
                 logs: Path | None = None, explain: bool = False) -> None:
        self.path = path
        self.explain = explain
        self.logs = logs
        self.warn = warn
        self.format = file_format(path, given_format)
        self.invalid = 0
        self.without_agent = 0
        self.repeated = 0
        self.shown = os.fsencode(path).decode("utf-8", "replace")

    def _traces(self) -> Iterator[Result[Trace, TraceError]]:
        if self.logs is None:
            yield from self._read_traces()
            return
        logs = read_logs(self.logs)
        for error in logs.errors:
            yield Failure(attrs.evolve(error, message=f"{shown_path(self.logs)}: {error.message}"))
        seen: set[str | None] = set()
        for outcome in self._read_traces():
            if isinstance(outcome, Failure):
                yield outcome
                continue
            seen.add(outcome.unwrap().trace_id)
            yield join_otlp_logs(outcome.unwrap(), logs)
        for trace_id in sorted(set(logs.records) - seen):
            yield Failure(TraceError(kind="span_not_found", trace_id=trace_id, message=(
                f"{shown_path(self.logs)}: log records of trace {trace_id}, a trace not in "
                f"{self.shown}")))

    def _read_traces(self) -> Iterator[Result[Trace, TraceError]]:
        if self.format != "json":
            try:
                # Imported here: protobuf needs the otel extra; JSON does not.
                from scorecore_adapters.otel import (  # noqa: PLC0415
                    read_otlp_protobuf,
                    read_otlp_protobuf_frames,
                )
            except ImportError:
                raise UsageError(f"{self.shown}: reading protobuf needs the otel extra: "
                                 f"pip install 'scorecore[otel]'") from None
            if self.format == "collector-proto":
                with self.path.open("rb") as handle:
                    yield from read_otlp_protobuf_frames(handle)
                return
            traces = read_otlp_protobuf(self.path.read_bytes())
            if isinstance(traces, Failure):
                yield Failure(traces.failure())
            else:
                yield from (Success(t) for t in traces.unwrap())
            return
        with self.path.open(encoding="utf-8-sig", errors="replace", newline="\n") as handle:
            yield from read_otlp_json_lines(handle)

    def _items(self, *, report: bool) -> Iterator[ItemLike]:
        for outcome in self._traces():
            if isinstance(outcome, Failure):
                error = outcome.failure()
                if error.kind == "duplicate_trace":
                    # the same trace delivered twice (an exporter's retry): scored once
                    if report:
                        self.repeated += 1
                    continue
                if error.kind == "conflicting_trace":
                    raise UsageError(f"{self.shown}: {error.message}; keep one copy of the "
                                     f"trace in the file")
                reason = f"{self.shown}: {error.message}"
                if report:
                    self.invalid += 1
                    print(f"scorecore: warning: {reason}", file=self.warn)
                yield InvalidItem(reason=reason)
                continue
            if report and self.explain:
                print(explanation(outcome.unwrap()), file=self.warn)
            agents = agent_traces(outcome.unwrap())
            if not agents and report:
                self.without_agent += 1
            for agent in agents:
                item_id, span_id = _item_id(agent)
                run = trace_to_agent_run(agent)
                where = {"score_source": "trace", "target_scope": "span",
                         "target_entity_type": "agent_run",
                         "target_trace_id": agent.trace_id, "target_span_id": span_id}
                if isinstance(run, Failure):
                    # the judged span's ids go with the failure (an OTLP report of it lands
                    # under that span instead of in a new trace)
                    yield InvalidItem(id=item_id, extra=where, reason=(
                        f"{self.shown}: trace {agent.trace_id} span {span_id}: "
                        f"{run.failure().kind}: {run.failure().message}"))
                    continue
                agent_input, output = run.unwrap()
                yield EvalItem(input=agent_input, output=output, id=item_id, extra=where)

    def count(self) -> int:
        """The number of items (a streaming pass over the file, for the progress bar)."""
        return sum(1 for _ in self._items(report=False))

    def __iter__(self) -> Iterator[ItemLike]:
        return self._items(report=True)


def explanation(trace: Trace) -> str:
    """Which convention read each span of ``trace`` into which span type, and which spans
    stayed generic (``--explain``), so a user sees why a scorer got nothing."""
    lines = [f"explain: trace {trace.trace_id}: {len(trace.spans)} span(s)"]
    for span in trace.spans:
        otel = span.extra.get("otel")
        convention = otel.get("convention") if isinstance(otel, dict) else None
        how = (f"read by {convention}" if convention else
               "no convention recognised it (no gen_ai.operation.name, "
               "openinference.span.kind or known span name)")
        content = [k for k in ("input", "output") if getattr(span, k) is not None]
        lines.append(f"  span {span.span_id} {span.name!r} -> {span.span_type}, {how}"
                     + (f"; has {' and '.join(content)}" if content else "; no content"))
    return "\n".join(lines)


def shown_path(path: Path) -> str:
    """A path as a message shows it (bytes no encoding names, replaced)."""
    return os.fsencode(path).decode("utf-8", "replace")


def read_logs(path: Path) -> OtlpLogs:
    """The GenAI log records of an OTLP logs file: JSON lines, one protobuf request, or the
    Collector's frames (told apart as trace files are)."""
    kind = file_format(path, None)
    if kind == "json":
        with path.open(encoding="utf-8-sig", errors="replace", newline="\n") as handle:
            return read_otlp_log_lines(handle)
    try:
        from scorecore_adapters.otel._protobuf import logs_payloads  # noqa: PLC0415
    except ImportError:
        raise UsageError(f"{shown_path(path)}: reading protobuf needs the otel extra: "
                         f"pip install 'scorecore[otel]'") from None
    return read_otlp_logs(logs_payloads(path.read_bytes(), framed=kind == "collector-proto"))


def logs_next_to(path: Path) -> Path | None:
    """``NAME.logs.EXT`` for a trace file ``NAME.traces.EXT``, when it exists."""
    if ".traces." not in path.name:
        return None
    found = path.with_name(path.name.replace(".traces.", ".logs.", 1))
    return found if found.is_file() else None
