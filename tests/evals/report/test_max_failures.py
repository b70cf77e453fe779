"""A batch can be told how many failed scorer runs it tolerates before its verdict fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scorecore import create_scorer
from scorecore.evals import EvalConfigError, run_evals
from scorecore_adapters.cli import main


def _scorer() -> Any:
    def score(ctx: Any) -> float:
        if ctx.run.output == "crash":
            raise RuntimeError("boom")
        return 1.0

    return create_scorer(id="s", description="d").generate_score(score)


DATA = [{"input": "q", "output": "fine"}, {"input": "q", "output": "crash"}]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("max_failures", "verdict"), [(None, "passed"), (1, "passed"), (0, "failed")]
)
async def test_failures_fail_the_verdict_only_beyond_the_budget(
    anyio_backend: str, max_failures: int | None, verdict: str
) -> None:
    """One failed run passes with no budget or a budget of 1, and fails with 0."""
    report = await run_evals(DATA, [_scorer()], max_failures=max_failures)
    assert report.failed_runs == 1
    assert report.verdict == verdict
    failure_lines = [c for c in report.failed_checks if c.startswith("too many failures")]
    assert len(failure_lines) == (verdict == "failed")
    assert report.to_json()["failedRuns"] == 1


@pytest.mark.anyio
async def test_a_crashing_target_counts_against_the_budget(anyio_backend: str) -> None:
    """A target that raises fails the item for every scorer; with max_failures=0 the batch fails."""

    async def agent(item: Any) -> str:
        raise ValueError("agent down")

    report = await run_evals([{"input": "q"}], [_scorer()], target=agent, max_failures=0)
    assert report.failed_items == 1
    assert report.verdict == "failed"


@pytest.mark.anyio
async def test_negative_budget_is_rejected(anyio_backend: str) -> None:
    """max_failures must be >= 0; the error names the field and the value."""
    with pytest.raises(EvalConfigError, match=r"max_failures.*-1"):
        await run_evals(DATA, [_scorer()], max_failures=-1)


def test_cli_max_failures_zero_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`scorecore eval --max-failures 0` exits 1 when a scorer run failed, 0 with a budget of 1."""
    scorers = tmp_path / "scorers.py"
    scorers.write_text(
        "from scorecore import create_scorer\n"
        "def score(ctx):\n"
        "    if ctx.run.output == 'crash':\n"
        "        raise RuntimeError('boom')\n"
        "    return 1.0\n"
        "s = create_scorer(id='s', description='d').generate_score(score)\n"
    )
    data = tmp_path / "data.jsonl"
    data.write_text('{"input": "q", "output": "fine"}\n{"input": "q", "output": "crash"}\n')
    store = f"sqlite:{tmp_path / 'scores.db'}"
    base = ["eval", str(scorers), "--data", str(data), "--store", store]
    assert main([*base, "--max-failures", "0"]) == 1
    assert "too many failures: 1 failed scorer run(s), at most 0 allowed" in capsys.readouterr().out
    assert main([*base, "--max-failures", "1"]) == 0
