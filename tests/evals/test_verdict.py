"""The verdict never passes what was not scored (design.md §10.3).

It fails when a scorer has no scored run among the items it applies to, or when more scorer
runs failed than ``max_failures`` (default 0) / ``max_failure_rate`` allow. Not-scorable runs
never count as failed.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from scorecore import create_scorer, not_scorable
from scorecore.evals import EvalConfigError, ItemResult, run_evals
from scorecore.evals.engine import ReportFold
from scorecore.evals.results import ScorerOutcome
from scorecore_adapters.cli import main


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
