"""``scorecore.evals.calibrate``: pairing with labels, the statistics per kind, degenerate data,
the fitted threshold and the κ gate — checked against scikit-learn and scipy on random data."""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Mapping, Sequence

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import create_scorer
from scorecore.evals import Calibration, ScoreRow, calibrate, run_evals

sklearn_metrics = pytest.importorskip("sklearn.metrics")
scipy_stats = pytest.importorskip("scipy.stats")


def row(item: str, score: float | None, *, scorer: str = "judge", status: str = "scored",
        trial: int = 0, batch: str = "b") -> ScoreRow:
    run_id = f"{batch}:{item}" if trial == 0 else f"{batch}/trial-{trial}:{item}"
    return ScoreRow(id=f"{run_id}/{scorer}", scorer_id=scorer, run_id=run_id, batch_id=batch,
                    status=status, score=score, dataset_item_id=item)  # type: ignore[arg-type]


def rows_of(scores: Mapping[str, float], scorer: str = "judge") -> list[ScoreRow]:
    return [row(item, s, scorer=scorer) for item, s in scores.items()]


def numbered(values: Sequence[object]) -> dict[str, object]:
    return {f"i{n:03d}": v for n, v in enumerate(values)}


def test_the_grant_readers_example_through_calibrate() -> None:
    """Wikipedia's worked example of Cohen's κ (20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no of
    50) as labels and a scorer's pass/fail: κ = 0.4, accuracy 0.7, and the confusion matrix
    holds the four counts (rows: label, columns: scorer)."""
    cells = [(True, 1.0)] * 20 + [(True, 0.0)] * 5 + [(False, 1.0)] * 10 + [(False, 0.0)] * 15
    labels = numbered([label for label, _ in cells])
    scores = dict(zip(labels, [score for _, score in cells], strict=True))
    judge = calibrate(rows_of(scores), labels).scorer("judge")  # type: ignore[arg-type]
    assert judge.n == 50
    assert judge.kappa.value == pytest.approx(0.4, abs=1e-15)
    assert judge.kappa_kind == "cohen"
    assert judge.accuracy.value == pytest.approx(0.7)
    assert (judge.precision.value, judge.recall.value) == (pytest.approx(20 / 30), 0.8)
    assert judge.confusion.counts == ((15, 10), (5, 20))
    assert (judge.confusion.count("pass", "fail"), judge.confusion.count("fail", "pass")) == (5, 10)


def test_items_are_paired_by_id_and_one_sided_items_listed() -> None:
    """Labels without rows and rows without labels are listed; items whose runs failed or were
    not scorable are listed per scorer, not counted; a scorer lacking a labelled item lists it."""
    rows = [row("a", 0.9), row("b", 0.1), row("c", None, status="failed"),
            row("d", None, status="not_scorable"), row("e", 0.8),
            row("a", 1.0, scorer="other"), row("z", 1.0, scorer="other")]
    labels = {"a": True, "b": False, "c": True, "d": False, "missing": True}
    result = calibrate(rows, labels)
    judge = result.scorer("judge")
    assert (judge.n, dict(judge.not_scored)) == (2, {"c": "failed", "d": "not_scorable"})
    assert judge.without_row == ("missing",)
    assert result.scorer("other").without_row == ("b", "c", "d", "missing")
    with pytest.raises(KeyError, match="'unknown'"):
        result.scorer("unknown")
    assert (result.labels_without_rows, result.rows_without_labels) == (("missing",), ("e", "z"))
    assert [s.scorer_id for s in result.scorers] == ["judge", "other"]
    assert result.labels == 5


def test_an_items_trials_are_one_item_at_their_mean() -> None:
    """With trials, an item counts once, scored with the mean of its scored trials."""
    rows = [row("a", 0.2), row("a", 0.6, trial=1), row("a", None, status="failed", trial=2),
            row("b", 0.9), row("b", 0.9, trial=1)]
    judge = calibrate(rows, {"a": 0.4, "b": 0.9}, kind="continuous").scorer("judge")
    assert judge.n == 2
    assert judge.mae is not None
    assert judge.mae.value == pytest.approx(0.0)


def test_a_run_evals_report_with_kept_results_is_calibrated_like_its_rows() -> None:
    """A report of run_evals(keep_results=True) pairs by item id like stored rows (id-less
    items by #index); a report without kept results is refused with what to do."""
    judge = create_scorer(id="judge", description="d").generate_score(
        lambda ctx: float(ctx.run.output))
    items = [{"id": "a", "input": "q", "output": 1.0}, {"input": "q", "output": 0.0},
             {"id": "c", "input": "q", "output": 1.0}]
    report = anyio.run(lambda: run_evals(items, [judge], keep_results=True))
    result = calibrate(report, {"a": True, "#1": False, "c": False})
    assert result.batch_id == report.batch_id
    assert result.scorer("judge").confusion.counts == ((1, 1), (0, 1))
    bare = anyio.run(lambda: run_evals(items, [judge]))
    with pytest.raises(ValueError, match=r"keep_results=True"):
        calibrate(bare, {"a": True})


scores = st.floats(0, 1, allow_nan=False) | st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])


@settings(max_examples=150)
@given(st.lists(st.tuples(scores, st.booleans()), min_size=1, max_size=40),
       st.sampled_from([0.5, 0.3, 0.75]))
def test_binary_statistics_equal_scikit_learn(
    pairs: list[tuple[float, bool]], threshold: float
) -> None:
    """On random scores and labels: κ, accuracy, precision, recall and the confusion matrix at
    the threshold equal scikit-learn's to 1e-9; where sklearn's is undefined ours is None."""
    labels = numbered([label for _, label in pairs])
    rows = rows_of(dict(zip(labels, [s for s, _ in pairs], strict=True)))
    judge = calibrate(rows, labels, threshold=threshold, resamples=20).scorer("judge")  # type: ignore[arg-type]
    truth = [int(label) for _, label in pairs]
    verdict = [int(s >= threshold) for s, _ in pairs]
    assert judge.confusion.counts == tuple(
        map(tuple, sklearn_metrics.confusion_matrix(truth, verdict, labels=[0, 1]).tolist()))
    assert judge.accuracy.value == pytest.approx(
        sklearn_metrics.accuracy_score(truth, verdict), abs=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = {
            "kappa": sklearn_metrics.cohen_kappa_score(truth, verdict, labels=[0, 1]),
            "precision": sklearn_metrics.precision_score(truth, verdict, zero_division=math.nan),
            "recall": sklearn_metrics.recall_score(truth, verdict, zero_division=math.nan),
        }
    if len(set(truth)) == 1:
        assert judge.kappa.value is None  # labels of one class: κ says nothing
        assert judge.kappa.reason == (
            f"the labels hold one class only ({'pass' if truth[0] else 'fail'})")
    else:
        assert judge.kappa.value == pytest.approx(theirs["kappa"], abs=1e-9)
    for name in ("precision", "recall"):
        ours = getattr(judge, name).value
        if math.isnan(theirs[name]):
            assert ours is None
        else:
            assert ours == pytest.approx(theirs[name], abs=1e-9)


@settings(max_examples=150)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(1, 5)), min_size=1, max_size=40))
def test_ordinal_quadratic_kappa_equals_scikit_learn(pairs: list[tuple[int, int]]) -> None:
    """Grades 1..5 with scores in [0, 1] (scale=(1, 5): a score s is the grade 1 + 4 s): the
    quadratic-weighted κ equals sklearn's cohen_kappa_score(weights="quadratic",
    labels=1..5) to 1e-9, and the MAE is in grades."""
    labels = numbered([grade for _, grade in pairs])
    score_of = dict(zip(labels, [step / 4 for step, _ in pairs], strict=True))
    judge = calibrate(rows_of(score_of), labels, kind="ordinal", scale=(1, 5),  # type: ignore[arg-type]
                      resamples=20).scorer("judge")
    truth = [grade for _, grade in pairs]
    judged = [step + 1 for step, _ in pairs]
    assert judge.kappa_kind == "quadratic"
    assert judge.grades is not None
    assert judge.grades.counts == tuple(map(tuple, sklearn_metrics.confusion_matrix(
        truth, judged, labels=[1, 2, 3, 4, 5]).tolist()))
    if len(set(truth)) == 1:
        assert judge.kappa.value is None
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = sklearn_metrics.cohen_kappa_score(truth, judged, weights="quadratic",
                                                       labels=[1, 2, 3, 4, 5])
        assert judge.kappa.value == pytest.approx(theirs, abs=1e-9)
    assert judge.mae is not None
    assert judge.mae.value == pytest.approx(
        sklearn_metrics.mean_absolute_error(truth, judged), abs=1e-9)


def test_ordinal_scores_are_rounded_to_the_nearest_grade() -> None:
    """Without a scale, grades run from the lowest to the highest label (unused ones kept in
    between) and a score is rounded half up to the nearest grade, clipped to the range."""
    scores = {"a": 1.49, "b": 2.5, "c": 9.0, "d": -3.0}
    labels = {"a": 1, "b": 4, "c": 4, "d": 1}
    judge = calibrate(rows_of(scores), labels, kind="ordinal", resamples=20).scorer("judge")
    assert judge.grades is not None
    assert judge.grades.classes == ("1", "2", "3", "4")
    assert judge.grades.count("1", "1") == 2
    assert (judge.grades.count("4", "3"), judge.grades.count("4", "4")) == (1, 1)


@settings(max_examples=150)
@given(st.lists(st.tuples(scores, st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]) | scores),
                min_size=2, max_size=40))
def test_continuous_statistics_equal_scipy(pairs: list[tuple[float, float]]) -> None:
    """Continuous labels: Spearman's ρ and Kendall's τ-b equal scipy's to 1e-9 (None where
    scipy's is NaN: a constant side), the MAE equals sklearn's."""
    labels = numbered([label for _, label in pairs])
    score_of = dict(zip(labels, [s for s, _ in pairs], strict=True))
    judge = calibrate(rows_of(score_of), labels, kind="continuous",  # type: ignore[arg-type]
                      resamples=20).scorer("judge")
    x, y = [s for s, _ in pairs], [label for _, label in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = float(scipy_stats.spearmanr(x, y).statistic)
        tau = float(scipy_stats.kendalltau(x, y).statistic)
    assert judge.spearman is not None
    assert judge.kendall is not None
    for ours, theirs in ((judge.spearman.value, rho), (judge.kendall.value, tau)):
        if math.isnan(theirs):
            assert ours is None
        else:
            assert ours == pytest.approx(theirs, abs=1e-9)
    assert judge.mae is not None
    assert judge.mae.value == pytest.approx(sklearn_metrics.mean_absolute_error(y, x), abs=1e-9)


@settings(max_examples=100)
@given(st.lists(st.tuples(scores, st.booleans()), min_size=1, max_size=30))
def test_the_fitted_threshold_maximises_kappa(pairs: list[tuple[float, bool]]) -> None:
    """No score cut reaches a higher pass/fail κ than the fitted threshold, and calibrating at
    the fitted threshold gives the κ it promised; it is marked as fitted on these labels."""
    labels = numbered([label for _, label in pairs])
    rows = rows_of(dict(zip(labels, [s for s, _ in pairs], strict=True)))
    judge = calibrate(rows, labels, resamples=10).scorer("judge")  # type: ignore[arg-type]
    fitted = judge.fitted_threshold
    if len({label for _, label in pairs}) == 1:
        assert (fitted.threshold, fitted.reason) == (None, judge.kappa.reason)
        return
    if fitted.threshold is None:  # no cut beats chance: none is fitted
        assert (fitted.reason or "").startswith("no cut agrees with the labels better than "
                                                "chance")
        for cut in {s for s, _ in pairs}:
            other = calibrate(rows, labels, threshold=cut, resamples=10).scorer("judge")  # type: ignore[arg-type]
            assert other.kappa.value is not None
            assert other.kappa.value <= 0
        return
    assert fitted.threshold is not None
    assert fitted.kappa is not None
    assert fitted.kappa_at_threshold == judge.kappa.value
    for cut in {s for s, _ in pairs}:
        other = calibrate(rows, labels, threshold=cut, resamples=10).scorer("judge")  # type: ignore[arg-type]
        assert other.kappa.value is not None
        assert other.kappa.value <= fitted.kappa + 1e-12
    again = calibrate(rows, labels, threshold=fitted.threshold, resamples=10).scorer("judge")  # type: ignore[arg-type]
    assert again.kappa.value == fitted.kappa
    document = fitted.to_json()
    assert document["fittedOnLabels"] is True
    assert "fitted on these labels" in document["note"]


def test_degenerate_data_is_none_with_a_reason_never_nan() -> None:
    """No scored item, labels of one class, a scorer passing nothing, constant scores: each
    undefined statistic is None with its reason; the JSON holds no NaN."""
    empty = calibrate([row("a", None, status="failed")], {"a": True}).scorer("judge")
    assert empty.n == 0
    for estimate in (empty.kappa, empty.accuracy, empty.precision, empty.recall):
        assert (estimate.value, estimate.reason) == (None, "no labelled item was scored")
    assert empty.fitted_threshold.reason == "no labelled item was scored"
    one_class = calibrate(rows_of({"a": 0.9, "b": 0.1}), {"a": True, "b": True}).scorer("judge")
    assert one_class.kappa.reason == "the labels hold one class only (pass)"
    assert (one_class.recall.value, one_class.precision.value) == (0.5, 1.0)
    nothing_passed = calibrate(rows_of({"a": 0.1, "b": 0.2}), {"a": True, "b": False})
    judge = nothing_passed.scorer("judge")
    assert (judge.kappa.value, judge.precision.reason) == (0.0, "the scorer passed no "
                                                                "labelled item")
    flat = calibrate(rows_of({"a": 0.5, "b": 0.5, "c": 0.5}), {"a": 0.1, "b": 0.5, "c": 0.9},
                     kind="continuous").scorer("judge")
    assert flat.spearman is not None
    assert flat.kendall is not None
    assert (flat.spearman.value, flat.spearman.reason) == (None, "the scores are all equal")
    assert flat.kendall.reason == "the scores are all equal"
    for result in (empty, one_class, judge, flat):
        json.dumps(result.to_json(), allow_nan=False)
    nothing = calibrate([], {"a": True})
    assert (nothing.scorers, nothing.labels_without_rows) == ((), ("a",))
    assert nothing.failed_checks(0.5) == ("no scorer to calibrate",)


def test_intervals_are_seeded_and_undefined_resamples_counted() -> None:
    """The same rows, labels and seed give the same intervals; another seed other draws. On
    few items where some resamples have one class only, those are left out and counted, and
    past the interval's tail there is no interval (the reason says why)."""
    labels = numbered([n % 3 == 0 for n in range(60)])
    score_of = {item: (0.8 if (n % 3 == 0) != (n % 7 == 0) else 0.3)
                for n, item in enumerate(labels)}
    first = calibrate(rows_of(score_of), labels, seed=1).scorer("judge")  # type: ignore[arg-type]
    assert first == calibrate(rows_of(score_of), labels, seed=1).scorer("judge")  # type: ignore[arg-type]
    other = calibrate(rows_of(score_of), labels, seed=2).scorer("judge")  # type: ignore[arg-type]
    assert (first.kappa.low, first.kappa.high) != (other.kappa.low, other.kappa.high)
    assert first.kappa.low is not None
    assert first.kappa.high is not None
    assert first.kappa.low < first.kappa.high
    few = calibrate(rows_of({"a": 0.9, "b": 0.1, "c": 0.2, "d": 0.7}),
                    {"a": True, "b": False, "c": False, "d": False}).scorer("judge")
    assert few.kappa.value is not None
    assert few.kappa.low is None
    assert few.kappa.undefined_resamples > 25
    assert few.kappa.reason is not None
    assert few.kappa.reason.startswith("kappa is undefined in ")
    assert calibrate(rows_of({"a": 0.9, "b": 0.1, "c": 0.2, "d": 0.7}),
                     {"a": True, "b": False, "c": False, "d": False}).failed_checks(0.1) == (
        f"judge: kappa {few.kappa.value:.3f} has no interval ({few.kappa.reason}), so it "
        "cannot be shown to reach 0.1",)


def test_the_kappa_gate_reads_the_intervals_lower_end() -> None:
    """failed_checks(min_kappa) names each scorer whose κ interval reaches below the bound,
    whose κ is undefined, or has no interval; a scorer clearly above it passes."""
    labels = numbered([n % 2 == 0 for n in range(80)])
    good = {item: (0.9 if n % 2 == 0 else 0.1) for n, item in enumerate(labels)}
    noisy = {item: (0.9 if (n % 2 == 0) != (n % 5 == 0) else 0.1)
             for n, item in enumerate(labels)}
    result = calibrate([*rows_of(good, "good"), *rows_of(noisy, "noisy")], labels)  # type: ignore[arg-type]
    assert result.failed_checks(0.6) == (
        f"noisy: kappa {result.scorer('noisy').kappa.value:.3f}, interval's lower end "
        f"{result.scorer('noisy').kappa.low:.3f} < 0.6",)
    assert result.failed_checks(0.2) == ()
    one_class = calibrate(rows_of({"a": 0.9}), {"a": True})
    assert one_class.failed_checks(0.6) == (
        "judge: kappa is undefined (the labels hold one class only (pass)), so it cannot "
        "reach 0.6",)
    with pytest.raises(ValueError, match=r"min_kappa must be a number in \[-1, 1\], got 2"):
        result.failed_checks(2)


@pytest.mark.parametrize(
    ("labels", "options", "message"),
    [
        ({"a": 3}, {}, "the label of item 'a' must be true/false or 1/0 for binary labels"),
        ({"a": "good"}, {}, "the label of item 'a' is a string without a value in "
                            "label_values / --label-value (none given), got 'good'"),
        ({"a": "good"}, {"label_values": {"bad": 0}}, "(\'bad\'), got 'good'"),
        ({"a": None}, {}, "the label of item 'a' must be a bool, a finite number or a string, "
                          "got None"),
        ({"a": math.nan}, {"kind": "continuous"}, "must be a bool, a finite number"),
        ({"a": True}, {"kind": "ordinal"}, "is a bool, a binary label, not a ordinal one"),
        ({"a": 2.5}, {"kind": "ordinal"}, "must be a whole number for ordinal labels"),
        ({"a": 0, "b": 500}, {"kind": "ordinal"}, "ordinal labels span 0..500, more than 100"),
        ({"a": 7}, {"kind": "ordinal", "scale": (1, 5)},
         "is outside the scale 1..5 (scale / --scale), got 7"),
        ({1: True}, {}, "labels are keyed by item id (str), got the key 1"),
        ({"a": True}, {"kind": "nominal"}, "kind must be one of binary, ordinal, continuous"),
        ({"a": True}, {"scale": (1, 5)}, "scale is for ordinal and continuous labels"),
        ({"a": 1}, {"kind": "ordinal", "scale": (1.5, 5)}, "an ordinal scale must be whole"),
        ({"a": 1}, {"kind": "continuous", "scale": (5, 1)}, "scale must be (low, high)"),
        ({"a": True}, {"threshold": math.inf}, "threshold must be a finite number, got inf"),
        ({"a": True}, {"threshold": {"nope": 0.5}}, "threshold for scorer(s) not calibrated"),
        ({"a": True}, {"scorer_ids": ["nope"]}, "no rows of scorer(s) 'nope' (the rows' "
                                                "scorers: judge)"),
        ({"a": True}, {"resamples": 0}, "resamples must be an int >= 1, got 0"),
        ({"a": True}, {"confidence": 1.5}, "confidence must be in (0, 1), got 1.5"),
    ],
)
def test_bad_labels_and_options_are_errors_naming_them(
    labels: dict[object, object], options: dict[str, object], message: str
) -> None:
    """A label that does not fit the kind, or a bad option: a ValueError naming the item or
    option and the value."""
    with pytest.raises(ValueError, match=re.escape(message)):
        calibrate([row("a", 0.5)], labels, **options)  # type: ignore[arg-type]


def test_rows_of_several_batches_are_refused() -> None:
    """Rows of two batches would pair as trials of one item: refused, naming the batches."""
    with pytest.raises(ValueError, match=r"rows of several batches \(b, c\)"):
        calibrate([row("a", 0.5), row("a", 0.5, batch="c")], {"a": True})


def test_to_json_names_every_part() -> None:
    """The JSON carries the settings, the one-sided items and each scorer's statistics."""
    result: Calibration = calibrate(rows_of({"a": 0.9, "b": 0.1}), {"a": 1, "b": 0, "c": 1},
                                    seed=3, resamples=50)
    document = result.to_json()
    assert (document["batchId"], document["kind"], document["seed"], document["resamples"],
            document["labelsWithoutRows"]) == ("b", "binary", 3, 50, ["c"])
    (scorer,) = document["scorers"]
    assert scorer["kappa"]["value"] == 1.0
    assert scorer["confusion"] == {"classes": ["fail", "pass"], "counts": [[1, 0], [0, 1]],
                                   "rows": "label", "columns": "scorer"}
    assert (scorer["spearman"], scorer["mae"], scorer["grades"]) == (None, None, None)


def test_no_threshold_is_fitted_for_a_judge_that_runs_against_the_labels() -> None:
    """An anti-correlated judge (high scores where people said fail): every cut has κ <= 0,
    so no threshold is fitted, and the reason says so instead of "0 (kappa 0.000)"."""
    scores = {f"i{i}": 0.1 if i % 2 == 0 else 0.9 for i in range(20)}
    labels = {f"i{i}": i % 2 == 0 for i in range(20)}
    judge = calibrate(rows_of(scores), labels, resamples=50).scorer("judge")
    fitted = judge.fitted_threshold
    assert (fitted.threshold, fitted.kappa) == (None, None)
    assert fitted.kappa_at_threshold == -1.0
    assert fitted.reason == ("no cut agrees with the labels better than chance (the best kappa "
                             "is 0.000): the scores say nothing about the labels, or run "
                             "against them")
    assert fitted.to_json()["threshold"] is None


def test_the_caveat_says_when_agreement_cannot_be_told_from_chance() -> None:
    """κ's interval above 0: no caveat; including 0, or κ at 0 without an interval (a judge
    passing every item): the chance caveat; undefined κ: why it cannot be measured."""
    labels = {f"i{i}": i % 2 == 0 for i in range(40)}
    sharp = {f"i{i}": 0.9 if i % 2 == 0 else 0.1 for i in range(40)}
    coin = {f"i{i}": 0.9 if i % 4 < 2 else 0.1 for i in range(40)}
    lenient = {f"i{i}": 0.9 for i in range(8)}
    chance = "agreement with your labels is at chance level: do not gate on this judge"
    assert calibrate(rows_of(sharp), labels, resamples=100).scorer("judge").caveat() is None
    assert calibrate(rows_of(coin), labels, resamples=100).scorer("judge").caveat() == chance
    few = {k: k not in ("i3", "i6") for k in lenient}  # as the demo's: 6 pass, 2 fail
    passes_all = calibrate(rows_of(lenient), few, resamples=100).scorer("judge")
    assert (passes_all.kappa.value, passes_all.kappa.low) == (0.0, None)
    assert passes_all.caveat() == chance
    one_class = calibrate(rows_of(sharp), dict.fromkeys(sharp, True)).scorer("judge")
    assert one_class.caveat() == ("agreement with your labels cannot be measured (the labels "
                                  "hold one class only (pass)): do not gate on this judge")
