"""assert_scored and assert_passes: they pass exactly when the outcome is the one asked for,
and their failures are tables naming scorer, score, reason and cause."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import ScorerDefinitionError, create_scorer, not_scorable
from scorecore.evals import Threshold, run_evals_sync
from scorecore_adapters.testing import assert_passes, assert_scored

scores = st.floats(0, 1)


def constant(value: Any, reason: str | None = "fine", scorer_id: str = "s") -> Any:
    scorer = create_scorer(id=scorer_id, description="d").generate_score(lambda ctx: value)
    if reason is not None:
        scorer = scorer.generate_reason(lambda ctx: reason)
    return scorer


@given(got=scores, low=st.none() | scores, high=st.none() | scores)
def test_assert_scored_passes_exactly_within_bounds(
    got: float, low: float | None, high: float | None
) -> None:
    """assert_scored(min_score, max_score) passes iff the score is within the bounds, and
    returns the result when it does."""
    result = constant(got).run_sync(input=1, output=1)
    inside = (low is None or got >= low) and (high is None or got <= high)
    if inside:
        assert assert_scored(result, min_score=low, max_score=high).score == got
    else:
        with pytest.raises(AssertionError, match=r"score .* is (below min_score|above "
                                                 r"max_score)") as info:
            assert_scored(result, min_score=low, max_score=high)
        header = str(info.value).splitlines()[1]
        assert [c.strip() for c in header.split("|")] == ["score", "reason", "cause"]


def test_assert_scored_exact_score_and_reason() -> None:
    """score= compares with a tiny relative tolerance; reason= is equality for a str and a
    search for a pattern; each mismatch is named."""
    result = constant(0.1 + 0.2, reason="three tenths").run_sync(input=1, output=1)
    assert_scored(result, score=0.3, reason="three tenths")
    assert_scored(result, reason=re.compile(r"tenths$"))
    with pytest.raises(AssertionError, match=r"score 0\.30000000000000004 is not 0\.4; reason "
                                             r"'three tenths' is not 'x'"):
        assert_scored(result, score=0.4, reason="x")
    with pytest.raises(AssertionError, match=r"does not match '\^x'"):
        assert_scored(result, reason=re.compile("^x"))


def test_assert_scored_never_shows_a_blank_scorer() -> None:
    """A successful run's table has no scorer column it could only leave as ``-`` (a
    ``ScoreResult`` does not know its scorer); a failed run's names the scorer."""
    with pytest.raises(AssertionError) as info:
        assert_scored(constant(0.2, reason="low").run_sync(input=1, output=1), min_score=0.5)
    lines = str(info.value).splitlines()
    assert [c.strip() for c in lines[1].split("|")] == ["score", "reason", "cause"]
    assert [c.strip() for c in lines[3].split("|")] == ["0.2", "low", "-"]


def test_assert_scored_on_a_failed_run_shows_the_cause() -> None:
    """A Failure fails with the run error's message and a table row naming the step's cause;
    the score already computed before a later step failed is shown."""
    def bad_reason(ctx: Any) -> str:
        raise KeyError("missing")

    scorer = create_scorer(id="late", description="d").generate_score(
        lambda ctx: 0.5).generate_reason(bad_reason)
    with pytest.raises(AssertionError) as info:
        assert_scored(scorer.run_sync(input=1, output=1))
    lines = str(info.value).splitlines()
    assert lines[0].startswith("the scorer run failed: scorer 'late' failed at step "
                               "'generate_reason'")
    assert lines[1].split() == ["scorer", "|", "score", "|", "reason", "|", "cause"]
    assert re.match(r"late +\| 0\.5 +\| - +\| generate_reason: step raised KeyError", lines[3])


def test_assert_scored_not_scorable() -> None:
    """A not-scorable result fails unless not_scorable=True is asked for, and vice versa; the
    table shows the marker's step and reason."""
    skipped = constant(not_scorable("no answer"), reason=None).run_sync(input=1, output=1)
    assert assert_scored(skipped, not_scorable=True).not_scorable is not None
    with pytest.raises(AssertionError, match="expected a score, the result is not scorable") \
            as info:
        assert_scored(skipped)
    assert "not scorable at generate_score: no answer" in str(info.value)
    with pytest.raises(AssertionError, match="expected a not-scorable result, got score 1"):
        assert_scored(constant(1).run_sync(input=1, output=1), not_scorable=True)


def test_assert_scored_refuses_what_is_not_a_result() -> None:
    """Passing the ScoreResult (not the Result) is a misuse error saying what it takes."""
    with pytest.raises(ScorerDefinitionError,
                       match=r"assert_scored\(result\) must be the Result of scorer\.run"):
        assert_scored(constant(1).run_sync(input=1, output=1).unwrap())


def test_long_and_multiline_cells_stay_one_readable_row() -> None:
    """A reason of 10,000 characters over many lines is one row, cut with an ellipsis."""
    result = constant(0.0, reason="line\n" * 2_000).run_sync(input=1, output=1)
    with pytest.raises(AssertionError) as info:
        assert_scored(result, min_score=1)
    row = str(info.value).splitlines()[-1]
    assert "…" in row
    assert len(row) < 400


@given(values=st.lists(st.one_of(scores, st.just("boom")), min_size=1, max_size=12),
       rate=st.floats(0, 1))
def test_assert_passes_completion_rate_law(values: list[Any], rate: float) -> None:
    """assert_passes(min_completion_rate=r) passes iff (runs not failed) / (all runs) >= r;
    failing, it names the rate and lists each failed item with its cause."""
    def step(ctx: Any) -> float:
        if ctx.run.output == "boom":
            raise RuntimeError("boom")
        return float(ctx.run.output)

    scorer = create_scorer(id="s", description="d").generate_score(step)
    data = [{"input": i, "output": v, "id": f"item-{i}"} for i, v in enumerate(values)]
    # Failures allowed, so that only min_completion_rate (and a scorer that scored nothing) decides.
    report = run_evals_sync(data, [scorer], keep_results=True, max_failures=None)
    failed = values.count("boom")
    if failed == len(values):  # nothing scored: the report failed its own check
        with pytest.raises(AssertionError, match=r"scorer 's' has no scored run"):
            assert_passes(report, min_completion_rate=rate)
        return
    if (len(values) - failed) / len(values) >= rate:
        assert_passes(report, min_completion_rate=rate)
        return
    with pytest.raises(AssertionError) as info:
        assert_passes(report, min_completion_rate=rate)
    text = str(info.value)
    assert f"({failed} of {len(values)} runs failed)" in text
    assert text.count("generate_score: step raised RuntimeError: boom") == failed


@given(mean=scores, low=scores)
def test_assert_passes_thresholds_are_run_evals_thresholds(mean: float, low: float) -> None:
    """thresholds= passes iff run_evals(thresholds=...) with the same bound would pass."""
    scorer = constant(mean, reason=None)
    data = [{"input": 1, "output": 1}]
    expected = run_evals_sync(data, [scorer], thresholds={"s": low}).passed
    report = run_evals_sync(data, [scorer])
    if expected:
        assert_passes(report, thresholds={"s": low})
    else:
        with pytest.raises(AssertionError, match=rf"threshold s: mean .*, needs >= {low:g}"):
            assert_passes(report, thresholds={"s": Threshold(min=low)})


def test_assert_passes_reports_the_reports_own_failures_and_unknown_scorers() -> None:
    """A report that failed its own checks fails; a threshold for a scorer the report does not
    have is named; without kept results the message says how to see each failure."""
    def boom(ctx: Any) -> float:
        raise RuntimeError("down")

    scorers = [constant(0.2, scorer_id="low"),
               create_scorer(id="bad", description="d").generate_score(boom)]
    report = run_evals_sync([{"input": 1, "output": 1}], scorers, thresholds={"low": 0.5})
    with pytest.raises(AssertionError) as info:
        assert_passes(report, thresholds={"typo": 0.1})
    text = str(info.value)
    assert text.splitlines()[1:5] == [
        "  scorer 'bad' has no scored run (1 failed)",
        "  threshold low: mean 0.2, needs >= 0.5",
        "  too many failures: 1 failed scorer run(s), at most 0 allowed",
        "  threshold typo: no such scorer in the report (it has low, bad)",
    ]
    assert "keep_results=True" in text
    with pytest.raises(ScorerDefinitionError,
                       match=r"min_completion_rate\) must be a number in \[0, 1\], got 2"):
        assert_passes(report, min_completion_rate=2)




def test_a_loop_over_scorers_says_which_one_failed() -> None:
    """Given the scorer, assert_scored's failure table names it: in a loop over three scorers,
    the one below the bound is the one named, with its score."""
    scorers = [constant(0.9, scorer_id="fluency"), constant(0.2, scorer_id="accuracy"),
               constant(0.8, scorer_id="tone")]
    def check_all() -> None:
        for scorer in scorers:
            assert_scored(scorer.run_sync(input="q", output="a"), scorer=scorer, min_score=0.5)

    with pytest.raises(AssertionError) as info:
        check_all()
    text = str(info.value)
    assert text.startswith("accuracy: score 0.2 is below min_score 0.5\n")
    header, _, row = text.splitlines()[1:4]
    assert header.split(" | ")[0].strip() == "scorer"
    assert [cell.strip() for cell in row.split(" | ")[:2]] == ["accuracy", "0.2"]
    assert "fluency" not in text
    assert "tone" not in text


def test_the_scorer_may_be_named_by_its_id() -> None:
    """``scorer=`` takes an id as well; a failed run's table names the scorer either way, and
    anything else is a misuse naming the argument."""
    result = constant(0.1, scorer_id="s").run_sync(input="q", output="a")
    with pytest.raises(AssertionError, match=r"(?s)^judge-7: score 0\.1 .*\njudge-7 +\| 0\.1"):
        assert_scored(result, scorer="judge-7", min_score=0.5)
    with pytest.raises(ScorerDefinitionError, match="scorer"):
        assert_scored(result, scorer=3, min_score=0.5)  # type: ignore[arg-type]
