"""The comparison's power: the minimum detectable effect, the items a comparison needs, and
the gate firing about 4 times in 5 at the planned number of items."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.evals import ScoreRow, compare, items_needed, minimum_detectable_effect
from scorecore.evals._compare._power import pass_rate_mde
from tests.evals.compare.simulation import gate_rates, pilot_spread

finite = st.floats(-1, 1, allow_nan=False)


def rows(batch: str, scores: list[float]) -> list[ScoreRow]:
    return [ScoreRow(id=f"{batch}/{i}", scorer_id="s", run_id=f"{batch}:{i}", batch_id=batch,
                     status="scored", score=s, dataset_item_id=str(i))
            for i, s in enumerate(scores)]


def test_the_mde_is_the_normal_power_formula_over_the_plug_in_spread() -> None:
    """(z(0.975) + z(0.8)) * sd / sqrt(n): 2.8016 * 0.1 / 10 for 100 differences of ±0.1."""
    assert minimum_detectable_effect([0.1, -0.1] * 50) == pytest.approx(0.0280158, rel=1e-5)
    assert minimum_detectable_effect([0.1, -0.1] * 50, alpha=0.01, power=0.9) == \
        pytest.approx((2.5758293 + 1.2815516) * 0.01, rel=1e-6)
    assert minimum_detectable_effect([0.3] * 40) == 0.0
    assert minimum_detectable_effect([0.3]) is None


@given(st.lists(finite, min_size=2, max_size=30), st.integers(2, 9))
def test_the_mde_shrinks_with_the_square_root_of_the_items(diffs: list[float], k: int) -> None:
    """The same differences k times over have the same spread and an MDE √k times smaller."""
    one = minimum_detectable_effect(diffs)
    more = minimum_detectable_effect(diffs * k)
    assert one is not None
    assert more == pytest.approx(one / math.sqrt(k), rel=1e-9, abs=1e-12)


@given(st.floats(0.01, 0.5), st.floats(0.005, 0.3), st.floats(0, 0.05))
def test_items_needed_is_the_fewest_whose_detectable_drop_reaches_the_effect(
        sd: float, extra: float, tolerance: float) -> None:
    """At the n planned, tolerance + MDE <= effect; one item fewer, it is above."""
    effect = tolerance + extra
    n = items_needed(sd, effect, tolerance=tolerance, min_paired=1)
    margin = (2.8015852 * sd)

    def drop(k: int) -> float:
        return tolerance + margin / math.sqrt(k)

    assert drop(n) <= effect * (1 + 1e-6)
    assert n == 1 or drop(n - 1) > effect * (1 - 1e-6)


def test_items_needed_refuses_an_effect_within_the_tolerance() -> None:
    """An effect the gate ignores cannot be planned for; the message names the values."""
    with pytest.raises(ValueError, match=r"effect must be .* above the tolerance 0.02 .*0.01"):
        items_needed(0.2, 0.01, tolerance=0.02)
    with pytest.raises(ValueError, match="sd must be a finite number >= 0, got -1"):
        items_needed(-1, 0.05)
    with pytest.raises(ValueError, match="power must be in"):
        items_needed(0.2, 0.05, power=1.0)
    assert items_needed(0.0, 0.05) == 10  # compare's fewest pairs for a verdict
    assert items_needed(0.0, 0.05, min_paired=1) == 1


@given(st.floats(1e160, 1e308), st.floats(1e-300, 1e-3))
def test_items_needed_past_any_float_says_so_with_its_values(sd: float, effect: float) -> None:
    """Scores a custom scorer puts far outside [0, 1] can make the count too large for a float:
    a ValueError naming the spread and the effect (the CLI prints it), never an OverflowError."""
    with pytest.raises(ValueError, match="no finite number of items") as caught:
        items_needed(sd, effect)
    assert f"{sd!r}" in str(caught.value)
    assert f"{effect!r}" in str(caught.value)


def test_compare_reports_each_scorers_mde_and_marks_an_uninformative_pass() -> None:
    """12 noisy pairs cannot see a 0.02 change: no regression, but uninformative; 400 exact
    pairs can, and their "no regression" is informative."""
    noisy = compare(rows("a", [0.7] * 12), rows("b", [0.6, 0.8] * 6))
    (s,) = noisy.scorers
    assert s.verdict == "unchanged"
    assert s.mde == pytest.approx(2.8015852 * 0.1 / math.sqrt(12), rel=1e-6)
    assert s.uninformative
    assert noisy.uninformative == ("s",)
    assert noisy.to_json()["scorers"][0]["mde"] == s.mde
    base = [0.5 + 0.01 * ((i % 3) - 1) for i in range(400)]
    sure = compare(rows("a", base), rows("b", [x + 0.001 for x in base]))
    assert sure.scorers[0].mde is not None
    assert sure.scorers[0].mde < 0.02
    assert not sure.scorers[0].uninformative
    assert sure.uninformative == ()


def test_effect_sets_what_a_pass_must_have_been_able_to_see() -> None:
    """The same comparison is informative about a 0.5 change and not about a 0.02 one."""
    base, new = rows("a", [0.7] * 12), rows("b", [0.6, 0.8] * 6)
    assert compare(base, new, effect=0.1).uninformative == ()
    assert compare(base, new, effect=0.02).uninformative == ("s",)
    with pytest.raises(ValueError, match=r"effect must be a finite number >= 0, got -0\.1"):
        compare(base, new, effect=-0.1)
    # The same judgement of a comparison made any way: with_effect re-marks its scorers.
    again = compare(base, new, effect=0.02).with_effect(0.1)
    assert (again.uninformative, again.effect) == ((), 0.1)
    assert again.with_effect(0.02) == compare(base, new, effect=0.02)


def test_the_pass_rate_mde_has_the_floor_of_its_own_discordant_pairs() -> None:
    """No pass changes observed still leave a floor m²/(n + m²); observed changes count."""
    m2 = 2.8015852**2
    assert pass_rate_mde([0] * 100) == pytest.approx(m2 / (100 + m2), rel=1e-6)
    wide = pass_rate_mde([1, -1] * 50)
    assert wide == pytest.approx(2.8015852 * 1.0 / 10, rel=1e-6)
    assert pass_rate_mde([0]) is None


def test_a_regression_is_never_uninformative() -> None:
    """The flag qualifies a "no change" only."""
    result = compare(rows("a", [1.0] * 30), rows("b", [1.0] * 10 + [0.0] * 20))
    assert result.regressed
    assert not result.scorers[0].uninformative


def test_at_the_planned_items_the_gate_fires_about_four_times_in_five() -> None:
    """Plan from a pilot null comparison's spread, then plant a drop of the planned effect:
    the mean test fires in about 80 % of 150 simulated comparisons (binomial sd 3.3 points),
    and the gate, which also has the pass-rate test, at least as often."""
    effect, tolerance = 0.06, 0.02
    sd = pilot_spread(items=400, seed=7, clip=False)
    n = items_needed(sd, effect, tolerance=tolerance)
    gate, mean = gate_rates(runs=150, items=n, shift=effect, seed=11, tolerance=tolerance,
                            resamples=200, clip=False)
    assert 0.7 <= mean <= 0.9, (n, mean)
    assert gate >= mean
