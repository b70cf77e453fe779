"""Failure causes: what a running batch knows and what its stored rows say give the same cause."""

from __future__ import annotations

from typing import Any

import anyio
import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure

from scorecore import (
    JudgeConfig,
    PromptStep,
    RunFailureCause,
    Scorer,
    ScorerRunError,
    StepFailed,
    create_scorer,
)
from scorecore.evals import ItemResult, ScoreRow, run_evals
from scorecore.evals._persistence._sanitize import clean_text
from scorecore.evals.engine import failure_kind
from scorecore.evals.results import ScorerOutcome
from scorecore_adapters.report import FailureCause, cause_of_outcome, cause_of_row
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.testing import ScriptedJudge, judge_error

SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}


def _raise(message: str) -> Any:
    def step(ctx: Any) -> Any:
        raise LookupError(message)
    return step


def failing_scorers(scorer_id: str, message: str) -> list[Scorer[Any, Any]]:
    """One scorer per way a run can fail, each id prefixed with ``scorer_id``."""
    judged = JudgeConfig(model=ScriptedJudge([judge_error(503, message=message)] * 20),
                         instructions="judge", max_processor_retries=0)
    invalid = JudgeConfig(model=ScriptedJudge(["not json"] * 20), instructions="judge")
    prompt = PromptStep(description="d", output_schema=SCHEMA, create_prompt=lambda c: "p")
    return [
        create_scorer(id=f"{scorer_id}/raise", description="d").analyze(_raise(message))
        .generate_score(lambda c: 1.0),
        # Wrong on purpose: a str score and an int reason (type-checked code cannot do this).
        create_scorer(id=f"{scorer_id}/score", description="d").generate_score(
            lambda c: message),  # type: ignore[arg-type, return-value]
        create_scorer(id=f"{scorer_id}/failure", description="d").analyze(
            lambda c: Failure(message)).generate_score(lambda c: 1.0),
        create_scorer(id=f"{scorer_id}/judge", description="d", judge=judged).analyze(prompt)
        .generate_score(lambda c: 1.0),
        create_scorer(id=f"{scorer_id}/invalid", description="d", judge=invalid)
        .analyze(prompt).generate_score(lambda c: 1.0),
        create_scorer(id=f"{scorer_id}/reason", description="d").generate_score(
            lambda c: 1.0).generate_reason(lambda c: 42),  # type: ignore[arg-type, return-value]
    ]


KINDS = ["raised LookupError", "invalid score", "step failed", "judge server",
         "judge output invalid", "invalid step value"]


async def _both(
    scorer_id: str, message: str, item: str, scorers: list[Scorer[Any, Any]] | None = None
) -> tuple[list[FailureCause], list[ScoreRow]]:
    live: list[FailureCause] = []

    def seen(result: ItemResult) -> None:
        live.extend(cause_of_outcome(o, item_error=result.error) for o in result.outcomes
                    if o.status == "failed")

    async with SqliteScoreStore(":memory:") as store:
        await run_evals([{"id": item, "input": "q", "output": "a"}],
                        scorers or failing_scorers(scorer_id, message), store=store,
                        batch_id="b", on_item_complete=seen)
        rows = await store.list_run("b")
    return live, rows


def _without_value(row: ScoreRow) -> ScoreRow:
    """``row`` as stored before rows kept the structured cause (kind and step only)."""
    metadata = dict(row.metadata or {})
    metadata["cause"] = {k: v for k, v in metadata["cause"].items() if k in ("kind", "step")}
    return attrs.evolve(row, metadata=metadata)


def _old(row: ScoreRow) -> ScoreRow:
    """``row`` as stored before rows kept the cause's kind (no ``metadata["cause"]``)."""
    metadata = {k: v for k, v in (row.metadata or {}).items() if k != "cause"}
    return attrs.evolve(row, metadata=metadata)


@settings(max_examples=25)
@given(scorer_id=st.text(min_size=1, max_size=20).filter(str.isprintable),
       message=st.text(max_size=80), item=st.text(min_size=1, max_size=10).filter(str.isprintable))
def test_running_and_stored_causes_agree(scorer_id: str, message: str, item: str) -> None:
    """Any scorer id (quotes, colons), any message: the stored row's cause equals the live one
    (up to the characters no store keeps), read from the stored cause; a row stored before rows
    kept the cause itself still gives the live kind and step from its stored kind."""
    live, rows = anyio.run(_both, scorer_id, message, item)
    assert sorted(c.kind for c in live) == sorted(KINDS)
    # Stores keep no NUL or lone surrogate: those become U+FFFD in the stored text (storable_row).
    kept = sorted((attrs.evolve(c, message=clean_text(c.message)) for c in live), key=repr)
    assert sorted((row.metadata or {})["cause"]["kind"] for row in rows) == sorted(KINDS)
    assert sorted((cause_of_row(row) for row in rows), key=repr) == kept
    older = [cause_of_row(_without_value(row)) for row in rows]
    assert sorted((c.kind, c.step) for c in older if c is not None) == sorted(
        (c.kind, c.step) for c in live)


def test_a_stored_kind_is_read_not_parsed() -> None:
    """A row's metadata["cause"] gives the kind even when the text says something else; a row
    without it is not parsed: its kind is "error" and its message the stored text."""
    text = "scorer 's' failed at step 'analyze' (completed: none): analyze raised KeyError: 'x'"
    row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
                   metadata={"error": text, "failedStep": "analyze",
                             "cause": {"kind": "judge network", "step": "analyze"}})
    assert cause_of_row(row) == FailureCause(kind="judge network", message=text, step="analyze")
    assert cause_of_row(_old(row)) == FailureCause(kind="error", message=text, step="analyze")


def test_an_old_row_without_a_stored_kind_is_not_parsed() -> None:
    """Rows written before the kind was stored keep their step and text; no kind is read back
    from the text (rewording a message can change no report)."""
    row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
                   metadata={"failedStep": "generate_score",
                             "error": "scorer 's' failed at step 'generate_score' (completed: "
                                      "none): generate_score must return a finite real number, "
                                      "got 'x' of type str"})
    cause = cause_of_row(row)
    assert cause is not None
    assert (cause.kind, cause.step) == ("error", "generate_score")
    assert cause.message == (row.metadata or {})["error"]


def test_a_kind_the_text_cannot_tell_is_stored() -> None:
    """An exception class defined in a function ('f.<locals>.OopsError') has a kind no parser of
    the text recovers; the stored row gives the running kind all the same."""
    class OopsError(Exception):
        pass

    def step(ctx: Any) -> Any:
        raise OopsError("judge output invalid")

    scorer = create_scorer(id="s", description="d").analyze(step).generate_score(lambda c: 1.0)
    live, rows = anyio.run(_both, "s", "", "1", [scorer])
    assert [c.kind for c in live] == [f"raised {OopsError.__qualname__}"]
    assert [cause_of_row(row) for row in rows] == live
    assert [cause_of_row(_old(row)) for row in rows] != live  # what the text alone gives


async def _live_and_rows(
    scorers: list[Scorer[Any, Any]], item: str = "1"
) -> tuple[dict[str, RunFailureCause], list[ScoreRow]]:
    live: dict[str, RunFailureCause] = {}

    def seen(result: ItemResult) -> None:
        for outcome in result.outcomes:
            if isinstance(outcome.run_error, ScorerRunError):
                live[outcome.scorer_id] = outcome.run_error.cause

    async with SqliteScoreStore(":memory:") as store:
        await run_evals([{"id": item, "input": "q", "output": "a"}], scorers, store=store,
                        batch_id="b", on_item_complete=seen)
        rows = await store.list_run("b")
    return live, rows


@settings(max_examples=10)
@given(message=st.text(max_size=40).map(clean_text))
def test_a_stored_row_reads_back_its_cause(message: str) -> None:
    """A failed run's row keeps its cause through the converter's tagged union: reading it
    back gives the cause the run failed with (every kind a scorer run can fail with here)."""
    live, rows = anyio.run(_live_and_rows, failing_scorers("s", message))
    assert len(live) == len(rows) == len(KINDS)
    for row in rows:
        stored = (row.metadata or {})["cause"]
        assert stored["value"]["cause"] == live[row.scorer_id].kind
        assert row.failure_cause() == live[row.scorer_id]


def test_a_step_failure_value_is_stored_as_json() -> None:
    """A step's ``Failure`` value is stored as JSON (an exception as its type and message), so
    the row keeps no object a store cannot hold and the report shows the run's message."""
    scorers: list[Scorer[Any, Any]] = [
        create_scorer(id="exc", description="d").analyze(
            lambda c: Failure(ValueError("bad json"))).generate_score(lambda c: 1.0),
        create_scorer(id="dict", description="d").analyze(
            lambda c: Failure({"why": "no numbers"})).generate_score(lambda c: 1.0),
    ]
    live, rows = anyio.run(_live_and_rows, scorers)
    by_id = {row.scorer_id: row for row in rows}
    assert "sanitized" not in (by_id["exc"].metadata or {})
    back = by_id["exc"].failure_cause()
    assert back == StepFailed(step="analyze", error="ValueError: bad json")
    assert by_id["dict"].failure_cause() == live["dict"]
    assert cause_of_row(by_id["exc"]) == cause_of_outcome_of(live["exc"], "analyze")


def cause_of_outcome_of(cause: RunFailureCause, step: str) -> FailureCause:
    return FailureCause(kind=failure_kind(cause), message=cause.describe(), step=step)


def test_a_row_stored_without_its_cause_value_still_reads() -> None:
    """A row written before rows kept the structured cause has none to read back; the report
    falls back to what it has: the stored kind and step, and the error text."""
    _, rows = anyio.run(_live_and_rows, failing_scorers("s", "boom"))
    for row in rows:
        old = _without_value(row)
        assert old.failure_cause() is None
        cause = cause_of_row(old)
        assert cause is not None
        assert (cause.kind, cause.step) == ((row.metadata or {})["cause"]["kind"],
                                            (row.metadata or {})["failedStep"])
        assert cause.message == (row.metadata or {})["error"]


def test_a_raising_target_is_its_own_kind_read_not_parsed() -> None:
    """An item whose target raised fails every scorer under kind "target raised", live and
    stored, from the item's failure kind; an item failing otherwise is "item" whatever its
    text says."""
    def target(item: Any) -> Any:
        raise ConnectionError("model endpoint timed out")

    live: list[FailureCause] = []
    results: list[ItemResult] = []

    def seen(result: ItemResult) -> None:
        results.append(result)
        live.extend(cause_of_outcome(o, item_error=result.error,
                                     item_error_kind=result.error_kind) for o in result.outcomes)

    async def main() -> list[ScoreRow]:
        async with SqliteScoreStore(":memory:") as store:
            await run_evals([{"id": "1", "input": "q"}], failing_scorers("s", "x")[:2],
                            target=target, store=store, batch_id="b", on_item_complete=seen,
                            max_failures=None)
            return await store.list_run("b")

    rows = anyio.run(main)
    assert [r.error_kind for r in results] == ["target_raised"]
    message = "target raised ConnectionError: model endpoint timed out"
    assert live == [FailureCause(kind="target raised", message=message)] * 2
    assert [cause_of_row(row) for row in rows] == live
    unreadable = ItemResult(index=0, item_id=None, run_id="b:#0", item=None,
                            error="target raised? no: missing field 'input'", error_kind="item")
    outcome = ScorerOutcome(scorer_id="s", status="failed", error=unreadable.error)
    assert cause_of_outcome(outcome, item_error=unreadable.error,
                            item_error_kind=unreadable.error_kind).kind == "item"
