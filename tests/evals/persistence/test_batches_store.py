"""Stores list their batches (``scorecore batches``): SQLite and the test kit's memory store
always, PostgreSQL when configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorecore.evals import ScoreRow
from scorecore.evals.store import BatchCatalog, BatchSummary
from tests.evals.persistence.test_storage import STORE_KINDS, StepClock, make_store

pytestmark = pytest.mark.anyio


def _row(batch: str, run: str, scorer: str, status: str) -> ScoreRow:
    return ScoreRow(id=f"{batch}/{run}/{scorer}", scorer_id=scorer, run_id=run,
                    batch_id=batch, status=status,  # type: ignore[arg-type]
                    score=1.0 if status == "scored" else None)


@pytest.mark.parametrize("kind", STORE_KINDS)
async def test_list_batches_counts_each_batch(kind: str, tmp_path: Path) -> None:
    """One summary per batch, oldest first: first/last write, items, scorers, status counts."""
    clock = StepClock()
    async with make_store(kind, tmp_path, clock) as store:
        catalog: BatchCatalog = store
        assert await catalog.list_batches() == []
        await store.save([_row("late", "late:1", "b", "scored")])
        await store.save([_row("early", "early:1", "a", "scored"),
                          _row("early", "early:1", "b", "failed"),
                          _row("early", "early:2", "a", "not_scorable")])
        await store.save([_row("early", "early:2", "b", "scored")])
        await store.save([_row("early", "early:1", "b", "scored")])  # the failure resumed
        found = await catalog.list_batches()
    assert [b.batch_id for b in found] == ["late", "early"]
    late, early = found
    assert late == BatchSummary(batch_id="late", created_at=late.created_at,
                                updated_at=late.created_at, items=1, scorers=("b",), scored=1,
                                not_scorable=0, failed=0)
    assert (early.items, early.scorers, early.scored, early.not_scorable, early.failed) == (
        2, ("a", "b"), 3, 1, 0)
    assert early.created_at is not None
    assert early.updated_at is not None
    assert late.created_at is not None
    assert late.created_at < early.created_at < early.updated_at
    assert early.created_at.tzinfo is not None
