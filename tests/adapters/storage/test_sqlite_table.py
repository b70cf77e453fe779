"""The SQLite store's table: the indexes a save maintains, and tables made by earlier versions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import attrs
import pytest

from scorecore.evals import ScoreRow
from scorecore.evals.store import row_id
from scorecore_adapters.storage import SqliteScoreStore

pytestmark = pytest.mark.anyio

# The statements scorecore made its table with until the id column lost its own index
# (written out here, not derived: they are what files on users' disks hold).
_OLD_SCHEMA = (
    'CREATE TABLE IF NOT EXISTS "scorecore_scores" ("id" TEXT PRIMARY KEY, "scorerId" TEXT '
    'NOT NULL, "runId" TEXT NOT NULL, "batchId" TEXT, "status" TEXT NOT NULL, "score" REAL, '
    '"reason" TEXT, "scorer" TEXT, "input" TEXT, "output" TEXT, "preprocessStepResult" TEXT, '
    '"analyzeStepResult" TEXT, "preprocessPrompt" TEXT, "analyzePrompt" TEXT, '
    '"generateScorePrompt" TEXT, "generateReasonPrompt" TEXT, "additionalContext" TEXT, '
    '"requestContext" TEXT, "entityType" TEXT, "entity" TEXT, "entityId" TEXT, "source" TEXT, '
    '"datasetItemId" TEXT, "metadata" TEXT, "traceId" TEXT, "spanId" TEXT, '
    '"extractStepResult" TEXT, "extractPrompt" TEXT, "reasonPrompt" TEXT, "resourceId" TEXT, '
    '"threadId" TEXT, "organizationId" TEXT, "projectId" TEXT, "datasetId" TEXT, '
    '"createdAt" TEXT NOT NULL, "updatedAt" TEXT NOT NULL, UNIQUE ("runId", "scorerId"));\n'
    'CREATE INDEX IF NOT EXISTS "scorecore_scores_batch" ON "scorecore_scores" ("batchId");'
)


def _row(item: int, scorer: str, score: float, batch: str = "b") -> ScoreRow:
    run_id = f"{batch}:item-{item}"
    return ScoreRow(id=row_id(run_id, scorer), scorer_id=scorer, run_id=run_id, batch_id=batch,
                    status="scored", score=score, input={"q": item}, output=f"answer {item}",
                    dataset_item_id=f"item-{item}", metadata={"itemIndex": item})


def _indexed_columns(path: Path) -> set[tuple[str, ...]]:
    conn = sqlite3.connect(path)
    try:
        names = [row[1] for row in conn.execute('PRAGMA index_list("scorecore_scores")')]
        return {tuple(column for _, _, column in conn.execute(f'PRAGMA index_info("{name}")'))
                for name in names}
    finally:
        conn.close()


async def test_a_new_table_indexes_the_pair_and_the_batch_only(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A save maintains two indexes: the (runId, scorerId) pair's and the batch's. The id is
    the pair's digest (unique with it) and never a read's key: an index of its own made every
    insert a random-order write into a third B-tree."""
    path = tmp_path / "scores.db"
    async with SqliteScoreStore(path) as store:
        await store.save([_row(0, "s", 1.0)])
    assert _indexed_columns(path) == {("runId", "scorerId"), ("batchId",)}


async def test_a_table_made_by_the_old_schema_keeps_working(
    anyio_backend: str, tmp_path: Path
) -> None:
    """A store file made before keeps its table as it is, and reads, upserts and resumes as a
    new one does."""
    path = tmp_path / "scores.db"
    conn = sqlite3.connect(path)
    conn.executescript(_OLD_SCHEMA)
    conn.close()
    first = [_row(i, s, 0.5) for i in range(3) for s in ("a", "b")]
    async with SqliteScoreStore(path) as store:
        await store.save(first)
        again = [attrs.evolve(r, score=1.0) for r in first[:2]]
        await store.save([*again, _row(3, "a", 0.25)])
        rows = await store.list_run("b")
        completed = await store.completed("b")
        assert await store.has_batch("b")
        scorers = await store.batch_scorers("b")
    assert [(r.run_id, r.scorer_id, r.score) for r in rows] == [
        ("b:item-0", "a", 1.0), ("b:item-0", "b", 1.0), ("b:item-1", "a", 0.5),
        ("b:item-1", "b", 0.5), ("b:item-2", "a", 0.5), ("b:item-2", "b", 0.5),
        ("b:item-3", "a", 0.25),
    ]
    assert [r.id for r in rows] == [row_id(r.run_id, r.scorer_id) for r in rows]
    assert rows[2].input == {"q": 1}
    assert len(completed) == 7
    assert set(scorers) == {"a", "b"}
    # The old table is used as it is: its id index is still there.
    assert ("id",) in _indexed_columns(path)
