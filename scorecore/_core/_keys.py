"""Mastra's keys: camelCase names, and durations given in milliseconds (``durationMs``)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs

from scorecore._core._reprs import short_repr
from scorecore.validators import is_number

__all__: list[str] = []  # internal: used by the converter, the rows and the trajectory values


def camel(name: str) -> str:
    """``preprocess_step_result`` → ``preprocessStepResult``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


MILLISECONDS = "scorecore.milliseconds"
"""attrs field metadata on a field in seconds: the key Mastra's JSON gives it under, in
milliseconds (``TrajectoryStep.duration``: ``"durationMs"``). Structuring reads that key too."""


def millisecond_keys(cls: type) -> dict[str, str]:
    """Mastra's millisecond keys of ``cls`` → our camelCase keys in seconds.

    >>> from scorecore.agent import Trajectory
    >>> millisecond_keys(Trajectory)
    {'totalDurationMs': 'totalDuration'}
    """
    return {f.metadata[MILLISECONDS]: camel(f.name) for f in attrs.fields(cls)
            if MILLISECONDS in f.metadata}


def read_milliseconds(
    value: Mapping[str, object], keys: Mapping[str, str]
) -> Mapping[str, object]:
    """``value`` with each millisecond key of ``keys`` given as seconds under its own key.

    Raises:
        TypeError: a millisecond value is not a finite number ≥ 0, or both keys are given.

    >>> read_milliseconds({"name": "a", "durationMs": 1250}, {"durationMs": "duration"})
    {'name': 'a', 'duration': 1.25}
    """
    if not any(key in value for key in keys):
        return value
    out = dict(value)
    for ms_key, key in keys.items():
        if ms_key not in out:
            continue
        if key in out:
            raise TypeError(f"expected {ms_key} (milliseconds) or {key} (seconds), not both")
        ms = out.pop(ms_key)
        if ms is not None:
            if not is_number(ms) or not math.isfinite(ms) or ms < 0:
                raise TypeError(f"expected {ms_key} to be a finite number of milliseconds "
                                f"≥ 0, got {short_repr(ms)}")
            ms = ms / 1000
        out[key] = ms
    return out
