"""Mastra's rounding: two decimals the JavaScript way (ties toward +∞)."""

from __future__ import annotations

import math


def js_round(value: float) -> float:
    """``Math.round``: ties go toward +∞ (Python's ``round`` sends them to even).

    >>> js_round(2.5), js_round(-2.5), round(2.5)
    (3.0, -2.0, 2)
    """
    if not math.isfinite(value):
        return value
    floor = math.floor(value)
    return float(floor + 1 if value - floor >= 0.5 else floor)


def r2(value: float) -> float:
    """Mastra's ``roundToTwoDecimals``: ``Math.round((x + ε) · 100) / 100``, ε = 2⁻⁵².

    >>> r2(0.125), r2(0.575), round(0.125, 2)
    (0.13, 0.58, 0.12)
    """
    return js_round((value + 2.0**-52) * 100) / 100


def r2_plain(value: float) -> float:
    """Two decimals without the epsilon (the unified trajectory scorer's rounding).

    >>> r2_plain(0.285), r2(0.285)
    (0.28, 0.29)
    """
    return js_round(value * 100) / 100


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    """``value`` limited to ``[low, high]``."""
    return min(high, max(low, value))


def at_scale(fraction: float, scale: float) -> float:
    """``r2(fraction · scale)``, never above ``scale`` (rounding up at a scale with more than
    two decimals would pass it).

    >>> at_scale(1.0, 0.375), r2(1.0 * 0.375)
    (0.375, 0.38)
    """
    return min(scale, r2(fraction * scale))
