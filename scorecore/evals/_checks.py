"""The evals layer's checks of plain values: finite numbers, and exact sums of floats."""

from __future__ import annotations

import math
from typing import TypeGuard

from scorecore.validators import is_number

__all__: list[str] = []  # internal: used by the evals modules


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is a finite int or float (not a bool, NaN or an infinity, nor an int
    too large for a float: ``10**400`` is valid JSON).

    >>> is_finite_number(0.5), is_finite_number(10**400), is_finite_number(True)
    (True, False, False)
    """
    if not is_number(value):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


FIXED_BITS = 1074
"""Every finite float is an integer multiple of ``2**-FIXED_BITS`` (the smallest subnormal)."""


def fixed(value: float) -> int:
    """``value * 2**FIXED_BITS`` exactly, as an int: sums of these are exact in any order.

    >>> fixed(0.5) == 2**1073, fixed(-0.25) == -(2**1072)
    (True, True)
    """
    numerator, denominator = float(value).as_integer_ratio()
    # denominator is 2**k with k <= FIXED_BITS: scale to the common 2**FIXED_BITS.
    return numerator << (FIXED_BITS + 1 - denominator.bit_length())
