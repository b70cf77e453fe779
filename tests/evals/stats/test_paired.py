"""The agreement statistics behind ``calibrate``: textbook values, then scikit-learn and scipy.

scikit-learn and scipy are test dependencies only (the dev extra): the core computes the same
numbers without numpy, and these tests hold it to theirs to 1e-9 on randomized data.
"""

from __future__ import annotations

import math
import operator
import warnings
from fractions import Fraction
from functools import reduce

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore.evals._stats._bootstrap import (
    bootstrap_interval,
    bootstrap_mean_interval,
    percentile_interval,
)
from scorecore.evals._stats._paired import (
    average_ranks,
    kappa,
    kendall_tau_b,
    spearman,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics")
scipy_stats = pytest.importorskip("scipy.stats")


def table(labels: list[int], judged: list[int], k: int) -> list[list[int]]:
    counts = [[0] * k for _ in range(k)]
    for a, b in zip(labels, judged, strict=True):
        counts[a][b] += 1
    return counts


def test_cohen_kappa_of_the_grant_readers_example() -> None:
    """The worked example of Wikipedia's "Cohen's kappa" article (50 grant proposals, two
    readers: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no): p_o = 0.7, p_e = 0.5, κ = 0.4."""
    assert kappa([[20, 5], [10, 15]]) == Fraction(2, 5)


def test_quadratic_kappa_of_maples_essay_examples() -> None:
    """Maple's EssayTools ``QuadraticWeightedKappa`` examples (grades 1..10, the range taken
    from the data): [9,7,8,7,6,8,3,5,10] against [8,8,6,6,7,6,1,4,8] is 0.758620689655172
    (= 22/29) and against [3,5,6,6,7,6,1,4,8] 0.438095238095238 (= 46/105)."""
    first = [9, 7, 8, 7, 6, 8, 3, 5, 10]
    agreeing = [8, 8, 6, 6, 7, 6, 1, 4, 8]
    less = [3, 5, 6, 6, 7, 6, 1, 4, 8]
    grades = [[g - 1 for g in grades] for grades in (first, agreeing, less)]
    assert kappa(table(grades[0], grades[1], 10), quadratic=True) == Fraction(22, 29)
    assert kappa(table(grades[0], grades[2], 10), quadratic=True) == Fraction(46, 105)


def test_spearman_and_kendall_of_the_iq_and_television_example() -> None:
    """Wikipedia's "Spearman's rank correlation coefficient" example: IQ against hours of
    television for ten people, ρ = -29/165; of its 45 pairs 20 are concordant and 25
    discordant, so τ = -5/45."""
    iq = [106.0, 100, 86, 101, 99, 103, 97, 113, 112, 110]
    tv = [7.0, 27, 2, 50, 28, 29, 20, 12, 6, 17]
    assert spearman(iq, tv) == pytest.approx(-29 / 165, abs=1e-15)
    assert kendall_tau_b(iq, tv) == pytest.approx(-1 / 9, abs=1e-15)


def test_ties_use_average_ranks_and_tau_b() -> None:
    """Ties get the mean of the ranks they span; τ-b divides by the untied pair counts:
    x = [1,2,2,3], y = [1,2,3,3] has C - D = 4 and 5 untied pairs on each side, τ-b = 0.8."""
    assert average_ranks([10.0, 20, 20, 30]) == [1.0, 2.5, 2.5, 4.0]
    assert kendall_tau_b([1.0, 2, 2, 3], [1.0, 2, 3, 3]) == pytest.approx(0.8, abs=1e-15)


@pytest.mark.parametrize(
    ("x", "y"), [([], []), ([1.0], [2.0]), ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]),
                 ([1.0, 2.0, 3.0], [4.0, 4.0, 4.0])],
)
def test_rank_correlations_are_none_where_undefined(x: list[float], y: list[float]) -> None:
    """Fewer than two pairs or a constant side: no correlation (None), never NaN."""
    assert spearman(x, y) is None
    assert kendall_tau_b(x, y) is None


def test_kappa_is_none_when_chance_agreement_is_certain() -> None:
    """Both raters using one and the same category: κ is 0/0, reported as None."""
    assert kappa([[0, 0], [0, 7]]) is None
    assert kappa([[0, 0, 0], [0, 3, 0], [0, 0, 0]], quadratic=True) is None
    assert kappa([[0, 0], [0, 0]]) is None


binary_pairs = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1,
                        max_size=60)


@given(binary_pairs)
def test_cohen_kappa_equals_scikit_learn(pairs: list[tuple[int, int]]) -> None:
    """κ of random binary ratings equals sklearn's cohen_kappa_score to 1e-9 where it is
    defined, and is None exactly where sklearn gives NaN."""
    labels, judged = [a for a, _ in pairs], [b for _, b in pairs]
    ours = kappa(table(labels, judged, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns on the 0/0 case
        theirs = sklearn_metrics.cohen_kappa_score(labels, judged, labels=[0, 1])
    if ours is None:
        assert math.isnan(theirs)
    else:
        assert float(ours) == pytest.approx(theirs, abs=1e-9)


@given(st.integers(2, 7).flatmap(lambda k: st.tuples(
    st.just(k), st.lists(st.tuples(st.integers(0, k - 1), st.integers(0, k - 1)),
                         min_size=1, max_size=80))))
def test_quadratic_kappa_equals_scikit_learn(case: tuple[int, list[tuple[int, int]]]) -> None:
    """Quadratic-weighted κ equals sklearn's cohen_kappa_score(weights="quadratic") to 1e-9;
    the unweighted κ of k categories equals its default."""
    k, pairs = case
    labels, judged = [a for a, _ in pairs], [b for _, b in pairs]
    counts = table(labels, judged, k)
    for quadratic, weights in ((True, "quadratic"), (False, None)):
        ours = kappa(counts, quadratic=quadratic)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = sklearn_metrics.cohen_kappa_score(labels, judged, labels=list(range(k)),
                                                       weights=weights)
        if ours is None:
            assert math.isnan(theirs)
        else:
            assert float(ours) == pytest.approx(theirs, abs=1e-9)


# Few distinct values, so ties are common; floats of several magnitudes.
ranked = st.lists(
    st.tuples(st.sampled_from([-3.5, 0.0, 0.25, 1.0, 2.0, 7.0, 1e6]),
              st.floats(-1e3, 1e3, allow_nan=False) | st.sampled_from([0.0, 1.0, 2.0])),
    min_size=2, max_size=60,
)


@settings(max_examples=200)
@given(ranked)
def test_spearman_and_kendall_equal_scipy(pairs: list[tuple[float, float]]) -> None:
    """ρ and τ-b of random data with ties equal scipy's spearmanr and kendalltau (τ-b) to
    1e-9; where scipy gives NaN (a constant side) ours is None."""
    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on a constant input
        rho = scipy_stats.spearmanr(x, y).statistic
        tau = scipy_stats.kendalltau(x, y, variant="b").statistic
    for ours, theirs in ((spearman(x, y), rho), (kendall_tau_b(x, y), tau)):
        if ours is None:
            assert math.isnan(theirs)
        else:
            assert ours == pytest.approx(float(theirs), abs=1e-9)


@given(st.lists(st.floats(-1, 1), min_size=2, max_size=30).filter(lambda v: min(v) < max(v)),
       st.integers(0, 2**32), st.text(max_size=5))
def test_bootstrap_of_the_mean_is_bootstrap_mean_interval(
    values: list[float], seed: int, stream: str
) -> None:
    """The general bootstrap draws what bootstrap_mean_interval draws: with the mean (summed
    left to right) as the statistic it gives the same interval, bit for bit."""
    n = len(values)
    interval = bootstrap_interval(lambda idx: reduce(operator.add, [values[i] for i in idx]) / n,
                                  n,
                                  resamples=60, seed=seed, stream=stream)
    assert (interval.low, interval.high) == bootstrap_mean_interval(
        values, resamples=60, seed=seed, stream=stream)


def test_undefined_resamples_beyond_the_tail_give_no_interval() -> None:
    """A statistic undefined in more resamples than the interval's tail holds has no interval
    (its lower end would rest on them); a few undefined resamples are left out and counted."""
    few = percentile_interval([None, *[float(i) for i in range(99)]], confidence=0.95)
    assert (few.low, few.high) == (pytest.approx(2.45), pytest.approx(95.55))
    assert (few.undefined, few.reason) == (1, None)
    many = percentile_interval([None] * 3 + [1.0] * 97, confidence=0.95, what="κ")
    assert (many.low, many.high, many.undefined) == (None, None, 3)
    assert many.reason == ("κ is undefined in 3 of 100 resamples (more than the interval's "
                           "2.5 % tail): too few items")
