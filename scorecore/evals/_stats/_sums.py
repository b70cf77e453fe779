"""Sums and means of floats that never overflow: scores near the largest float included."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

__all__: list[str] = []  # internal: used by the bootstrap and compare


# A sum of scores near the largest float overflows (1e308 + 1e308), though their mean does
# not. Such values are divided by a power of two (exactly) until no sum of all of them can
# overflow, then the result is multiplied back: ordinary scores are left as they are.
_SUM_BITS: Final = 1000


def sum_scale(values: Sequence[float]) -> int:
    """The power of two to divide ``values`` by so that no sum of them overflows (usually 0)."""
    largest = max(abs(v) for v in values) if values else 0.0
    if largest == 0.0:
        return 0
    return max(0, math.frexp(largest)[1] + len(values).bit_length() - _SUM_BITS)


def mean_of(values: Sequence[float]) -> float:
    """The mean of finite ``values``, correctly rounded, even where their sum would overflow."""
    bits = sum_scale(values)
    if not bits:
        return math.fsum(values) / len(values)
    return math.ldexp(math.fsum([math.ldexp(v, -bits) for v in values]) / len(values), bits)
