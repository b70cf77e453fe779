"""Trace and live scores reach a ScoreStore through store_sink / ScoreRow.from_record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore import create_scorer, not_scorable
from scorecore.evals import ScoreRow, store_sink
from scorecore.evals.store import row_id
from scorecore.live import LiveScorer, live_scoring, scored
from scorecore.traces import ScoreRecord, score_trace, score_traces
from scorecore.traces._sinks import deliver
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.testing import virtual_runtime

pytestmark = pytest.mark.anyio

KEY = "sk-proj-Abc123def456ghi789jkl012"

SPAN: dict[str, Any] = {
    "spanId": "tool-1", "spanType": "tool_call", "startedAt": "2025-01-01T00:00:00Z",
    "entityId": "weather", "entityName": "Weather", "input": {"city": "Paris"},
    "output": "Sunny",
}
TRACE = {"traceId": "t-1", "spans": [SPAN]}


def length_scorer(scorer_id: str = "length") -> Any:
    return create_scorer(id=scorer_id, description="Output length").generate_score(
        lambda ctx: float(len(ctx.run.output))
    )


async def test_score_trace_saves_a_mastra_shaped_row(anyio_backend: str, tmp_path: Path):
    """A trace score is stored with source TEST, the span's entity and a stable row id."""
    runtime, _ = virtual_runtime()
    async with SqliteScoreStore(tmp_path / "scores.db") as store:
        result = await score_trace(length_scorer(), TRACE, runtime=runtime,
                                   sink=store_sink(store))
        assert result.unwrap().score == 5.0
        rows = await store.list_run("t-1")
    assert len(rows) == 1
    row = rows[0]
    assert (row.id, row.scorer_id, row.run_id, row.batch_id) == (
        row_id("run-1", "length"), "length", "run-1", "t-1")
    assert (row.status, row.score, row.source) == ("scored", 5.0, "TEST")
    assert (row.entity_type, row.entity_id, row.entity) == (
        "tool_call", "weather", {"traceId": "t-1", "spanId": "tool-1"})
    assert (row.trace_id, row.span_id) == ("t-1", "tool-1")
    assert (row.input, row.output) == ({"city": "Paris"}, "Sunny")
    assert row.scorer == {"id": "length", "name": "length", "description": "Output length",
                          "hasJudge": False}
    assert row.metadata == {"status": "scored", "scoreSource": "trace"}
    assert row.created_at is not None


async def test_score_traces_batch_and_source_can_be_chosen(anyio_backend: str, tmp_path: Path):
    """``batch_id`` groups a batch's rows; saving a record twice keeps one row per pair."""
    runtime, _ = virtual_runtime()
    other = {"traceId": "t-2", "spans": [{**SPAN, "output": "Rain"}]}
    async with SqliteScoreStore(tmp_path / "scores.db") as store:
        sink = store_sink(store, batch_id="nightly", source="LIVE")
        summary = await score_traces(length_scorer(), [TRACE, other], runtime=runtime,
                                     sink=sink)
        assert summary.scored_count == 2
        rows = await store.list_run("nightly")
        record = ScoreRecord(scorer_id="length", scorer_name="length", source="trace",
                             result=summary.results[0].outcome.unwrap(), trace_id="t-1",
                             span_id="tool-1")
        await deliver(sink, record)
        again = await store.list_run("nightly")
    assert sorted((r.trace_id, r.score, r.source) for r in rows) == [
        ("t-1", 5.0, "LIVE"), ("t-2", 4.0, "LIVE")]
    assert len(again) == 2


async def test_live_scores_are_saved_with_secrets_redacted(anyio_backend: str, tmp_path: Path):
    """``scored(..., sink=store_sink(store))`` stores LIVE rows; no secret reaches the file."""
    runtime, _ = virtual_runtime()
    path = tmp_path / "scores.db"
    async with SqliteScoreStore(path) as store:
        sink = store_sink(store)

        @scored(length_scorer(), length_scorer("length-2"), sink=sink, runtime=runtime,
                name="app:answer", trace_id_from=lambda question, **_: f"trace-{question}")
        async def answer(question: str, *, api_key: str) -> str:
            return f"answer to {question}"

        live = LiveScorer(scorers=[length_scorer()], sink=sink, runtime=runtime)
        async with live_scoring() as scope:
            assert await answer("q", api_key=KEY) == "answer to q"
            assert live.submit(input="i", output="out", trace_id="trace-9", entity="rag/step",
                               request_context={"user": "u1", "Authorization": f"Bearer {KEY}"})
        assert scope.errors == ()
        call_rows = await store.list_run("trace-q")
        step_rows = await store.list_run("trace-9")
    assert sorted(r.scorer_id for r in call_rows) == ["length", "length-2"]
    row = call_rows[0]
    assert (row.source, row.entity_type, row.entity_id, row.trace_id) == (
        "LIVE", "function", "app:answer", "trace-q")
    assert row.id == row_id(row.run_id, row.scorer_id)
    assert row.entity == {"id": "app:answer", "name": "app:answer"}
    assert row.input == {"question": "q", "api_key": "[REDACTED]"}
    assert row.output == "answer to q"
    [step] = step_rows
    assert (step.source, step.trace_id, step.entity_id, step.score) == (
        "LIVE", "trace-9", "rag/step", 3.0)
    assert step.request_context == {"user": "u1", "Authorization": "[REDACTED]"}
    assert KEY.encode() not in _files(tmp_path)


def _files(folder: Path) -> bytes:
    """Everything on disk in ``folder`` (the database and its WAL)."""
    return b"".join(p.read_bytes() for p in folder.iterdir())


def test_from_record_not_scorable_and_redacted_context() -> None:
    """A not-scorable result is a not_scorable row; its contexts are redacted."""
    scorer = create_scorer(id="ns", description="d").generate_score(
        lambda ctx: not_scorable("no answer"))
    result = anyio.run(lambda: scorer.run(
        input="q", output="", run_id="r1", ground_truth={"token": KEY},
        request_context={"openai_key": KEY, "locale": "fr"},
    )).unwrap()
    row = ScoreRow.from_record(ScoreRecord(scorer_id="ns", scorer_name="ns", source="live",
                                           result=result, entity_id="f"))
    assert (row.status, row.score, row.reason, row.batch_id) == (
        "not_scorable", None, "no answer", "r1")
    assert row.metadata is not None
    assert row.metadata["notScorable"]["reason"] == "no answer"
    assert row.request_context == {"openai_key": "[REDACTED]", "locale": "fr"}
    assert row.additional_context == {"groundTruth": {"token": "[REDACTED]"}}
    assert KEY not in repr(row)
