"""Scoring production traffic: live scoring with sampling, and the registry of named scorers.
"""

from scorecore.live._live import (
    LiveCall,
    LiveScorer,
    LiveScoringError,
    LiveScoringErrorKind,
    LiveScoringScope,
    LiveStats,
    NoSampling,
    OnError,
    RatioSampling,
    Sampling,
    live_scoring,
    sample_point,
    scored,
)
from scorecore.live._registry import Registry, ScorerNotFoundError

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
