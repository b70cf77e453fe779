"""Recorded agent traces: Span and Trace values (Mastra JSON or OTLP), trajectories, scoring.

The trajectory values are defined with the agent messages (:mod:`scorecore.agent`) and
re-exported here.

One module per concept: ``_spans`` (Span, Trace, TraceError and their Mastra JSON), one module
per transform of a trace format into a scorer's input (``_mastra``), ``_sinks`` (ScoreRecord and
delivery), ``_scoring`` (score_trace, score_traces), ``_trajectories``.
"""

from scorecore.agent import (
    ExpectedStep,
    Trajectory,
    TrajectoryExpectation,
    TrajectoryStep,
    extract_trajectory,
)
from scorecore.traces._mastra import trace_to_agent_run
from scorecore.traces._otlp import (
    agent_traces,
    otlp_to_traces,
    read_otlp_json_lines,
    read_otlp_requests,
)
from scorecore.traces._otlp._logs import (
    OtlpLogs,
    join_otlp_logs,
    read_otlp_log_lines,
    read_otlp_logs,
)
from scorecore.traces._scoring import (
    TraceBatchResult,
    TraceScoringError,
    TraceTarget,
    TraceTargetResult,
    score_trace,
    score_traces,
)
from scorecore.traces._sinks import ScoreRecord, ScoreSink
from scorecore.traces._spans import Span, Trace, TraceError, TraceErrorKind, TraceLike
from scorecore.traces._trajectories import extract_trajectory_from_trace

__all__ = [
    "ExpectedStep",
    "OtlpLogs",
    "ScoreRecord",
    "ScoreSink",
    "Span",
    "Trace",
    "TraceBatchResult",
    "TraceError",
    "TraceErrorKind",
    "TraceLike",
    "TraceScoringError",
    "TraceTarget",
    "TraceTargetResult",
    "Trajectory",
    "TrajectoryExpectation",
    "TrajectoryStep",
    "agent_traces",
    "extract_trajectory",
    "extract_trajectory_from_trace",
    "join_otlp_logs",
    "otlp_to_traces",
    "read_otlp_json_lines",
    "read_otlp_log_lines",
    "read_otlp_logs",
    "read_otlp_requests",
    "score_trace",
    "score_traces",
    "trace_to_agent_run",
]
