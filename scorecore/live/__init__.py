"""Scoring production traffic: live scoring with sampling, and the registry of named scorers.
"""

from scorecore.live._admission import LiveStats
from scorecore.live._calls import LiveCall
from scorecore.live._registry import Registry, ScorerNotFoundError
from scorecore.live._sampling import NoSampling, RatioSampling, Sampling, sample_point
from scorecore.live._scope import (
    LiveScoringError,
    LiveScoringErrorKind,
    LiveScoringScope,
    OnError,
    live_scoring,
)
from scorecore.live._scorer import LiveScorer, scored

__all__ = [
    "LiveCall",
    "LiveScorer",
    "LiveScoringError",
    "LiveScoringErrorKind",
    "LiveScoringScope",
    "LiveStats",
    "NoSampling",
    "OnError",
    "RatioSampling",
    "Registry",
    "Sampling",
    "ScorerNotFoundError",
    "live_scoring",
    "sample_point",
    "scored",
]
