"""Failure causes: what a running batch knows and what its stored rows say give the same cause."""

from __future__ import annotations

from typing import Any

import anyio
import attrs
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure

from scorecore import JudgeConfig, PromptStep, Scorer, create_scorer
from scorecore.evals import ItemResult, ScoreRow, run_evals
from scorecore.evals._storable import clean_text
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


def _old(row: ScoreRow) -> ScoreRow:
    """``row`` as stored before rows kept the cause's kind (no ``metadata["cause"]``)."""
    metadata = {k: v for k, v in (row.metadata or {}).items() if k != "cause"}
    return attrs.evolve(row, metadata=metadata)


@settings(max_examples=25)
@given(scorer_id=st.text(min_size=1, max_size=20).filter(str.isprintable),
       message=st.text(max_size=80), item=st.text(min_size=1, max_size=10).filter(str.isprintable))
def test_running_and_stored_causes_agree(scorer_id: str, message: str, item: str) -> None:
    """Any scorer id (quotes, colons), any message: the stored row's cause equals the live one
    (up to the characters no store keeps), read from the stored kind and, for rows stored
    before rows kept it, from the text alone."""
    live, rows = anyio.run(_both, scorer_id, message, item)
    assert sorted(c.kind for c in live) == sorted(KINDS)
    # Stores keep no NUL or lone surrogate: those become U+FFFD in the stored text (storable_row).
    kept = sorted((attrs.evolve(c, message=clean_text(c.message)) for c in live), key=repr)
    assert sorted((row.metadata or {})["cause"]["kind"] for row in rows) == sorted(KINDS)
    assert sorted((cause_of_row(row) for row in rows), key=repr) == kept
    assert sorted((cause_of_row(_old(row)) for row in rows), key=repr) == kept


def test_a_stored_kind_is_read_not_parsed() -> None:
    """A row's metadata["cause"] gives the kind even when the text says something else."""
    row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
                   metadata={"error": "scorer 's' failed at step 'analyze' (completed: none): "
                                      "analyze raised KeyError: 'x'",
                             "failedStep": "analyze",
                             "cause": {"kind": "judge network", "step": "analyze"}})
    assert cause_of_row(row) == FailureCause(kind="judge network",
                                             message="analyze raised KeyError: 'x'",
                                             step="analyze")
    assert cause_of_row(_old(row)) == FailureCause(kind="raised KeyError",
                                                   message="analyze raised KeyError: 'x'",
                                                   step="analyze")


def test_an_old_row_without_a_stored_kind_is_parsed() -> None:
    """Rows written before the kind was stored still group by the kind read from their text."""
    row = ScoreRow(id="r", scorer_id="s", run_id="b:1", batch_id="b", status="failed",
                   metadata={"failedStep": "generate_score",
                             "error": "scorer 's' failed at step 'generate_score' (completed: "
                                      "none): generate_score must return a finite real number, "
                                      "got 'x' of type str"})
    cause = cause_of_row(row)
    assert cause is not None
    assert (cause.kind, cause.step) == ("invalid score", "generate_score")


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
