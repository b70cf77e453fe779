"""The report fold: pure (no event loop), exact, independent of the order items complete in."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import create_scorer, not_scorable
from scorecore.evals import EvalReport, ItemResult, Threshold, run_evals
from scorecore.evals.engine import ReportFold
from scorecore.evals.results import ScorerOutcome

IDS = ("a", "b")


def item(index: int, *outcomes: ScorerOutcome, error: str | None = None) -> ItemResult:
    return ItemResult(index=index, item_id=None, run_id=f"b:#{index}", item=None, error=error,
                      outcomes=outcomes)


def scored(scorer_id: str, score: float) -> ScorerOutcome:
    return ScorerOutcome(scorer_id=scorer_id, status="scored", score=score)


def fold(results: Sequence[ItemResult], **options: Any) -> EvalReport:
    folder = ReportFold(IDS, **options)
    for result in results:
        folder.add(result)
    return folder.report(batch_id="b", duration=1.5)


def test_fold_counts_each_status_and_means_only_scores() -> None:
    """Means average scored runs only; not-scorable and failed runs are counted apart."""
    report = fold([
        item(0, scored("a", 1.0), ScorerOutcome(scorer_id="b", status="not_scorable")),
        item(1, scored("a", 0.0), scored("b", 0.5)),
        item(2, *(ScorerOutcome(scorer_id=s, status="failed", error="x") for s in IDS),
             error="x"),
    ])
    a, b = report.scorers
    assert (a.mean, a.scored, a.not_scorable, a.failed) == (0.5, 2, 0, 1)
    assert (b.mean, b.scored, b.not_scorable, b.failed) == (0.5, 1, 1, 1)
    assert (report.total_items, report.failed_items, report.failed_runs) == (3, 1, 2)
    assert (report.batch_id, report.duration, report.results) == ("b", 1.5, None)
    # Two failed runs, none allowed by default.
    assert (report.verdict, report.failed_checks) == (
        "failed", ("too many failures: 2 failed scorer run(s), at most 0 allowed",))


def test_fold_checks_thresholds_gates_and_the_failure_budget() -> None:
    """Each check fails the verdict on its own, and is named in failed_checks."""
    results = [item(0, scored("a", 1.0), scored("b", 0.25)),
               item(1, scored("a", 1.0), ScorerOutcome(scorer_id="b", status="failed"))]
    assert not fold(results).passed  # the one failed run: max_failures defaults to 0
    assert fold(results, max_failures=1).passed
    assert fold(results, max_failures=None).passed
    assert fold(results, max_failure_rate=0.25).passed  # 1 of 4 runs
    assert not fold(results, max_failure_rate=0.2).passed
    assert fold(results, max_failures=1, gates=("a",)).passed
    assert not fold(results, max_failures=1, gates=("b",)).passed
    assert not fold(results, max_failures=1, thresholds={"b": Threshold(min=0.5)}).passed
    assert fold(results, max_failures=1, thresholds={"b": Threshold(max=0.5)}).passed
    failed = fold(results, max_failures=0, gates=("b",))
    assert failed.failed_checks == (
        "gate b: mean 0.25, needs 1.0",
        "too many failures: 1 failed scorer run(s), at most 0 allowed",
    )


def test_a_scorer_with_nothing_scored_has_no_mean_and_fails_its_threshold() -> None:
    """No scored run: mean None, which never meets a threshold."""
    report = fold([item(0, scored("a", 1.0), ScorerOutcome(scorer_id="b", status="failed"))],
                  thresholds={"b": Threshold(max=1.0)})
    assert report.summary("b").mean is None
    assert [t.passed for t in report.thresholds] == [False]


def test_asking_for_a_scorer_the_report_does_not_hold_is_a_key_error() -> None:
    """``summary`` of an id no run had raises KeyError naming that id."""
    report = fold([item(0, scored("a", 1.0))])
    with pytest.raises(KeyError, match="'missing'"):
        report.summary("missing")


def test_kept_results_are_in_dataset_order() -> None:
    """With keep_results, the report lists results by index whatever the completion order."""
    results = [item(i, scored("a", 1.0), scored("b", 1.0)) for i in (2, 0, 1)]
    report = fold(results, keep_results=True)
    assert report.results is not None
    assert [r.index for r in report.results] == [0, 1, 2]


scores = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300) | (
    st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True, width=64)
)
outcomes = st.one_of(
    scores.map(lambda s: ("scored", s)),
    st.just(("not_scorable", None)),
    st.just(("failed", None)),
)


@st.composite
def item_results(draw: st.DrawFn) -> list[ItemResult]:
    """Items with any mix of outcomes (huge, tiny and subnormal scores) and whole-item errors."""
    count = draw(st.integers(0, 30))
    results = []
    for index in range(count):
        pairs = [draw(outcomes) for _ in IDS]
        error = draw(st.none() | st.just("target raised"))
        results.append(item(
            index,
            *(ScorerOutcome(scorer_id=sid, status=status, score=score)  # type: ignore[arg-type]
              for sid, (status, score) in zip(IDS, pairs, strict=True)),
            error=error,
        ))
    return results


@given(item_results(), st.randoms(use_true_random=False), st.none() | st.integers(0, 10))
def test_folding_in_any_order_gives_the_same_report(
    results: list[ItemResult], random: Any, max_failures: int | None
) -> None:
    """The law: the report is a function of the set of results, not of their order."""
    shuffled = list(results)
    random.shuffle(shuffled)
    options: dict[str, Any] = {
        "keep_results": True, "max_failures": max_failures,
        "thresholds": {"a": Threshold(min=0.5)}, "gates": ("b",),
    }
    assert fold(shuffled, **options) == fold(results, **options)


@given(item_results())
def test_means_are_the_exact_mean_rounded_once(results: list[ItemResult]) -> None:
    """Each mean is the exact rational mean of the scored runs, rounded once to a float."""
    report = fold(results)
    for summary in report.scorers:
        got = [o.score for r in results for o in r.outcomes
               if o.scorer_id == summary.scorer_id and o.score is not None]
        exact = sum(map(Fraction, got), Fraction(0)) / len(got) if got else None
        assert summary.mean == (None if exact is None else float(exact))
        assert summary.scored == len(got)


@pytest.mark.anyio
async def test_run_evals_reports_the_fold_of_its_results(anyio_backend: str) -> None:
    """run_evals's report is ReportFold over its own item results (duration aside)."""
    half = create_scorer(id="a", description="d").generate_score(
        lambda ctx: 0.5 if ctx.run.output else 1.0
    )
    skip = create_scorer(id="b", description="d").generate_score(
        lambda ctx: not_scorable("no") if ctx.run.output == 2 else 1.0
    )
    data = [{"input": i, "output": i % 3} for i in range(20)] + [{"output": 1}]
    report = await run_evals(data, [half, skip], thresholds={"a": 0.7}, gates=["b"],
                             max_failures=3, keep_results=True, concurrency=4)
    assert report.results is not None
    again = ReportFold(IDS, thresholds={"a": Threshold(min=0.7)}, gates=("b",), max_failures=3,
                       keep_results=True)
    for result in reversed(report.results):
        again.add(result)
    expected = again.report(batch_id=report.batch_id, duration=report.duration)
    assert expected == report
    assert report.failed_items == 1  # the item without an input
