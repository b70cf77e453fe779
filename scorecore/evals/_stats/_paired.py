"""Agreement statistics between a scorer and human labels, in pure Python (no numpy).

Cohen's κ (unweighted or quadratic-weighted) from a contingency table in exact integers,
Spearman's ρ (Pearson's r of average ranks) and Kendall's τ-b (ties handled, O(n log n)).
Each returns ``None`` where the statistic is undefined (a constant side, no items), never
NaN. tests/evals/stats/test_paired.py checks them against textbook values and against
scikit-learn and scipy.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from collections import Counter
from collections.abc import Iterable, Sequence
from fractions import Fraction
from operator import mul
from typing import final


def kappa(counts: Sequence[Sequence[int]], *, quadratic: bool = False) -> Fraction | None:
    """Cohen's κ of a k×k table (``counts[label][judge]``), exactly; ``None`` when undefined.

    ``κ = 1 - Σ w·O / Σ w·E`` with ``E`` the product of the margins over ``n`` and the
    disagreement weights ``w = 1`` off the diagonal (Cohen 1960) or ``(i - j)²`` (quadratic,
    Cohen 1968; the same ratio as with ``(i - j)² / (k - 1)²``). Undefined when chance
    agreement is certain (``Σ w·E = 0``: both raters used one and the same category).
    """
    k = len(counts)
    rows = [sum(row) for row in counts]
    cols = [sum(counts[i][j] for i in range(k)) for j in range(k)]
    n = sum(rows)

    def weight(i: int, j: int) -> int:
        return (i - j) ** 2 if quadratic else int(i != j)

    observed = sum(weight(i, j) * counts[i][j] for i in range(k) for j in range(k))
    expected = sum(weight(i, j) * rows[i] * cols[j] for i in range(k) for j in range(k))
    if expected == 0:
        return None
    return 1 - Fraction(n * observed, expected)


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span (scipy's ``rankdata``)."""
    return RankedPairs(values, values).ranks_x(range(len(values)))


def _clip(r: float) -> float:
    return max(-1.0, min(1.0, r))


def _dense(values: Sequence[float]) -> tuple[list[int], int]:
    """Each value's position among the distinct values (0-based), and how many there are."""
    distinct = sorted(set(values))
    position = {v: d for d, v in enumerate(distinct)}
    return [position[v] for v in values], len(distinct)


def _tied_pairs(values: Iterable[int]) -> int:
    return sum(c * (c - 1) // 2 for c in Counter(values).values())


@final
class RankedPairs:
    """Pairs ``(x, y)`` ranked once, for ρ and τ-b of any subsample of them (a resample).

    A subsample's ranks come from counting its items per distinct value, so resampling sorts
    nothing but the subsample's (x, y) keys, in C.
    """

    __slots__ = ("_dx", "_dy", "_keys", "_mx", "_my")

    def __init__(self, x: Sequence[float], y: Sequence[float]) -> None:
        self._dx, self._mx = _dense(x)
        self._dy, self._my = _dense(y)
        self._keys = [a * self._my + b for a, b in zip(self._dx, self._dy, strict=True)]

    @staticmethod
    def _ranks(dense: Sequence[int], idx: Sequence[int]) -> list[float]:
        counts = Counter(map(dense.__getitem__, idx))
        rank_of: dict[int, float] = {}
        before = 0
        for value in sorted(counts):
            count = counts[value]
            rank_of[value] = before + (count + 1) / 2
            before += count
        return [rank_of[dense[i]] for i in idx]

    def ranks_x(self, idx: Sequence[int]) -> list[float]:
        """The average ranks of the subsample's ``x``."""
        return self._ranks(self._dx, idx)

    def spearman(self, idx: Sequence[int]) -> float | None:
        """Spearman's ρ of the subsample ``idx``: Pearson's r of its average ranks."""
        n = len(idx)
        if n < 2:
            return None
        rx = self._ranks(self._dx, idx)
        ry = self._ranks(self._dy, idx)
        # Ranks are multiples of 1/2 and their mean is (n + 1) / 2: these sums are exact.
        centre = n * ((n + 1) / 2) ** 2
        sxx = math.fsum(map(mul, rx, rx)) - centre
        syy = math.fsum(map(mul, ry, ry)) - centre
        if sxx == 0 or syy == 0:
            return None
        return _clip((math.fsum(map(mul, rx, ry)) - centre) / math.sqrt(sxx * syy))

    def kendall(self, idx: Sequence[int]) -> float | None:
        """Kendall's τ-b of the subsample ``idx``, ``(C - D) / sqrt((n0 - Tx) (n0 - Ty))``.

        ``C - D`` is counted in one sweep over ``x`` (ties in ``x`` are neither concordant
        nor discordant), each item compared by bisection with the ``y`` of the items of
        smaller ``x``.
        """
        n = len(idx)
        if n < 2:
            return None
        order = sorted(idx, key=self._keys.__getitem__)
        xs = [self._dx[i] for i in order]
        ys = [self._dy[i] for i in order]
        seen: list[int] = []  # sorted y of the items with a smaller x
        difference = 0  # concordant minus discordant pairs
        start = 0
        for end in range(1, n + 1):
            if end < n and xs[end] == xs[start]:
                continue
            group = ys[start:end]
            total = len(seen)
            for y in group:  # below minus above: bisect_left - (total - bisect_right)
                difference += bisect_left(seen, y) + bisect_right(seen, y) - total
            for y in group:
                insort(seen, y)
            start = end
        pairs = n * (n - 1) // 2
        denominator = (pairs - _tied_pairs(xs)) * (pairs - _tied_pairs(ys))
        if denominator == 0:
            return None
        return _clip(difference / math.sqrt(denominator))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ: Pearson's r of the average ranks; ``None`` where undefined."""
    return RankedPairs(x, y).spearman(range(len(x)))


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b (ties handled); ``None`` where undefined."""
    return RankedPairs(x, y).kendall(range(len(x)))
