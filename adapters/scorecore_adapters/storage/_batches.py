"""Listing the stored batches (:class:`scorecore.evals.store.BatchCatalog`): one SQL for both."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

from scorecore.evals import ScoreRow
from scorecore.evals.store import SCORE_COLUMNS, BatchSummary, StoredRowError
from scorecore_adapters.storage._schema import BATCH_ID, CREATED_AT, RUN_ID, SCORER_ID, STATUS, q

_UPDATED_AT: Final = next(c.name for c in SCORE_COLUMNS if c.attr == "updated_at")


def batches_sql(table: str) -> str:
    """One record per batch: id, first and last write, items, scorers (comma-joined), counts.

    Scorer ids may hold commas, so they are listed by :func:`scorers_sql` instead.
    """
    def count(status: str) -> str:
        return f"SUM(CASE WHEN {q(STATUS)} = '{status}' THEN 1 ELSE 0 END)"

    return (
        f"SELECT {q(BATCH_ID)}, MIN({q(CREATED_AT)}), MAX({q(_UPDATED_AT)}), "  # noqa: S608 - checked identifiers only
        f"COUNT(DISTINCT {q(RUN_ID)}), {count('scored')}, {count('not_scorable')}, "
        f"{count('failed')} FROM {q(table)} WHERE {q(BATCH_ID)} IS NOT NULL "
        f"GROUP BY {q(BATCH_ID)} ORDER BY MIN({q(CREATED_AT)}), {q(BATCH_ID)}"
    )


def scorers_sql(table: str) -> str:
    """Each batch's distinct scorer ids."""
    return (
        f"SELECT DISTINCT {q(BATCH_ID)}, {q(SCORER_ID)} FROM {q(table)} "  # noqa: S608 - checked identifiers only
        f"WHERE {q(BATCH_ID)} IS NOT NULL"
    )


class UnreadableTime(Exception):  # noqa: N818 - a signal: the store then finds the row
    """A batch's first or last write time is not a time: the row holding it must be named."""

    def __init__(self, batch_id: str, column: str, value: object) -> None:
        super().__init__(f"batch {batch_id!r}: {column} {value!r}")
        self.batch_id = batch_id
        self.column = column
        self.value = value


def _when(value: Any, batch_id: str, column: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = datetime.fromisoformat(value)
        except (TypeError, ValueError):
            raise UnreadableTime(batch_id, column, value) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def unreadable(row: ScoreRow | None, bad: UnreadableTime, store: str) -> StoredRowError:
    """The error for ``bad``, once the store decoded the row holding it (which raises first)."""
    return StoredRowError(
        f"store {store}: batch {bad.batch_id!r} cannot be listed: column {bad.column!r} "
        f"holds {bad.value!r}, not an ISO-8601 time", store=store, operation="list_batches",
        row_id=None if row is None else row.id, column=bad.column, value=bad.value,
    )


def summaries(
    batches: Sequence[Sequence[Any]], scorers: Sequence[Sequence[Any]]
) -> list[BatchSummary]:
    """The records of :func:`batches_sql` and :func:`scorers_sql` as summaries, oldest first.

    Raises:
        UnreadableTime: a first or last write time is not a time (the store then reads the
            row holding it, so that the error names it).
    """
    by_batch: dict[str, list[str]] = {}
    for batch_id, scorer_id in scorers:
        by_batch.setdefault(str(batch_id), []).append(str(scorer_id))
    return [
        BatchSummary(
            batch_id=str(batch_id), created_at=_when(created, str(batch_id), CREATED_AT),
            updated_at=_when(updated, str(batch_id), _UPDATED_AT),
            items=int(items), scorers=tuple(sorted(by_batch.get(str(batch_id), []))),
            scored=int(scored or 0), not_scorable=int(not_scorable or 0),
            failed=int(failed or 0),
        )
        for batch_id, created, updated, items, scored, not_scorable, failed in batches
    ]
