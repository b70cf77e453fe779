"""The one seeded bootstrap every batch statistic uses, and its one rule for undefined resamples.

A resample on which the statistic is undefined is left out and counted; when more resamples are
undefined than the interval's lower tail holds, there is no interval (its lower end would rest on
them). ``compare``'s mean delta, ``calibrate``'s statistics and the panels' alpha all follow it.
"""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from scorecore.evals import ScoreRow, panel_agreements
from scorecore.evals._stats._bootstrap import bootstrap_interval, bootstrap_mean_interval
from scorecore.scorers import PanelMember, PanelResult


def _undefined_on(idx: tuple[int, ...] | list[int], share: int) -> bool:
    """A deterministic ``share``-in-256 pick of resamples, by their indices."""
    return hashlib.sha256(repr(list(idx)).encode()).digest()[0] < share


@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=12),
       share=st.integers(0, 256), confidence=st.sampled_from([0.5, 0.8, 0.9, 0.95]),
       resamples=st.integers(1, 80), seed=st.integers(0, 2**32), stream=st.text(max_size=4))
def test_an_interval_exactly_when_the_undefined_resamples_fit_in_the_tail(
    *, values: list[float], share: int, confidence: float, resamples: int, seed: int,
    stream: str,
) -> None:
    """Undefined resamples are counted; the interval is given exactly when they are no more than
    the lower tail's share of the resamples, and then lies within the defined draws."""
    n = len(values)
    draws: list[float | None] = []

    def mean(idx: list[int]) -> float | None:
        value = None if _undefined_on(idx, share) else sum(values[i] for i in idx) / n
        draws.append(value)
        return value

    interval = bootstrap_interval(mean, n, confidence=confidence, resamples=resamples,
                                  seed=seed, stream=stream)
    defined = [d for d in draws if d is not None]
    undefined = len(draws) - len(defined)
    assert len(draws) == resamples
    assert interval.undefined == undefined
    given_interval = bool(defined) and undefined <= (1 - confidence) / 2 * resamples
    assert (interval.low is not None) == given_interval
    assert (interval.reason is None) == given_interval
    if interval.low is not None and interval.high is not None:
        assert min(defined) <= interval.low <= interval.high <= max(defined)


@given(values=st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=12),
       seed=st.integers(0, 2**32))
def test_the_mean_interval_is_reproducible_and_within_the_values(
    values: list[float], seed: int
) -> None:
    """The mean's interval is the same on every call and lies within the values, up to the
    rounding of a float sum (large values included: no sum overflows)."""
    low, high = bootstrap_mean_interval(values, resamples=40, seed=seed)
    assert (low, high) == bootstrap_mean_interval(list(values), resamples=40, seed=seed)
    rounding = 1e-12 * max(abs(v) for v in values)
    assert min(values) - rounding <= low <= high <= max(values) + rounding


def _panel_row(item: str, a: float, b: float) -> ScoreRow:
    members = tuple(PanelMember(scorer_id=m, status="scored", score=s)
                    for m, s in (("a", a), ("b", b)))
    panel = PanelResult(aggregate="mean", members=members, min_successful=2,
                        min=min(a, b), max=max(a, b), agreed=a == b)
    return ScoreRow(id=item, scorer_id="jury", run_id=f"b:{item}", batch_id="b",
                    status="scored", metadata={"panel": panel.to_json()})


def test_a_panel_alpha_undefined_in_many_resamples_has_no_interval() -> None:
    """Forty items the members agree on and one they do not: a resample missing that item has
    no variation, so alpha is undefined in about a third of the resamples, far more than the
    2.5 % tail; the panel's alpha is given, its interval is not."""
    rows = [_panel_row(str(i), 0.5, 0.5) for i in range(40)] + [_panel_row("odd", 0.0, 1.0)]
    (agreement,) = panel_agreements(rows, resamples=200)
    assert agreement.alpha_interval is not None
    assert agreement.alpha_interval_ci is None
