"""Agreement statistics between a scorer and human labels, in pure Python (no numpy).

Cohen's κ (unweighted or quadratic-weighted) from a contingency table in exact integers,
Spearman's ρ (Pearson's r of average ranks) and Kendall's τ-b (ties handled, O(n log n)).
Each returns ``None`` where the statistic is undefined (a constant side, no items), never
NaN. tests/evals/test_calibrate_stats.py checks them against textbook values and against
scikit-learn and scipy.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction


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
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        rank = (start + end) / 2 + 1
        for position in range(start, end + 1):
            ranks[order[position]] = rank
        start = end + 1
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r; ``None`` for fewer than two pairs or a constant side."""
    n = len(x)
    if n < 2:
        return None
    mean_x = math.fsum(x) / n
    mean_y = math.fsum(y) / n
    dx = [v - mean_x for v in x]
    dy = [v - mean_y for v in y]
    sxx = math.fsum(d * d for d in dx)
    syy = math.fsum(d * d for d in dy)
    if sxx == 0 or syy == 0:
        return None
    r = math.fsum(a * b for a, b in zip(dx, dy, strict=True)) / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ: Pearson's r of the average ranks; ``None`` where undefined."""
    if len(x) < 2:
        return None
    return pearson(average_ranks(x), average_ranks(y))


def _tied_pairs(values: Sequence[float]) -> int:
    return sum(c * (c - 1) // 2 for c in Counter(values).values())


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b, ``(C - D) / sqrt((n0 - Tx) (n0 - Ty))``; ``None`` where undefined.

    ``C - D`` is counted in one sweep over ``x`` (ties in ``x`` are neither concordant nor
    discordant), each item compared by bisection with the ``y`` of the items of smaller ``x``.
    """
    n = len(x)
    if n < 2:
        return None
    order = sorted(range(n), key=lambda i: (x[i], y[i]))
    seen: list[float] = []  # sorted y of the items with a smaller x
    difference = 0  # concordant minus discordant pairs
    start = 0
    while start < n:
        end = start
        while end < n and x[order[end]] == x[order[start]]:
            end += 1
        group = order[start:end]
        for i in group:
            below = bisect_left(seen, y[i])
            above = len(seen) - bisect_right(seen, y[i])
            difference += below - above
        for i in group:
            insort(seen, y[i])
        start = end
    pairs = n * (n - 1) // 2
    denominator = (pairs - _tied_pairs(x)) * (pairs - _tied_pairs(y))
    if denominator == 0:
        return None
    return max(-1.0, min(1.0, difference / math.sqrt(denominator)))
