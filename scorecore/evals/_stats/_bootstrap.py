"""The one seeded percentile bootstrap of the batch statistics (``compare``, ``calibrate``, trust).

Resamples are index lists drawn from a SHAKE-256 stream keyed by ``(seed, stream, resample
index)``: the same data, seed and stream give the same resamples on every machine and Python
version, and a statistic of a resample is whatever the caller computes from its indices.
:func:`bootstrap_mean_interval` is the mean's case (the same draws).

One rule for a statistic undefined on a resample (κ of one class only, alpha without
variation): the resample is left out and counted, and when more resamples are undefined than the
interval's lower tail holds there is no interval, since its lower end would rest on them.
"""

from __future__ import annotations

import hashlib
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from functools import reduce
from typing import Protocol, final

import attrs

from scorecore.evals._stats._sums import sum_scale
from scorecore.validators import is_int, is_number


def bootstrap_key(seed: int, stream: str) -> bytes:
    """The key of the random stream for ``seed`` and ``stream`` (``compare`` streams are
    scorer ids; other statistics name theirs, so their draws are independent)."""
    return f"scorecore-bootstrap/1:{seed}:{stream}:".encode("utf-8", "surrogatepass")


def resample_indices(n: int, *, resamples: int, key: bytes) -> Iterator[list[int]]:
    """``resamples`` lists of ``n`` indices into ``range(n)``, drawn with replacement."""
    for b in range(resamples):
        stream = hashlib.shake_256(key + b.to_bytes(8, "big")).digest(4 * n)
        # 32-bit draws mapped to indices by multiply-shift: bias below n / 2**32.
        yield [(x * n) >> 32 for x in memoryview(stream).cast("I")]


class MeanResampler(Protocol):
    """A faster way to the bootstrap's resample means, giving the very same floats.

    :func:`~scorecore.evals.compare` takes one as ``resampler=``. Called as
    ``resampler(values, resamples=B, key=K)``, it returns the mean of each of the ``B``
    resamples the seeded bootstrap draws for ``K`` (SHAKE-256 draws mapped to indices by a
    32-bit multiply-shift), each resample's values summed left to right and divided by
    ``len(values)``. An implementation that keeps both (numpy's, which ``scorecore compare``
    uses where numpy is installed) gives the same interval as the core's pure-Python means,
    which run when none is given.

    >>> import inspect
    >>> from scorecore.evals import MeanResampler, compare
    >>> inspect.signature(compare).parameters["resampler"].default is None
    True
    """

    def __call__(self, values: Sequence[float], *, resamples: int,
                 key: bytes) -> Sequence[float]: ...


def resample_means(values: Sequence[float], *, resamples: int, key: bytes) -> list[float]:
    """The mean of each resample of ``values`` (sums left to right, in the draws' order)."""
    n = len(values)
    return [reduce(operator.add, [values[i] for i in idx]) / n
            for idx in resample_indices(n, resamples=resamples, key=key)]


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values by linear interpolation (numpy's default method)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def check_settings(confidence: object, resamples: object) -> None:
    """Refuse a confidence outside (0, 1) or fewer than one resample (naming the value)."""
    if not is_number(confidence) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if not is_int(resamples) or resamples < 1:
        raise ValueError(f"resamples must be an int >= 1, got {resamples!r}")


@final
@attrs.frozen(kw_only=True)
class Interval:
    """A percentile interval, or why there is none (``low``/``high`` are ``None`` then).

    ``undefined`` counts the resamples on which the statistic was undefined (a resample of
    one class only has no κ): they are left out, and when they are more than the interval's
    lower tail holds the interval is not given, since its lower end would rest on them.
    """

    low: float | None
    high: float | None
    undefined: int = 0
    reason: str | None = None


def percentile_interval(
    values: Sequence[float | None], *, confidence: float, what: str = "the statistic"
) -> Interval:
    """The percentile interval of bootstrap ``values`` (``None`` for an undefined resample)."""
    defined = sorted(v for v in values if v is not None)
    undefined = len(values) - len(defined)
    tail = (1 - confidence) / 2
    if not defined or undefined > tail * len(values):
        return Interval(
            low=None, high=None, undefined=undefined,
            reason=(f"{what} is undefined in {undefined} of {len(values)} resamples "
                    f"(more than the interval's {100 * tail:g} % tail): too few items"),
        )
    return Interval(low=quantile(defined, tail), high=quantile(defined, 1 - tail),
                    undefined=undefined)


def bootstrap_interval(
    statistic: Callable[[Sequence[int]], float | None],
    n: int,
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    stream: str = "",
    what: str = "the statistic",
) -> Interval:
    """The percentile bootstrap interval of ``statistic`` over ``n`` items, seeded.

    ``statistic`` gets one resample's item indices and returns its value, or ``None`` where
    it is undefined: undefined resamples are left out and counted (``undefined``), and past
    the interval's lower tail there is no interval (``low`` and ``high`` are ``None`` and
    ``reason`` says why). With the mean as ``statistic``, the draws are those of
    :func:`bootstrap_mean_interval` for the same seed and stream.

    >>> values = [0.0, 1.0, 0.5, 0.25]
    >>> interval = bootstrap_interval(lambda idx: sum(values[i] for i in idx) / len(idx), 4,
    ...                               resamples=200, seed=1)
    >>> interval.low, interval.high
    (0.125, 0.75)
    """
    check_settings(confidence, resamples)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n!r}")
    key = bootstrap_key(seed, stream)
    draws = [statistic(idx) for idx in resample_indices(n, resamples=resamples, key=key)]
    return percentile_interval(draws, confidence=confidence, what=what)


def bootstrap_mean_interval(
    values: Sequence[float], *, confidence: float = 0.95, resamples: int = 1000,
    seed: int = 0, stream: str = "", resampler: MeanResampler | None = None,
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``values``, seeded and reproducible.

    ``stream`` names an independent random stream for the same ``seed`` (``compare`` uses the
    scorer id). The same values, seed and stream give the same interval everywhere. The mean is
    defined on every resample, so there is always an interval. ``resampler`` computes the
    resamples' means faster, with the same result (default: :func:`resample_means`).

    >>> bootstrap_mean_interval([0.0, 1.0, 0.5, 0.25], resamples=200, seed=1)
    (0.125, 0.75)
    >>> bootstrap_mean_interval([0.3, 0.3])
    (0.3, 0.3)
    """
    if not values:
        raise ValueError("values must not be empty")
    check_settings(confidence, resamples)
    if min(values) == max(values):
        return (values[0], values[0])
    bits = sum_scale(values)
    scaled = [math.ldexp(v, -bits) for v in values] if bits else values
    means = (resampler or resample_means)(scaled, resamples=resamples,
                                          key=bootstrap_key(seed, stream))
    interval = percentile_interval(means, confidence=confidence)
    low, high = interval.low, interval.high
    if low is None or high is None:  # pragma: no cover - a mean is never undefined
        raise AssertionError(interval.reason)
    return (math.ldexp(low, bits), math.ldexp(high, bits)) if bits else (low, high)
