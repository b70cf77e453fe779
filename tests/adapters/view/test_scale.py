"""What a digit key means for a scorer: read from the scores it gave in the batch."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scorecore_adapters.view import Scale, scale_of


def test_the_three_scales() -> None:
    """0/1 only: pass/fail; a few repeated values: those verdicts; else a continuous range
    ([0, 1] when the scores lie within it)."""
    assert scale_of([1.0, 0.0, 1.0]).digits() == {"1": True, "0": False}
    assert scale_of([]) == Scale(kind="pass/fail")
    assert scale_of([2.0, 4.0, 2.0, 4.0, 3.0, 3.0]) == Scale(kind="verdicts",
                                                              values=(2.0, 3.0, 4.0))
    # a few values seen once each are a small sample of a continuous scorer, not verdicts
    assert scale_of([0.1, 0.7, 0.35]) == Scale(kind="continuous", values=(0.0, 1.0))
    wide = scale_of([float(v) for v in range(1, 40)])
    assert wide == Scale(kind="continuous", values=(1.0, 39.0))
    assert (wide.digits()["0"], wide.digits()["9"]) == (1.0, 39.0)


@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=40))
def test_every_digit_gives_a_value_within_the_scores_range(scores: list[float]) -> None:
    """A digit never labels outside the scale: pass/fail gives booleans; otherwise every value
    lies between the lowest and highest score (or within [0, 1])."""
    digits = scale_of(scores).digits()
    assert set(digits) <= set("0123456789")
    values = list(digits.values())
    if all(isinstance(v, bool) for v in values):
        return
    low, high = min(*scores, 0.0), max(*scores, 1.0)
    assert all(low - 1e-6 <= v <= high + 1e-6 for v in values)
    assert values == sorted(values)
