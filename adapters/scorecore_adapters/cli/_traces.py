"""``scorecore eval-traces``: score every agent run of an OTLP trace file, as ``eval`` does.

Each agent root span of the file (an ``agent_run`` span with no agent above it: GenAI
``invoke_agent``, OpenInference ``AGENT``) becomes one dataset item: its agent input and output
(:func:`~scorecore.traces.trace_to_agent_run`), the id ``TRACE_ID-SPAN_ID`` (stable, so
``--resume`` works), and the run's extra keys naming the span, as ``score_trace`` sets them.
From there the batch is ``eval``'s: the same report, store, judge cache and gates.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from scorecore_adapters.cli._common import UsageError
from scorecore_adapters.cli._eval import run_eval
from scorecore_adapters.cli._trace_files import OtlpTraceReader, logs_next_to, shown_path


def run_eval_traces(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``scorecore eval-traces``; returns the exit code."""
    # eval's options that a trace file does not have: the output is recorded, one engine.
    args.data, args.target, args.engine, args.workers = args.file, None, "local", 1
    readers: list[OtlpTraceReader] = []

    logs = args.logs
    if logs is not None and not logs.is_file():
        raise UsageError(f"--logs: file not found: {shown_path(logs)}")
    if logs is None:
        logs = logs_next_to(Path(args.file))
        if logs is not None:
            print(f"note: reading log records from {shown_path(logs)} (next to the traces; "
                  f"--logs FILE to choose another)", file=err)

    def reader(path: Path, warn: TextIO) -> OtlpTraceReader:
        readers.append(OtlpTraceReader(path, warn=warn, given_format=args.format, logs=logs,
                                       explain=args.explain))
        return readers[-1]

    code = run_eval(args, out, err, reader=reader, unit="agent runs")
    for made in readers:
        if made.without_agent:
            print(f"note: {made.without_agent} trace(s) in {made.shown} had no agent span "
                  f"(gen_ai.operation.name=invoke_agent or openinference.span.kind=AGENT) "
                  f"and were not scored", file=err)
        if made.repeated:
            print(f"note: {made.repeated} trace(s) in {made.shown} were delivered more than "
                  f"once with the same spans and were scored once", file=err)
    return code
