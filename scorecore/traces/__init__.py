"""Recorded agent traces: Span and Trace values, trace_to_agent_run, trajectories, score_trace(s).
"""

from scorecore.traces._traces import (
    ScoreRecord,
    ScoreSink,
    Span,
    Trace,
    TraceBatchResult,
    TraceError,
    TraceErrorKind,
    TraceLike,
    TraceScoringError,
    TraceTarget,
    TraceTargetResult,
    Trajectory,
    TrajectoryStep,
    extract_trajectory,
    score_trace,
    score_traces,
    trace_to_agent_run,
)

__all__ = [
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
    "TrajectoryStep",
    "extract_trajectory",
    "score_trace",
    "score_traces",
    "trace_to_agent_run",
]
