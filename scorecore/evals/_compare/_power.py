"""The power of ``compare``'s gate: the smallest change it detects, and the items it needs.

Functions of the paired differences alone (their count and spread), so whichever way the
differences were gathered (rows in memory, a query pairing items in the database) feeds them.

Which test the figures match. The gate's mean test is a percentile bootstrap interval of the
mean paired difference at confidence ``1 - alpha'`` (``alpha' = alpha / k`` for k scorers), and
it fires when the interval's upper end is below ``-tolerance``. The percentile interval of a
mean is, to first order, ``mean ± z(1 - alpha'/2) · s / √n`` with ``s`` the paired differences'
spread taken over ``n`` (the bootstrap resamples the empirical distribution; it is no wider at
small n, unlike a t interval). So the gate fires with probability ``power`` on a true drop of

    tolerance + (z(1 - alpha'/2) + z(power)) · s / √n

and the figures below use normal quantiles and the plug-in spread, not t quantiles: a t-based
figure would describe a stricter test than the one that runs. The pass-rate test (the exact
McNemar test) is, for many pairs, the same z-test on the items' pass/fail differences
(-1, 0, 1), so the same formula over those differences gives its figure, with one floor: a
true pass-rate drop of d makes at least a share d of the pairs discordant, so the differences'
variance under it is at least ``d - d²`` however few discordant pairs the batches showed
(:func:`pass_rate_mde`). ``compare``'s
simulation (benchmarks/compare_power.py) checks that at the planned n the gate fires in about
80 % of simulated regressions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Final, TypedDict

from scorecore.evals._compare._values import DEFAULT_MIN_PAIRED
from scorecore.evals._stats._sums import mean_of
from scorecore.validators import is_int, is_number

__all__ = ["items_needed", "minimum_detectable_effect"]  # power_fields: compare's own

DEFAULT_POWER: Final = 0.8
"""The power the figures are given at unless asked otherwise."""

_NORMAL: Final = NormalDist()


def _check_rates(alpha: object, power: object) -> None:
    if not is_number(alpha) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if not is_number(power) or not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power!r}")


def _margin(alpha: float, power: float) -> float:
    """``z(1 - alpha/2) + z(power)``: the detectable change in standard errors."""
    return _NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(power)


def spread(differences: Sequence[float]) -> float:
    """The paired differences' standard deviation over ``n`` (the bootstrap's plug-in)."""
    mean = mean_of(differences)
    # Centred before squaring, and scaled by the largest, so scores near ±1e308 do not overflow.
    scale = max((abs(d - mean) for d in differences), default=0.0)
    if scale == 0 or not math.isfinite(scale):
        return 0.0 if scale == 0 else math.inf
    return scale * math.sqrt(sum(((d - mean) / scale) ** 2 for d in differences)
                             / len(differences))


def minimum_detectable_effect(
    differences: Sequence[float], *, alpha: float = 0.05, power: float = DEFAULT_POWER
) -> float | None:
    """The smallest true mean change a comparison of these paired differences detects with
    probability ``power`` at level ``alpha`` (two-sided): ``(z(1 - alpha/2) + z(power)) · s /
    √n``, ``s`` their spread over ``n``.

    ``compare``'s gate, which also ignores drops up to its tolerance, fires with that
    probability on a true drop of ``tolerance`` plus this figure. ``alpha`` is the level of
    one scorer's test: for k scorers compared at once, ``alpha / k`` (what ``compare`` uses).
    ``None`` with fewer than two differences (no spread to measure).

    Raises:
        ValueError: ``alpha`` or ``power`` outside (0, 1).

    >>> round(minimum_detectable_effect([0.1, -0.1] * 50), 4)
    0.028
    >>> minimum_detectable_effect([0.2]) is None
    True
    """
    _check_rates(alpha, power)
    if len(differences) < 2:
        return None
    return _margin(alpha, power) * spread(differences) / math.sqrt(len(differences))


def pass_rate_mde(
    changes: Sequence[int], *, alpha: float = 0.05, power: float = DEFAULT_POWER
) -> float | None:
    """The pass-rate test's minimum detectable change from the items' pass changes (+1 newly
    passing, -1 newly failing, 0 unchanged): the larger of the plug-in figure and the drop d
    solving ``d = m · √((d - d²) / n)``, i.e. ``m² / (n + m²)`` (``m`` the margin in standard
    errors): a drop of d cannot show less variance than its own discordant pairs bring.

    >>> round(pass_rate_mde([0] * 400), 4)
    0.0192
    """
    _check_rates(alpha, power)
    n = len(changes)
    if n < 2:
        return None
    margin = _margin(alpha, power)
    floor = margin**2 / (n + margin**2)
    return max(margin * spread([float(c) for c in changes]) / math.sqrt(n), floor)


class PowerFields(TypedDict):
    """The power figures of a ``ScorerComparison`` (its fields of the same names)."""

    mde: float | None
    pass_rate_mde: float | None
    spread: float | None


def power_fields(
    deltas: Sequence[float], base_pass: Sequence[bool], new_pass: Sequence[bool], *,
    alpha: float,
) -> PowerFields:
    """A scorer comparison's power figures from its paired score differences and its items'
    pass/fail in each batch (one scorer's level ``alpha``): ``mde``, ``pass_rate_mde`` and
    ``spread``, the ``ScorerComparison`` fields."""
    return {
        "mde": minimum_detectable_effect(deltas, alpha=alpha),
        "pass_rate_mde": pass_rate_mde(
            [int(n) - int(b) for b, n in zip(base_pass, new_pass, strict=True)], alpha=alpha),
        "spread": spread(deltas) if len(deltas) >= 2 else None,
    }


def items_needed(
    sd: float, effect: float, *, alpha: float = 0.05, power: float = DEFAULT_POWER,
    tolerance: float = 0.0, min_paired: int = DEFAULT_MIN_PAIRED,
) -> int:
    """How many paired items ``compare``'s gate needs to catch a true drop of ``effect`` with
    probability ``power``: ``⌈((z(1 - alpha/2) + z(power)) · sd / (effect - tolerance))²⌉``,
    at least ``min_paired`` (``compare``'s fewest pairs for a verdict, 10 by default).

    ``sd`` is the spread of the paired differences the comparison will see (a baseline
    comparison's, or an assumption); ``alpha`` one scorer's level, as in
    :func:`minimum_detectable_effect`; ``tolerance`` the gate's (drops up to it are ignored, so
    only the part of ``effect`` beyond it can be detected).

    Raises:
        ValueError: ``effect`` not beyond ``tolerance``, a negative or infinite ``sd``,
            ``alpha``/``power`` outside (0, 1), or a count past the largest float (an ``sd``
            huge against ``effect``).

    >>> items_needed(0.2, 0.05)
    126
    >>> items_needed(0.2, 0.05, tolerance=0.02)
    349
    """
    _check_rates(alpha, power)
    if not is_number(sd) or not 0 <= sd < math.inf:
        raise ValueError(f"sd must be a finite number >= 0, got {sd!r}")
    if not is_number(tolerance) or not 0 <= tolerance < math.inf:
        raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    if not is_number(effect) or not tolerance < effect < math.inf:
        raise ValueError(f"effect must be a finite number above the tolerance {tolerance:g} "
                         f"(drops up to the tolerance are ignored), got {effect!r}")
    if not is_int(min_paired) or min_paired < 1:
        raise ValueError(f"min_paired must be an int >= 1, got {min_paired!r}")
    ratio = _margin(alpha, power) * sd / (effect - tolerance)
    # A product, not ``** 2``: a float power past the largest float raises OverflowError, a
    # product gives inf, which is refused below with the values that made it.
    squared = ratio * ratio
    if squared == math.inf:
        raise ValueError(f"no finite number of items detects an effect of {effect!r} "
                         f"against a spread (sd) of {sd!r}")
    return max(math.ceil(squared), min_paired)
