"""``scorecore.evals.compare``: pairing, bootstrap interval, exact McNemar test, the gate."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from random import Random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore.evals import ScoreRow, Threshold, compare
from scorecore.evals._compare._compute import mcnemar_p_value
from scorecore.evals._stats._bootstrap import bootstrap_mean_interval
from scorecore.evals.store import row_item_id
from tests.evals.compare.simulation import gate_rate


def row(batch: str, item: str, score: float | None, *, scorer: str = "s",
        status: str = "scored", fingerprint: str | None = None) -> ScoreRow:
    return ScoreRow(
        id=f"{batch}/{item}/{scorer}", scorer_id=scorer, run_id=f"{batch}:{item}",
        batch_id=batch, status=status, score=score if status == "scored" else None,  # type: ignore[arg-type]
        dataset_item_id=item,
        scorer={"id": scorer, **({"fingerprint": fingerprint} if fingerprint else {})},
    )


def rows(batch: str, scores: list[float], **kw: object) -> list[ScoreRow]:
    return [row(batch, str(i), s, **kw) for i, s in enumerate(scores)]  # type: ignore[arg-type]


def exact_p(b: int, c: int) -> Fraction:
    """The McNemar p-value from its definition, in exact fractions."""
    n = b + c
    if n == 0:
        return Fraction(1)
    tail = sum(Fraction(math.comb(n, i), 2**n) for i in range(min(b, c) + 1))
    return min(Fraction(1), Fraction(2) * tail)


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_equals_its_definition(b: int, c: int) -> None:
    """The p-value is 2 * P[Binomial(b + c, 1/2) <= min(b, c)], capped at 1, symmetric."""
    assert mcnemar_p_value(b, c) == pytest.approx(float(exact_p(b, c)), rel=1e-12)
    assert mcnemar_p_value(b, c) == mcnemar_p_value(c, b)


def test_mcnemar_known_values_and_large_counts() -> None:
    """Published values (b=1, c=9: 0.0215; b=c: 1) and no underflow at 20,000 pairs."""
    assert mcnemar_p_value(1, 9) == pytest.approx(0.021484375)
    assert mcnemar_p_value(7, 7) == 1.0
    assert mcnemar_p_value(0, 10) == pytest.approx(2 / 1024)
    assert 0.0 < mcnemar_p_value(9_800, 10_200) < 0.01
    with pytest.raises(ValueError, match="discordant counts must be >= 0, got -1 and 2"):
        mcnemar_p_value(-1, 2)


def test_bootstrap_matches_the_exact_bootstrap_distribution() -> None:
    """For 4 values, the 5 % and 95 % quantiles match the 256 equally likely resamples."""
    values = [0.0, 0.1, 0.5, 1.0]
    means = sorted(sum(c) / 4 for c in itertools.product(values, repeat=4))

    def exact_quantile(q: float) -> float:
        position = q * (len(means) - 1)
        low = math.floor(position)
        return means[low] + (means[min(low + 1, 255)] - means[low]) * (position - low)

    low, high = bootstrap_mean_interval(values, confidence=0.9, resamples=20_000, seed=3)
    assert low == pytest.approx(exact_quantile(0.05), abs=0.02)
    assert high == pytest.approx(exact_quantile(0.95), abs=0.02)


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=30), st.integers(0, 2**32))
def test_bootstrap_is_reproducible_and_brackets_the_mean(values: list[float], seed: int) -> None:
    """The same values and seed give the same interval, which lies within the values' range."""
    first = bootstrap_mean_interval(values, resamples=50, seed=seed)
    assert first == bootstrap_mean_interval(list(values), resamples=50, seed=seed)
    assert min(values) - 1e-9 <= first[0] <= first[1] <= max(values) + 1e-9


def test_bootstrap_seed_and_stream_change_the_draws() -> None:
    """Another seed or stream draws other resamples (hence, generally, another interval)."""
    values = [i / 37 for i in range(37)]
    intervals = {bootstrap_mean_interval(values, resamples=100, seed=s, stream=t)
                 for s in range(3) for t in ("a", "b")}
    assert len(intervals) == 6


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"confidence": 1.0}, "confidence must be in"), ({"resamples": 0}, "resamples must be")],
)
def test_bootstrap_refuses_bad_settings(kwargs: dict[str, float], message: str) -> None:
    """Bad settings are errors naming the setting and value."""
    with pytest.raises(ValueError, match=message):
        bootstrap_mean_interval([0.0, 1.0], **kwargs)  # type: ignore[arg-type]


def test_compare_pairs_items_and_lists_the_unpaired() -> None:
    """Items pair by id whatever the order; items and scorers in one batch only are listed."""
    base = [row("a", "x", 0.9), row("a", "y", 0.8), row("a", "gone", 1.0),
            row("a", "x", 1.0, scorer="old")]
    new = [row("b", "y", 0.6), row("b", "x", 0.9), row("b", "fresh", 0.0)]
    result = compare(base, new)
    (s,) = result.scorers
    assert (s.scorer_id, s.paired, s.scored_pairs) == ("s", 2, 2)
    assert s.mean_delta == pytest.approx(-0.1)
    assert (s.improved, s.regressed, s.unchanged) == (0, 1, 1)
    (item,) = s.most_regressed
    assert item.item_id == "y"
    assert item.delta == pytest.approx(-0.2)
    assert (result.only_in_base, result.only_in_new) == (("gone",), ("fresh",))
    assert (result.scorers_only_in_base, result.scorers_only_in_new) == (("old",), ())
    assert result.scorers_differ


def test_a_score_that_became_a_failure_is_a_regression() -> None:
    """scored -> failed counts as newly failing, is listed first among the most regressed."""
    base = rows("a", [1.0] * 30)
    new = rows("b", [1.0] * 10) + [row("b", str(i), None, status="failed") for i in range(10, 30)]
    (s,) = compare(base, new).scorers
    assert (s.newly_failing, s.newly_passing, s.scored_pairs) == (20, 0, 10)
    assert s.status_changes == {"scored->failed": 20}
    assert s.most_regressed[0].new_status == "failed"
    assert s.mean_delta == 0.0
    assert s.significant_regression  # by the pass rate: the mean of scored pairs did not move


def test_thresholds_define_passing() -> None:
    """An item passes when its score is within the scorer's threshold (default: >= 0.5)."""
    base, new = rows("a", [0.7] * 20), rows("b", [0.6] * 20)
    (default,) = compare(base, new, tolerance=0.5).scorers
    (strict,) = compare(base, new, tolerance=0.5, thresholds={"s": Threshold(min=0.65)}).scorers
    assert (default.pass_rule, default.newly_failing) == (">= 0.5", 0)
    assert (strict.pass_rule, strict.newly_failing, strict.new_pass_rate) == (">= 0.65", 20, 0.0)


def test_identical_batches_never_fire_and_improvements_are_not_regressions() -> None:
    """Equal scores: unchanged; a clear rise: improved, never a regression (exit 0)."""
    same = compare(rows("a", [0.4, 0.9] * 20), rows("b", [0.4, 0.9] * 20))
    assert (same.scorers[0].verdict, same.regressed) == ("unchanged", False)
    better = compare(rows("a", [0.2] * 40), rows("b", [0.9] * 40))
    assert (better.scorers[0].verdict, better.regressed) == ("improved", False)


def test_changed_fingerprints_are_flagged() -> None:
    """Rows recording different scorer fingerprints are flagged as changed scorers."""
    result = compare(rows("a", [1.0], fingerprint="f1"), rows("b", [1.0], fingerprint="f2"))
    assert result.changed_scorers == ("s",)
    assert compare(rows("a", [1.0], fingerprint="f1"),
                   rows("b", [1.0], fingerprint="f1")).changed_scorers == ()


def test_a_changed_scorer_is_compared_and_marked() -> None:
    """A scorer whose definition changed is compared like any other and carries the mark,
    in the value, its JSON and the one-line description of the differences."""
    base = rows("a", [1.0] * 20, fingerprint="f1") + rows("a", [1.0] * 20, scorer="t")
    new = rows("b", [0.0] * 20, fingerprint="f2") + rows("b", [1.0] * 20, scorer="t")
    result = compare(base, new)
    changed, same = result.scorers
    assert (changed.definition_changed, changed.verdict) == (True, "regressed")
    assert (same.definition_changed, same.verdict) == (False, "unchanged")
    assert [s["definitionChanged"] for s in result.to_json()["scorers"]] == [True, False]
    assert result.scorer_differences() == "definition changed: s"
    only = compare(rows("a", [1.0], scorer="old") + rows("a", [1.0]), rows("b", [1.0]))
    assert only.scorer_differences() == "only in a: old"


def test_several_scorers_share_alpha() -> None:
    """With k scorers each interval has confidence 1 - 0.05 / k (Bonferroni)."""
    base = rows("a", [0.5] * 5) + rows("a", [0.5] * 5, scorer="t")
    result = compare(base, rows("b", [0.5] * 5) + rows("b", [0.5] * 5, scorer="t"))
    assert [s.confidence for s in result.scorers] == [pytest.approx(0.975)] * 2


@given(
    base=st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.floats(0, 1)), max_size=25),
    new=st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.floats(0, 1)), max_size=25),
    seed=st.integers(0, 10),
)
def test_compare_laws(base: dict[str, float | None], new: dict[str, float | None],
                      seed: int) -> None:
    """Any ids and scores: counts add up, unpaired ids are exact, row order does not matter."""

    def make(batch: str, scores: dict[str, float | None]) -> list[ScoreRow]:
        return [row(batch, k, v, status="scored" if v is not None else "failed")
                for k, v in scores.items()]

    base_rows, new_rows = make("a", base), make("b", new)
    result = compare(base_rows, new_rows, seed=seed, resamples=30)
    assert set(result.only_in_base) == base.keys() - new.keys()
    assert set(result.only_in_new) == new.keys() - base.keys()
    for s in result.scorers:
        assert s.paired == len(base.keys() & new.keys())
        assert s.improved + s.regressed + s.unchanged == s.scored_pairs
        assert 0.0 <= s.mcnemar_p <= 1.0
    shuffled = compare(list(reversed(base_rows)), list(reversed(new_rows)), seed=seed,
                       resamples=30)
    assert shuffled == result


def test_compare_refuses_bad_settings() -> None:
    """A negative tolerance or an alpha outside (0, 1) is an error naming it."""
    with pytest.raises(ValueError, match=r"tolerance must be a finite number >= 0, got -0\.1"):
        compare([], [], tolerance=-0.1)
    with pytest.raises(ValueError, match="alpha must be in"):
        compare([], [], alpha=1.5)


def test_null_comparisons_fire_the_gate_at_most_5_percent() -> None:
    """1,000 comparisons of two batches from one distribution: the gate fires in <= 5 % of them.

    At tolerance 0 (the strictest setting: a tolerance only removes firings); 50 items, 200
    resamples to stay fast (benchmarks/compare_power.py runs the full-size version).
    """
    rate = gate_rate(runs=1000, items=50, shift=0.0, seed=11, tolerance=0.0, resamples=200)
    assert rate <= 0.05


def test_a_planted_regression_is_detected() -> None:
    """A planted drop of 0.1 on 100 items is caught in at least 90 % of 200 comparisons."""
    rate = gate_rate(runs=200, items=100, shift=0.1, seed=12, resamples=200)
    assert rate >= 0.9


def test_simulated_rows_are_seeded() -> None:
    """The simulation itself is deterministic (so the two tests above cannot flake)."""
    assert gate_rate(runs=20, items=20, shift=0.05, seed=1, resamples=50) == gate_rate(
        runs=20, items=20, shift=0.05, seed=1, resamples=50)


def trial_rows(batch: str, scores_by_trial: list[list[float]], *,
               with_item_ids: bool) -> list[ScoreRow]:
    """Rows as run_evals(trials=N) stores them: run ids ``batch:#i``, ``batch/trial-t:#i``."""
    found = []
    for t, scores in enumerate(scores_by_trial):
        prefix = batch if t == 0 else f"{batch}/trial-{t}"
        for i, score in enumerate(scores):
            found.append(ScoreRow(
                id=f"{prefix}/{i}", scorer_id="s", run_id=f"{prefix}:#{i}", batch_id=batch,
                status="scored", score=score,
                dataset_item_id=f"#{i}" if with_item_ids else None,
            ))
    return found


@pytest.mark.parametrize("with_item_ids", [False, True])
def test_compare_pairs_an_items_trials_and_averages_them(with_item_ids: bool) -> None:
    """Trials of one item are one paired item, scored with the mean over its trials."""
    base = trial_rows("A", [[1.0, 1.0], [0.0, 1.0]], with_item_ids=with_item_ids)
    new = trial_rows("B", [[1.0, 0.0], [1.0, 0.0]], with_item_ids=with_item_ids)
    result = compare(base, new)
    assert result.only_in_base == result.only_in_new == ()
    (scorer,) = result.scorers
    assert scorer.paired == 2
    assert scorer.base_mean == pytest.approx(0.75)
    assert scorer.new_mean == pytest.approx(0.5)
    assert sorted((d.item_id, d.base_score, d.new_score) for d in scorer.most_regressed) == [
        ("#1", 1.0, 0.0)]


@given(batch=st.text(min_size=1).filter(lambda b: ":" not in b and "/" not in b),
       item=st.text(), trial=st.integers(min_value=0, max_value=10_000))
def test_row_item_id_is_the_item_in_every_trial(batch: str, item: str, trial: int) -> None:
    """Whatever the batch (no ':' or '/') and item id, every trial's run id gives the item."""
    prefix = batch if trial == 0 else f"{batch}/trial-{trial}"
    stored = ScoreRow(id="r", scorer_id="s", run_id=f"{prefix}:{item}", batch_id=batch,
                      status="scored", score=1.0)
    assert row_item_id(stored) == item


# --------------------------------------------------------------------------- too few pairs


def test_one_paired_item_gives_no_verdict_never_a_regression_or_a_pass() -> None:
    """The issue's case: 1 item, 1.0 -> 0.5 gave REGRESSED with interval [-0.5, -0.5]. Below
    min_paired (10) there is no interval and no verdict for the scorer, nor for the whole."""
    result = compare(rows("a", [1.0]), rows("b", [0.5]))
    (s,) = result.scorers
    assert (s.paired, s.enough_pairs, s.verdict) == (1, False, "not_enough_pairs")
    assert (s.ci_low, s.ci_high, s.significant_regression) == (None, None, False)
    assert s.mean_delta == -0.5  # still reported, never tested
    assert (result.regressed, result.verdict) == (False, "not_enough_pairs")
    assert result.verdict_reason == "not enough paired items: n=1 for s (at least 10 needed)"
    assert result.to_json()["verdict"] == "not_enough_pairs"
    assert result.to_json()["minPaired"] == 10


def test_no_paired_item_gives_no_verdict() -> None:
    """Batches sharing no item (or no scorer) never say "no significant regression"."""
    disjoint = compare(rows("a", [1.0] * 20), [row("b", f"other-{i}", 1.0) for i in range(20)])
    assert disjoint.verdict_reason == "not enough paired items: n=0 for s (at least 10 needed)"
    no_scorer = compare(rows("a", [1.0] * 20), rows("b", [1.0] * 20, scorer="t"))
    assert (no_scorer.verdict, no_scorer.verdict_reason) == (
        "not_enough_pairs", "not enough paired items: n=0 (no scorer in both batches)")
    assert compare([], []).verdict == "not_enough_pairs"


def test_min_paired_is_a_setting_and_a_regression_elsewhere_still_counts() -> None:
    """min_paired=1 gives the old answer; a scorer with enough pairs that regressed makes the
    comparison regressed even when another scorer has too few."""
    assert compare(rows("a", [1.0]), rows("b", [0.5]), min_paired=1).scorers[0].enough_pairs
    base = rows("a", [1.0] * 40) + rows("a", [1.0] * 3, scorer="t")
    new = rows("b", [0.0] * 40) + rows("b", [1.0] * 3, scorer="t")
    result = compare(base, new)
    assert [s.verdict for s in result.scorers] == ["regressed", "not_enough_pairs"]
    assert (result.regressed, result.verdict) == (True, "regressed")


def test_few_scored_pairs_leave_the_decision_to_the_pass_rate() -> None:
    """30 pairs of which 5 scored in both: no interval from 5 values, the pass-rate test
    (30 pairs) still finds the 25 runs that failed."""
    base = rows("a", [1.0] * 30)
    new = rows("b", [1.0] * 5) + [row("b", str(i), None, status="failed") for i in range(5, 30)]
    (s,) = compare(base, new).scorers
    assert (s.paired, s.scored_pairs, s.ci_low, s.enough_pairs) == (30, 5, None, True)
    assert s.verdict == "regressed"


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_compare_refuses_a_bad_min_paired(bad: object) -> None:
    """min_paired must be an int >= 1; the error names it and the value."""
    with pytest.raises(ValueError, match=rf"min_paired must be an int >= 1, got {bad!r}"):
        compare([], [], min_paired=bad)  # type: ignore[arg-type]


@settings(max_examples=15, deadline=None)
@given(st.integers(1100, 5000), st.integers(1, 6), st.integers(0, 2**32))
def test_most_regressed_are_the_first_of_all_losses_in_loss_order(
    items: int, most: int, seed: int
) -> None:
    """However many items regress (past the trims that keep memory flat), the most regressed
    are the first ``most`` of every lost item sorted by loss (a lost score first, then the
    largest drop, then the item id)."""
    order = Random(seed)  # noqa: S311 - test data, seeded
    # Mostly small drops, rarely a large one or a lost score: the most regressed items come
    # anywhere in the batch, after the trims too.
    drops = order.choices([-1.0, None, -0.5, -0.25, 0.0, 0.5], weights=[1, 1, 4, 400, 50, 50],
                          k=items)
    ids = [f"q{i:05d}" for i in range(items)]
    order.shuffle(ids)
    base = [ScoreRow(id=f"a{k}", scorer_id="s", run_id=f"a:{k}", batch_id="a",
                     status="scored", score=1.0, dataset_item_id=k) for k in ids]
    new = [ScoreRow(id=f"b{k}", scorer_id="s", run_id=f"b:{k}", batch_id="b",
                    status="scored" if d is not None else "failed",
                    score=None if d is None else 1.0 + d, dataset_item_id=k)
           for k, d in zip(ids, drops, strict=True)]
    lost = sorted(((0, 0.0, k) if d is None else (1, d, k)
                   for k, d in zip(ids, drops, strict=True) if d is None or d < 0))
    (scorer,) = compare(base, new, most_regressed=most, resamples=1).scorers
    assert [d.item_id for d in scorer.most_regressed] == [k for *_, k in lost[:most]]
