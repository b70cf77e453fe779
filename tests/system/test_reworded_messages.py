"""Rewording a kernel message changes no report: failure kinds, the cause groups of ``eval``,
``show`` and the HTML report, and ``show --failures`` read causes as values, not as text."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore import (
    BudgetExhausted,
    JudgeConfig,
    PromptStep,
    Scorer,
    ScorerRunError,
    create_scorer,
)
from scorecore._core._causes import cause_classes
from scorecore.evals import ItemResult, ScoreRow, run_evals
from scorecore.evals.engine import failure_kind
from scorecore.judge import JudgeError
from scorecore.judge.economics import Budget
from scorecore.scorers import MemberFailure, panel
from scorecore_adapters.cli import main
from scorecore_adapters.report import FailureGroup, FailureTally, cause_of_outcome
from scorecore_adapters.report._scan import ReportBuild
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.testing import ScriptedJudge
from tests.adapters.report.test_causes import KINDS, failing_scorers

# Every message the kernel writes about a failed run: each cause's describe() (and a budget
# refusal's describe_limit()), a panel member's, a judge error's, and ScorerRunError's str().
KERNEL_MESSAGES: list[tuple[type[Any], str]] = [
    *((cls, "describe") for cls in cause_classes().values()),
    (BudgetExhausted, "describe_limit"),
    (MemberFailure, "describe"),
    (JudgeError, "describe"),
    (ScorerRunError, "__str__"),
]


def _reworded(original: Callable[[Any], str]) -> Callable[[Any], str]:
    # Another wording of the same fact: reversed, its separators changed, wrapped.
    return lambda self: "«" + original(self)[::-1].replace(";", "/").replace(":", "=") + "»"


def reword_every_kernel_message(monkeypatch: pytest.MonkeyPatch) -> None:
    for owner, name in KERNEL_MESSAGES:
        monkeypatch.setattr(owner, name, _reworded(getattr(owner, name)))


SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


def budget_scorer() -> Scorer[Any, Any]:
    """A judge scorer whose every call a 100-token budget refuses, each with its own amounts
    (the prompts differ in length)."""
    judge = JudgeConfig(model=ScriptedJudge([]), instructions="judge")
    prompt = PromptStep(description="d", output_schema=SCHEMA,
                        create_prompt=lambda c: f"rate {c.run.output}")
    return (create_scorer(id="budgeted", description="d", judge=judge).analyze(prompt)
            .generate_score(lambda c: 1.0))


def _group_key(group: FailureGroup) -> tuple[Any, ...]:
    return (group.cause.kind, group.cause.step, group.count, group.scorer_ids, group.item_ids)


def _show(db: Path, batch: str, *flags: str) -> dict[str, Any]:
    out = io.StringIO()
    assert main(["show", batch, "--store", f"sqlite:{db}", "--json", *flags], out=out,
                err=io.StringIO()) == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def _observe(db: Path) -> dict[str, Any]:
    """What a user sees of the failures of two batches: every kind of scorer failure, and
    budget refusals with different amounts."""
    live_kinds, live, rows = anyio.run(_run_batches, db)
    shown = {batch: _show(db, batch) for batch in ("all", "budget")}
    listed = {batch: _show(db, batch, "--failures") for batch in ("all", "budget")}
    return {
        "failure kinds": sorted(live_kinds),
        "eval groups": [_group_key(g) for g in live.groups()],
        "report groups": [_group_key(g) for g in _report_groups(rows)],
        "show groups": {batch: [(g["kind"], g["step"], g["count"], g["scorerIds"], g["itemIds"])
                                for g in data["failureCauses"]]
                        for batch, data in shown.items()},
        "show --failures": {batch: [(r["itemId"], r["scorerId"], r["cause"]["kind"],
                                     r["cause"]["step"]) for r in data["rows"]]
                            for batch, data in listed.items()},
        "messages": sorted(g["message"] for data in shown.values()
                           for g in data["failureCauses"]),
    }


def _report_groups(rows: list[ScoreRow]) -> list[FailureGroup]:
    """The failure groups the HTML report shows for ``rows``."""
    with closing(ReportBuild({r.scorer_id for r in rows}, thresholds={}, max_failures=0,
                             max_failure_rate=None, baseline={})) as build:
        for scan in build.scans():
            scan.add(rows)
            scan.end()
        assert build.digest is not None
        return build.digest.tally.groups()


async def _run_batches(
    db: Path,
) -> tuple[list[tuple[str, str, str]], FailureTally, list[ScoreRow]]:
    live_kinds: list[tuple[str, str, str]] = []
    live = FailureTally()

    def seen(result: ItemResult) -> None:
        for outcome in result.outcomes:
            if outcome.status != "failed":
                continue
            if isinstance(outcome.run_error, ScorerRunError):
                live_kinds.append((outcome.scorer_id, result.run_id,
                                   failure_kind(outcome.run_error.cause)))
            live.add(outcome.scorer_id, result.item_id or "",
                     cause_of_outcome(outcome, item_error=result.error))

    items = [{"id": f"i{n}", "input": "q", "output": "a" * (n + 1)} for n in range(4)]
    async with SqliteScoreStore(str(db)) as store:
        failing = failing_scorers("s", "boom")
        jury = panel(failing[:3], id="jury", min_successful=2)  # every member fails
        await run_evals(items, [*failing, jury], store=store, batch_id="all",
                        on_item_complete=seen, max_failures=None)
        await run_evals(items, [budget_scorer()], store=store, batch_id="budget",
                        budget=Budget(max_tokens=100), concurrency=1, on_item_complete=seen,
                        max_failures=None)
        rows = [*await store.list_run("all"), *await store.list_run("budget")]
    return live_kinds, live, rows


def test_rewording_every_kernel_message_changes_no_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each cause's message, a budget refusal's limit, a judge error's and the run error's
    text, all reworded: the kinds, the groups (eval's, show's and the report's) and show
    --failures stay the same; only the messages shown are the new wording."""
    before = _observe(tmp_path / "before.db")
    assert {kind for _, _, kind in before["failure kinds"]} == {
        *KINDS, "budget exhausted", "panel failed"}
    budget_groups = before["show groups"]["budget"]
    assert [(kind, count) for kind, _, count, _, _ in budget_groups] == [("budget exhausted", 4)]

    reword_every_kernel_message(monkeypatch)
    after = _observe(tmp_path / "after.db")
    assert all(message.startswith("«") for message in after.pop("messages"))
    before.pop("messages")
    assert after == before
