"""Test assertions on scorer results and eval reports that fail with a readable table."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from returns.result import Failure, Result, Success

from scorecore import Scorer, ScoreResult, ScorerRunError
from scorecore.evals import EvalReport, Threshold
from scorecore.validators import is_number, misuse

# describe_run_error also serves the pytest plugin, which imports it from here.
__all__ = ["assert_passes", "assert_scored"]

# The cause, last, says what to fix: it gets more room than the other cells.
_CELL = 60
_LAST_CELL = 240


def _cell(value: object, limit: int = _CELL) -> str:
    text = "-" if value is None else value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    cells = [[_cell(c, _LAST_CELL if i == len(row) - 1 else _CELL) for i, c in enumerate(row)]
             for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in cells)])


def describe_run_error(error: ScorerRunError) -> str:
    """The failed run as a table: scorer, the score and reason computed so far, and the cause.

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> def boom(ctx):
    ...     raise ValueError("no answer")
    >>> scorer = create_scorer(id="strict", description="d").generate_score(boom)
    >>> error = anyio.run(lambda: scorer.run(input="q", output="a")).failure()
    >>> print(describe_run_error(error))
    scorer | score | reason | cause
    -------+-------+--------+--------------------------------------------------
    strict | -     | -      | generate_score: step raised ValueError: no answer
    """
    partial = error.partial
    return _table(
        ("scorer", "score", "reason", "cause"),
        [(error.scorer_id, _score(partial.score), partial.reason,
          f"{error.failed_step}: {error.cause.describe()}")],
    )


def result_table(
    result: Result[ScoreResult[Any, Any], ScorerRunError], scorer_id: str | None = None
) -> str:
    """One scorer result as a table, for failure messages: a failed run's scorer, score, reason
    and cause; a successful run's score, reason and not-scorable cause, after its scorer when
    ``scorer_id`` is given (a ``ScoreResult`` does not know which scorer made it)."""
    if isinstance(result, Failure):
        return describe_run_error(result.failure())
    value = result.unwrap()
    marker = value.not_scorable
    cause = "-" if marker is None else f"not scorable at {marker.step}: {marker.reason}"
    row = (_score(value.score), value.reason, cause)
    if scorer_id is None:
        return _table(("score", "reason", "cause"), [row])
    return _table(("scorer", "score", "reason", "cause"), [(scorer_id, *row)])


def _scorer_id(scorer: Scorer[Any, Any] | str | None) -> str | None:
    if scorer is None or isinstance(scorer, str):
        return scorer
    if isinstance(scorer, Scorer):
        return scorer.id
    raise misuse("assert_scored(scorer)", scorer, "must be the Scorer that ran, or its id")


def _fail(message: str) -> AssertionError:
    return AssertionError(message)


def assert_scored(
    result: Result[ScoreResult[Any, Any], ScorerRunError],
    *,
    score: float | None = None,
    min_score: float | None = None,
    max_score: float | None = None,
    reason: str | re.Pattern[str] | None = None,
    not_scorable: bool = False,
    scorer: Scorer[Any, Any] | str | None = None,
) -> ScoreResult[Any, Any]:
    """Assert a scorer run succeeded (and, optionally, how); return its :class:`ScoreResult`.

    On failure the ``AssertionError`` shows what went wrong and the run as a table instead of
    a bare exception: for a failed run its scorer, score, reason and cause (the failed step
    and why), for a result not as expected its score, reason and not-scorable cause, and the
    scorer when ``scorer`` is given (so a loop over scorers says which one failed).

    Args:
        result: what ``scorer.run(...)`` returned.
        score: the exact score expected (compared with a relative tolerance of 1e-9).
        min_score: the least score accepted (inclusive).
        max_score: the greatest score accepted (inclusive).
        reason: the reason expected: a ``str`` must equal it, a compiled pattern must match
            somewhere in it (``re.search``).
        not_scorable: expect a not-scorable result instead of a score.
        scorer: the scorer that made ``result`` (or its id), named in the failure.

    Returns:
        The :class:`ScoreResult`, for further checks.

    Raises:
        AssertionError: the run failed, or its outcome is not the one expected.
        ScorerDefinitionError: ``result`` is not the ``Result`` of a run, or ``scorer`` is
            neither a scorer nor a ``str``.

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> half = create_scorer(id="half", description="d").generate_score(lambda ctx: 0.5)
    >>> assert_scored(anyio.run(lambda: half.run(input="q", output="a")), min_score=0.4).score
    0.5
    >>> assert_scored(anyio.run(lambda: half.run(input="q", output="a")), min_score=0.9)
    Traceback (most recent call last):
    ...
    AssertionError: score 0.5 is below min_score 0.9
    score | reason | cause
    ------+--------+------
    0.5   | -      | -
    """
    __tracebackhide__ = True
    scorer_id = _scorer_id(scorer)
    if isinstance(result, Failure):
        error = result.failure()
        if isinstance(error, ScorerRunError):
            raise _fail(f"the scorer run failed: {error}\n{describe_run_error(error)}")
        raise _fail(f"the scorer run failed: {error!r}")
    if not isinstance(result, Success):
        raise misuse("assert_scored(result)", result, "must be the Result of scorer.run(...)")
    value: ScoreResult[Any, Any] = result.unwrap()
    problems = list(_score_problems(value, score, min_score, max_score, not_scorable))
    if reason is not None:
        if isinstance(reason, re.Pattern):
            if value.reason is None or reason.search(value.reason) is None:
                problems.append(f"reason {value.reason!r} does not match {reason.pattern!r}")
        elif value.reason != reason:
            problems.append(f"reason {value.reason!r} is not {reason!r}")
    if problems:
        named = "" if scorer_id is None else f"{scorer_id}: "
        raise _fail(named + "; ".join(problems) + "\n" + result_table(result, scorer_id))
    return value


def _score_problems(
    value: ScoreResult[Any, Any],
    score: float | None,
    min_score: float | None,
    max_score: float | None,
    not_scorable: bool,
) -> Iterable[str]:
    if not_scorable:
        if value.not_scorable is None:
            yield f"expected a not-scorable result, got score {value.score!r}"
        return
    if value.not_scorable is not None or value.score is None:
        yield "expected a score, the result is not scorable"
        return
    got = value.score
    if score is not None and not math.isclose(got, score, rel_tol=1e-9, abs_tol=1e-12):
        yield f"score {got!r} is not {score!r}"
    if min_score is not None and got < min_score:
        yield f"score {got!r} is below min_score {min_score!r}"
    if max_score is not None and got > max_score:
        yield f"score {got!r} is above max_score {max_score!r}"


def _check_rate(value: object) -> float:
    if not is_number(value) or not 0 <= value <= 1:
        raise misuse("assert_passes(min_completion_rate)", value, "must be a number in [0, 1]")
    return float(value)


def assert_passes(
    report: EvalReport,
    *,
    min_completion_rate: float | None = None,
    thresholds: Mapping[str, float | Threshold] | None = None,
) -> None:
    """Assert an eval report passed, with extra bounds; fail with a readable table if not.

    The report must have passed its own checks (the verdict: items scored, the thresholds,
    gates and failure budget it was run with). On top of them:

    - ``thresholds`` (scorer id → least mean, or a :class:`~scorecore.evals.Threshold`)
      checks each scorer's mean in the report, as ``run_evals(thresholds=...)`` would;
    - ``min_completion_rate`` is the least share of each scorer's runs that must have
      completed, i.e. not failed (scored or not scorable, out of all of its runs). It is not
      ``scorecore compare``'s *pass rate* (the share of items whose score passes a bound).

    The ``AssertionError`` lists every failed check, a table of the scorers (mean, counts,
    completion rate) and, when the report kept its results
    (``run_evals(..., keep_results=True)``), a table of the failed runs: item, scorer, score,
    reason, cause.

    Raises:
        AssertionError: a check failed.
        ScorerDefinitionError: ``report`` is not an ``EvalReport``, ``min_completion_rate``
            not a number in [0, 1].
        ValueError: a threshold is out of range (as :class:`~scorecore.evals.Threshold` says).

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> from scorecore.evals import run_evals
    >>> half = create_scorer(id="half", description="d").generate_score(lambda ctx: 0.5)
    >>> report = anyio.run(lambda: run_evals([{"input": 1, "output": 1}], [half]))
    >>> assert_passes(report, min_completion_rate=1.0, thresholds={"half": 0.5})
    >>> assert_passes(report, thresholds={"half": 0.9})
    Traceback (most recent call last):
    ...
    AssertionError: eval report failed:
      threshold half: mean 0.5, needs >= 0.9
    <BLANKLINE>
    scorer | mean | scored | not scorable | failed | completed
    -------+------+--------+--------------+--------+----------
    half   | 0.5  | 1      | 0            | 0      | 100%
    """
    __tracebackhide__ = True
    if not isinstance(report, EvalReport):
        raise misuse("assert_passes(report)", report, "must be an EvalReport")
    rate = None if min_completion_rate is None else _check_rate(min_completion_rate)
    problems = list(report.failed_checks)
    summaries = {s.scorer_id: s for s in report.scorers}
    for scorer_id, bound in (thresholds or {}).items():
        threshold = bound if isinstance(bound, Threshold) else Threshold(min=bound)
        summary = summaries.get(scorer_id)
        if summary is None:
            problems.append(f"threshold {scorer_id}: no such scorer in the report "
                            f"(it has {', '.join(summaries) or 'none'})")
        elif not threshold.check(summary.mean):
            problems.append(f"threshold {scorer_id}: mean {_score(summary.mean)}, needs "
                            f"{threshold.describe()}")
    if rate is not None:
        for summary in report.scorers:
            completed = _share(summary.scored + summary.not_scorable, summary.total)
            if completed < rate:
                problems.append(f"{summary.scorer_id}: completion rate {completed:.1%} below "
                                f"min_completion_rate {rate:.1%} ({summary.failed} of "
                                f"{summary.total} runs failed)")
    if problems:
        raise _fail("eval report failed:\n" + "\n".join(f"  {p}" for p in problems)
                    + "\n\n" + _report_tables(report))


def _share(part: int, total: int) -> float:
    return 1.0 if total == 0 else part / total


def _report_tables(report: EvalReport) -> str:
    summary = _table(
        ("scorer", "mean", "scored", "not scorable", "failed", "completed"),
        [(s.scorer_id, _score(s.mean), str(s.scored), str(s.not_scorable), str(s.failed),
          f"{_share(s.scored + s.not_scorable, s.total):.0%}") for s in report.scorers],
    )
    if report.results is None:
        if report.failed_runs:
            summary += ("\n\n(run_evals(..., keep_results=True) lists each failed run "
                        "with its cause)")
        return summary
    failed = [
        (item.item_id or f"#{item.index}", outcome.scorer_id, _score(outcome.score),
         outcome.reason, _outcome_cause(outcome.run_error, outcome.error))
        for item in report.results for outcome in item.outcomes if outcome.status == "failed"
    ]
    if not failed:
        return summary
    return summary + "\n\nfailed runs:\n" + _table(
        ("item", "scorer", "score", "reason", "cause"), failed
    )


def _outcome_cause(run_error: ScorerRunError | None, error: str | None) -> str:
    if run_error is not None:
        return f"{run_error.failed_step}: {run_error.cause.describe()}"
    return error or "-"
