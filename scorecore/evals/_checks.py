"""The evals layer's checks of plain values (finite numbers, exact sums of floats) and its
per-scorer look-up."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Protocol, TypeGuard, TypeVar

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


class _PerScorer(Protocol):
    @property
    def scorer_id(self) -> str: ...


_Part = TypeVar("_Part", bound=_PerScorer)


def by_scorer_id(parts: Iterable[_Part], scorer_id: str) -> _Part:
    """The first of ``parts`` (a summary's per-scorer values) that belongs to ``scorer_id``.

    Raises:
        KeyError: no part has that scorer id.
    """
    for part in parts:
        if part.scorer_id == scorer_id:
            return part
    raise KeyError(scorer_id)
