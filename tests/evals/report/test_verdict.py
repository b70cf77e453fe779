"""The verdict never passes what was not scored.

It fails when a scorer has no scored run among the items it applies to, or when more scorer
runs failed than ``max_failures`` (default 0) / ``max_failure_rate`` allow. Not-scorable runs
never count as failed.
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from scorecore import create_scorer, not_scorable
from scorecore.evals import EvalConfigError, ItemResult, run_evals
from scorecore.evals.engine import ReportFold
from scorecore.evals.results import ScorerOutcome
from scorecore.scorers import TEXT, pairwise
from scorecore_adapters.cli import main
from scorecore_adapters.testing import FunctionJudge


def _scorer(scorer_id: str = "judge") -> Any:
    """Scores 1.0, raises on output "crash", is not scorable on output "skip"."""

    def score(ctx: Any) -> Any:
        if ctx.run.output == "crash":
            raise RuntimeError("fake judge bug")
        if ctx.run.output == "skip":
            return not_scorable("no reference")
        return 1.0

    return create_scorer(id=scorer_id, description="d").generate_score(score)


def _items(*outputs: str) -> list[dict[str, str]]:
    return [{"input": "q", "output": o} for o in outputs]


@pytest.mark.anyio
async def test_a_batch_where_every_run_failed_fails_even_with_failures_allowed(
    anyio_backend: str,
) -> None:
    """59 of 59 runs failed: the verdict fails and says the scorer scored nothing, whatever
    failure budget was given."""
    report = await run_evals(_items(*["crash"] * 59), [_scorer("faithfulness")],
                             max_failures=None)
    assert report.verdict == "failed"
    assert report.verdict_reason == "scorer 'faithfulness' has no scored run (59 failed)"
    assert report.to_json()["verdictReason"] == report.verdict_reason


@pytest.mark.anyio
async def test_by_default_one_failed_run_fails_the_verdict(anyio_backend: str) -> None:
    """max_failures defaults to 0: any failed run fails the verdict, and the reason says so."""
    report = await run_evals(_items("fine", "fine", "crash"), [_scorer()])
    assert report.max_failures == 0
    assert report.verdict == "failed"
    assert report.verdict_reason == (
        "too many failures: 1 failed scorer run(s), at most 0 allowed")


@pytest.mark.anyio
async def test_not_scorable_runs_never_count_as_failed(anyio_backend: str) -> None:
    """Not-scorable runs are not failures: a scorer that applies to some items passes, and so
    does one that applies to none (every run not scorable)."""
    mixed = await run_evals(_items("fine", "skip", "skip"), [_scorer()])
    assert (mixed.verdict, mixed.verdict_reason, mixed.failed_runs) == ("passed", None, 0)
    none_apply = await run_evals(_items("skip", "skip"), [_scorer("a"), ])
    assert none_apply.verdict == "passed"


@pytest.mark.anyio
async def test_a_scorer_with_no_scored_run_among_the_items_it_applies_to_fails(
    anyio_backend: str,
) -> None:
    """Not-scorable items aside, every run of the scorer failed: no scored run, verdict failed."""
    report = await run_evals(_items("skip", "crash", "crash"), [_scorer()], max_failures=10)
    assert report.verdict_reason == "scorer 'judge' has no scored run (2 failed, 1 not scorable)"


@pytest.mark.anyio
async def test_an_empty_batch_fails(anyio_backend: str) -> None:
    """No item at all: nothing was scored, so the verdict fails."""
    report = await run_evals([], [_scorer()])
    assert (report.verdict, report.verdict_reason) == ("failed", "the batch has no items")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("crashes", "verdict"), [(0, "passed"), (1, "passed"), (2, "failed")]
)
async def test_max_failure_rate_relaxes_the_default(
    anyio_backend: str, crashes: int, verdict: str
) -> None:
    """max_failure_rate=0.05 over 20 runs tolerates 1 failed run, not 2 (max_failures stays 0)."""
    report = await run_evals(_items(*["crash"] * crashes, *["fine"] * (20 - crashes)),
                             [_scorer()], max_failure_rate=0.05)
    assert report.verdict == verdict
    if verdict == "failed":
        assert report.verdict_reason == (
            "too many failures: 2 failed scorer run(s) of 20 (10.0%), at most 0 or 5.0% allowed")
    assert report.to_json()["maxFailureRate"] == 0.05


@pytest.mark.anyio
async def test_the_reason_is_one_line_and_counts_the_other_checks(anyio_backend: str) -> None:
    """Several checks failed: the reason is the first one and how many more there are."""
    report = await run_evals(_items("crash", "crash"), [_scorer("a"), _scorer("b")])
    assert report.failed_checks[:2] == ("scorer 'a' has no scored run (2 failed)",
                                        "scorer 'b' has no scored run (2 failed)")
    assert report.verdict_reason == (
        "scorer 'a' has no scored run (2 failed) (and 2 more failed check(s))")
    assert "\n" not in report.verdict_reason


@pytest.mark.anyio
@pytest.mark.parametrize("rate", [-0.1, 1.5, math.nan, True, "5%"])
async def test_a_bad_failure_rate_is_refused(anyio_backend: str, rate: object) -> None:
    """max_failure_rate must be a number in [0, 1]; the error names the field and the value."""
    with pytest.raises(EvalConfigError, match=r"max_failure_rate") as caught:
        await run_evals(_items("fine"), [_scorer()], max_failure_rate=rate)  # type: ignore[arg-type]
    assert caught.value.field == "max_failure_rate"


def test_the_fold_applies_the_same_rule() -> None:
    """ReportFold (used by other runners, Ray's included) gives the same verdict and reason."""
    fold = ReportFold(("judge",), max_failures=None)
    for index in range(3):
        fold.add(ItemResult(index=index, item_id=None, run_id=f"b:#{index}", item=None,
                            outcomes=(ScorerOutcome(scorer_id="judge", status="failed"),)))
    report = fold.report(batch_id="b", duration=0.0)
    assert report.verdict_reason == "scorer 'judge' has no scored run (3 failed)"
    assert ReportFold(("judge",)).report(batch_id="b", duration=0.0).verdict == "failed"


SCORERS = '''
from scorecore import create_scorer

def score(ctx):
    if ctx.run.output == "crash":
        raise RuntimeError("fake judge bug")
    return 1.0

judge = create_scorer(id="faithfulness", description="d").generate_score(score)
steady = create_scorer(id="steady", description="d").generate_score(lambda ctx: 1.0)
'''


def _cli(tmp_path: Path, outputs: list[str], *flags: str) -> tuple[int, str, str]:
    scorers = tmp_path / "gate_scorers.py"
    scorers.write_text(SCORERS)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"input": "q", "output": o}) + "\n" for o in outputs))
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", str(scorers), "--data", str(data), "--no-cache",
                 "--store", f"sqlite:{tmp_path / 's.db'}", *flags], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_every_judged_run_failed_exits_one_with_the_reason(tmp_path: Path) -> None:
    """The issue's case from the command line: exit 1, one line saying why, in the JSON too."""
    report = tmp_path / "r.json"
    code, out, _ = _cli(tmp_path, ["crash"] * 59, "--max-failures", "1000", "--output",
                        str(report))
    assert code == 1
    assert out.splitlines()[-1] == (
        "verdict: failed — scorer 'faithfulness' has no scored run (59 failed)")
    document = json.loads(report.read_text())
    assert (document["verdict"], document["exitCode"]) == ("failed", 1)
    assert document["verdictReason"] == "scorer 'faithfulness' has no scored run (59 failed)"


def test_cli_any_failure_fails_by_default_and_a_rate_relaxes_it(tmp_path: Path) -> None:
    """Without flags one failed run exits 1; --max-failure-rate 0.05 tolerates 1 of 40 runs."""
    outputs = ["crash", *["fine"] * 19]
    code, out, _ = _cli(tmp_path, outputs, "--batch-id", "strict")
    assert code == 1
    assert "verdict: failed — too many failures: 1 failed scorer run(s)" in out
    code, out, _ = _cli(tmp_path, outputs, "--batch-id", "relaxed", "--max-failure-rate", "0.05")
    assert code == 0, out
    assert out.splitlines()[-1] == "verdict: passed"


@pytest.mark.parametrize("rate", ["-0.1", "1.5", "nan", "x"])
def test_cli_bad_failure_rate_is_a_usage_error(tmp_path: Path, rate: str) -> None:
    """--max-failure-rate outside [0, 1] is a one-line usage error naming the value."""
    code, _, err = _cli(tmp_path, ["fine"], "--max-failure-rate", rate)
    assert code == 2
    assert f"--max-failure-rate: expected a number in [0, 1], got {rate!r}" in err


def _positional(on_position_bias: str = "not_scorable") -> Any:
    """A pairwise scorer whose judge always prefers the answer shown first (position bias)."""
    judge = FunctionJudge(lambda request: {"reason": "A reads better", "winner": "A"})
    return pairwise(judge, criteria="correctness", shape=TEXT, id="ab",
                    on_position_bias=on_position_bias)  # type: ignore[arg-type]


def _pairs(n: int, *, baseline: bool = True) -> list[dict[str, Any]]:
    return [{"id": f"q{i}", "input": "q", "output": f"new {i}",
             **({"baseline_output": f"old {i}"} if baseline else {})} for i in range(n)]


@pytest.mark.anyio
async def test_runs_the_judge_could_not_decide_fail_the_verdict(anyio_backend: str) -> None:
    """A judge that follows position on every item decides nothing: 0 scored, 10 not scorable
    is a failed verdict, and the reason says the judge could not decide."""
    report = await run_evals(_pairs(10), [_positional()])
    summary = report.summary("ab")
    assert (summary.scored, summary.not_scorable, summary.failed) == (0, 10, 0)
    assert (summary.undecided, dict(summary.undecided_by)) == (10, {"position_bias": 10})
    assert report.verdict == "failed"
    assert report.failed_checks == (
        "scorer 'ab' has no scored run (10 undecided by the judge (10 position bias))",
        "too many failures: 10 scorer run(s) failed or undecided by the judge (0 failed, "
        "10 position bias), at most 0 allowed",
    )
    assert report.undecided_runs == 10
    assert report.to_json()["scorers"][0]["undecidedByJudge"] == {"position_bias": 10}


@pytest.mark.anyio
async def test_undecided_runs_count_against_the_failure_budget(anyio_backend: str) -> None:
    """Beside a scorer that scores, 10 undecided runs of 20 fail the default budget, pass a
    budget of 10, and fail a rate of 0.2 (10 of 20 runs is 50 %)."""
    plain = create_scorer(id="plain", description="d").generate_score(lambda ctx: 1.0)
    strict = await run_evals(_pairs(10), [_positional(), plain], max_failures=10)
    assert strict.failed_checks == ("scorer 'ab' has no scored run (10 undecided by the judge "
                                    "(10 position bias))",)
    mixed = [*_pairs(10), *({"id": f"s{i}", "input": "q", "output": "same",
                             "baseline_output": "same"} for i in range(10))]
    # "same" vs "same": a consistent tie in both orders is a decision (scored 0.5).
    judge = FunctionJudge(lambda request: {"reason": "r", "winner": "A"}
                          if "new" in request.messages[-1].content else
                          {"reason": "r", "winner": "tie"})
    ab = pairwise(judge, criteria="c", shape=TEXT, id="ab", on_position_bias="not_scorable")
    budget = await run_evals(mixed, [ab], max_failures=10)
    assert (budget.verdict, budget.summary("ab").scored) == ("passed", 10)
    over = await run_evals(mixed, [ab], max_failures=9)
    assert over.verdict_reason == ("too many failures: 10 scorer run(s) failed or undecided "
                                   "by the judge (0 failed, 10 position bias), at most 9 "
                                   "allowed")
    rate = await run_evals(mixed, [ab], max_failure_rate=0.2)
    assert rate.verdict_reason == (
        "too many failures: 10 scorer run(s) failed or undecided by the judge (0 failed, "
        "10 position bias) of 20 (50.0%), at most 0 or 20.0% allowed")


@pytest.mark.anyio
async def test_a_tie_scored_as_such_or_an_item_that_does_not_apply_never_counts(
    anyio_backend: str,
) -> None:
    """Position bias scored as a tie (the default) is a decision; an item without a baseline
    does not apply: neither counts against the budget."""
    tie = await run_evals(_pairs(4), [_positional("tie")])
    assert (tie.verdict, tie.summary("ab").scored) == ("passed", 4)
    no_baseline = await run_evals(_pairs(3, baseline=False), [_positional()])
    assert (no_baseline.verdict, no_baseline.summary("ab").not_scorable,
            no_baseline.undecided_runs) == ("passed", 3, 0)


PAIRWISE = '''
from scorecore.scorers import TEXT, pairwise
from scorecore_adapters.testing import FunctionJudge

ab = pairwise(FunctionJudge(lambda request: {"reason": "A reads better", "winner": "A"}),
              criteria="correctness", shape=TEXT, id="ab", on_position_bias="not_scorable")
'''


def test_cli_verdict_line_says_the_judge_could_not_decide(tmp_path: Path) -> None:
    """``scorecore eval`` exits 1 and its verdict line names the undecided runs; the HTML
    report of the stored batch and a resumed batch say the same."""
    scorers = tmp_path / "ab_scorers.py"
    scorers.write_text(PAIRWISE)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in _pairs(10)))
    store = f"sqlite:{tmp_path / 's.db'}"
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", str(scorers), "--data", str(data), "--store", store, "--batch-id",
                 "b", "--max-failures", "10"], out=out, err=err)
    assert code == 1, err.getvalue()
    assert out.getvalue().splitlines()[-1] == (
        "verdict: failed — scorer 'ab' has no scored run (10 undecided by the judge "
        "(10 position bias))")
    assert re.search(r"^ab +- +0 +10 \(10 undecided\) +0$", out.getvalue(), re.MULTILINE)
    page = tmp_path / "r.html"
    assert main(["report", "b", "--store", store, "-o", str(page)], out=io.StringIO(),
                err=io.StringIO()) == 0
    assert '<span class="verdict failed" id="verdict">failed</span>' in page.read_text()
    out = io.StringIO()
    code = main(["eval", str(scorers), "--data", str(data), "--store", store, "--resume", "b",
                 "--max-failures", "10"], out=out, err=io.StringIO())
    assert code == 1
    assert "10 undecided by the judge" in out.getvalue().splitlines()[-1]
