"""One table of result fields: Mastra's JSON keys, score rows and stored columns agree."""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given

from scorecore import to_mastra_json
from scorecore._core._mastra_json import RESULT_FIELD, RESULT_FIELDS
from scorecore._core._redact import redact_secrets
from scorecore._core._values import ScoreResult
from scorecore.evals import ScoreRow
from scorecore.evals._persistence._sanitize import Sanitizer
from scorecore.evals.store import SCORE_COLUMNS
from scorecore.traces import ScoreRecord
from scorecore_adapters.storage import PostgresScoreStore, SqliteScoreStore
from tests import strategies as sts
from tests.evals.persistence.test_storage import DSN, KINDS

# Mastra's mastra_scorers columns (core:src/storage/constants.ts, see docs/storage.md).
MASTRA_COLUMNS = {
    "id", "scorerId", "traceId", "spanId", "runId", "scorer", "preprocessStepResult",
    "extractStepResult", "analyzeStepResult", "score", "reason", "metadata", "preprocessPrompt",
    "extractPrompt", "generateScorePrompt", "generateReasonPrompt", "analyzePrompt",
    "reasonPrompt", "input", "output", "additionalContext", "requestContext", "entityType",
    "entity", "entityId", "source", "resourceId", "threadId", "organizationId", "projectId",
    "batchId", "datasetId", "datasetItemId", "createdAt", "updatedAt",
}


def test_every_row_attribute_has_one_column() -> None:
    """SCORE_COLUMNS lists each ScoreRow attribute once, in order, under a distinct name."""
    assert [c.attr for c in SCORE_COLUMNS] == [f.name for f in attrs.fields(ScoreRow)]
    assert len({c.name for c in SCORE_COLUMNS}) == len(SCORE_COLUMNS)


def test_result_columns_are_named_by_their_mastra_json_key() -> None:
    """A row attribute that is a result field is stored under that field's Mastra key."""
    shared = [c for c in SCORE_COLUMNS if c.attr in RESULT_FIELD]
    assert {c.attr for c in shared} == {
        f.name for f in RESULT_FIELDS if f.stored == "column"
    }
    for column in shared:
        assert column.name == RESULT_FIELD[column.attr].key


def test_result_fields_cover_the_result_and_its_run() -> None:
    """The table lists every field of ScoreResult and of its run (extra keys aside)."""
    from scorecore._core._values import ScorerRun  # noqa: PLC0415 - only here

    names = {f.name for f in RESULT_FIELDS}
    assert names == (
        {f.name for f in attrs.fields(ScoreResult) if f.name != "run"}
        | {f.name for f in attrs.fields(ScorerRun) if f.name != "extra"}
    )


@pytest.mark.parametrize("kind", KINDS)
def test_the_stored_table_has_mastras_columns_and_status(kind: str, tmp_path: Path) -> None:
    """Each store's table has exactly Mastra's columns plus scorecore's status column."""
    table = f"columns_{uuid.uuid4().hex[:12]}"

    async def create() -> None:
        store = (SqliteScoreStore(tmp_path / "s.db", table=table) if kind == "sqlite"
                 else PostgresScoreStore(DSN or "", table=table))
        async with store:
            pass

    anyio.run(create)
    if kind == "sqlite":
        with closing(sqlite3.connect(tmp_path / "s.db")) as lite, lite:
            found = {r[1] for r in lite.execute(f"PRAGMA table_info({table})")}
    else:
        import psycopg  # noqa: PLC0415 - only when PostgreSQL tests run

        with psycopg.connect(DSN or "", autocommit=True) as conn:
            found = {r[0] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s",
                (table,),
            )}
            conn.execute(f'DROP TABLE "{table}"')
    assert found == MASTRA_COLUMNS | {"status"}
    assert {c.name for c in SCORE_COLUMNS} <= found


def _storable(value: Any, path: str) -> Any:
    return Sanitizer().value(value, path)


@given(sts.score_results())
def test_a_rows_result_columns_hold_the_results_mastra_json(result: ScoreResult[Any, Any]) -> None:
    """Built field by field, a row holds what to_mastra_json gives under each column's name."""
    record = ScoreRecord(scorer_id="s", scorer_name="S", source="trace", result=result,
                         trace_id="t", span_id="sp")
    row = ScoreRow.from_record(record)
    data = to_mastra_json(result)
    for column in SCORE_COLUMNS:
        field = RESULT_FIELD.get(column.attr)
        if field is None or column.attr in ("run_id", "score", "reason", "request_context"):
            continue
        assert getattr(row, column.attr) == _storable(data.get(column.name), column.name)
    metadata = row.metadata or {}
    for field in RESULT_FIELDS:
        if field.stored == "metadata":
            assert metadata.get(field.key) == _storable(data.get(field.key), field.key)
    context = row.additional_context or {}
    for field in RESULT_FIELDS:
        if field.stored == "context" and field.key in data:
            expected = redact_secrets(_storable({field.key: data[field.key]}, "additionalContext"))
            assert context.get(field.key) == expected[field.key]


@pytest.mark.parametrize("kind", ["key", "text", "number", "json", "time"])
def test_each_kind_of_column_is_used(kind: str) -> None:
    """The kinds the stores map to SQL types are all in use (a renamed kind is caught)."""
    assert any(c.kind == kind for c in SCORE_COLUMNS)
