"""Krippendorff's alpha: the agreement of a panel's members over a batch's items.

Pure Python (no numpy), deterministic. Alpha (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability") compares the disagreement observed within units (items) with the
disagreement expected by chance among all pairable values:
``alpha = 1 - D_o / D_e``. Missing values are allowed: a unit counts with two or more values.
Its interval is the batch statistics' one bootstrap (:mod:`scorecore.evals._stats._bootstrap`)
over units.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Literal, TypeAlias

__all__: list[str] = []  # internal: the statistics of the trust fold (tests call them)

AlphaLevel: TypeAlias = Literal["interval", "nominal"]
"""The metric alpha compares values with: squared differences (``"interval"``, for scores) or
equality (``"nominal"``, for categories such as pass/fail votes)."""


def _pairable(units: Iterable[Sequence[object]]) -> list[list[object]]:
    kept = []
    for unit in units:
        values = [v for v in unit if v is not None]
        if len(values) >= 2:
            kept.append(values)
    return kept


_LARGEST_EXPONENT = 400  # values up to 2**400: their squares and sums stay far from overflow


def _scaled(units: list[list[float]]) -> list[list[float]]:
    """``units`` with every value divided by one power of two, so that none exceeds
    ``2**_LARGEST_EXPONENT``: alpha is a ratio of squared differences, unchanged by a common
    scale, and dividing by a power of two is exact (scores near the largest float, ±1e308,
    would otherwise overflow their squares)."""
    largest = max((abs(v) for unit in units for v in unit), default=0.0)
    shift = math.frexp(largest)[1] - _LARGEST_EXPONENT
    if shift <= 0:
        return units
    return [[math.ldexp(v, -shift) for v in unit] for unit in units]


def _interval(units: list[list[float]]) -> float | None:
    units = _scaled(units)
    pooled = [v for unit in units for v in unit]
    # Every value the same: alpha is 0/0, undefined. Tested on the values themselves: their
    # centre below is rounded (three times 0.812 centre a hair off 0.812) and would give 0.0.
    if min(pooled) == max(pooled):
        return None
    n = len(pooled)
    # Alpha does not change when every value moves by the same amount: centring the values
    # keeps the sums of squares below free of cancellation.
    centre = math.fsum(pooled) / n
    squares = math.fsum((v - centre) ** 2 for v in pooled)
    expected = 2 * n * squares / (n * (n - 1))  # the sum over ordered pairs (v_i - v_j)²
    if expected == 0:
        return None
    observed = math.fsum(
        2 * len(unit) * math.fsum((v - (mean := math.fsum(unit) / len(unit))) ** 2
                                  for v in unit) / (len(unit) - 1)
        for unit in units
    ) / n
    del mean
    return 1 - observed / expected


def _nominal(units: list[list[Hashable]]) -> float | None:
    totals: Counter[Hashable] = Counter(v for unit in units for v in unit)
    n = sum(totals.values())
    expected = (n * n - sum(c * c for c in totals.values())) / (n * (n - 1))
    if expected == 0:
        return None
    observed = math.fsum(
        (len(unit) ** 2 - sum(c * c for c in Counter(unit).values())) / (len(unit) - 1)
        for unit in units
    ) / n
    return 1 - observed / expected


def krippendorff_alpha(
    units: Iterable[Sequence[float | bool | str | None]], *, level: AlphaLevel = "interval"
) -> float | None:
    """Krippendorff's alpha of the values each unit (item) got from its coders (judges).

    ``None`` marks a missing value; units with fewer than two values are left out. ``1.0``
    is perfect agreement, ``0.0`` agreement at chance level, below 0 systematic disagreement.
    ``None`` when nothing is pairable or every value is the same (alpha is undefined then).

    Args:
        units: per unit, its values (numbers for ``"interval"``; any hashable category, e.g. a
            bool vote, for ``"nominal"``).
        level: ``"interval"`` (squared differences) or ``"nominal"`` (equal or not).

    >>> krippendorff_alpha([[1, 1], [2, 2], [3, 3]])
    1.0
    >>> krippendorff_alpha([[1, 2], [2, 3], [3, None], [1, 1]])
    0.5
    >>> krippendorff_alpha([[True, False], [True, True], [False, False]], level="nominal")
    0.4444444444444444
    """
    if level not in ("interval", "nominal"):
        raise ValueError(f"level must be 'interval' or 'nominal', got {level!r}")
    kept = _pairable(units)
    if not kept:
        return None
    if level == "nominal":
        return _nominal(kept)
    numbers: list[list[float]] = []
    for unit in kept:
        for value in unit:
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
                    value):
                raise ValueError(f"interval alpha needs finite numbers, got {value!r}")
        numbers.append([float(v) for v in unit])  # type: ignore[arg-type]
    return _interval(numbers)
