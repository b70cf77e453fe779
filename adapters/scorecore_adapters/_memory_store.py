"""A score store in memory: a real :class:`~scorecore.evals.store.ScoreStore` for tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, final

import anyio
import attrs

from scorecore.evals import ScoreRow, StoreError
from scorecore.evals.store import (
    RECORD_COLUMNS,
    SCORE_COLUMNS,
    BatchSummary,
    CompletedScore,
    decode_row,
    storable_row,
)
from scorecore.validators import misuse
from scorecore_adapters._resources import AsyncResource

__all__ = ["InMemoryScoreStore"]

_SCALARS = (str, int, float, bool, datetime)
_RECORD_NAMES = tuple(column.name for column in RECORD_COLUMNS)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _copy(value: Any) -> Any:
    # What the database stores keep is JSON text: a round trip gives back exactly what they
    # give back (lists for tuples, str keys) and a copy the caller can no longer mutate.
    if value is None or isinstance(value, _SCALARS):
        return value
    return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))


def _utc(when: datetime | None) -> datetime | None:
    # As the SQL stores read their times back: a time without a zone is UTC.
    if when is None or when.tzinfo is not None:
        return when
    return when.replace(tzinfo=UTC)


def _summary(batch_id: str, rows: Sequence[ScoreRow]) -> BatchSummary:
    created = [t for r in rows if (t := _utc(r.created_at)) is not None]
    updated = [t for r in rows if (t := _utc(r.updated_at)) is not None]
    statuses = [r.status for r in rows]
    return BatchSummary(
        batch_id=batch_id, created_at=min(created, default=None),
        updated_at=max(updated, default=None), items=len({r.run_id for r in rows}),
        scorers=tuple(sorted({r.scorer_id for r in rows})), scored=statuses.count("scored"),
        not_scorable=statuses.count("not_scorable"), failed=statuses.count("failed"),
    )


def _oldest_first(summary: BatchSummary) -> tuple[bool, datetime, str]:
    # ORDER BY MIN(createdAt), batchId (every row saved here has a createdAt).
    when = summary.created_at or datetime.min.replace(tzinfo=UTC)
    return (summary.created_at is not None, when, summary.batch_id)


def _position(row: ScoreRow) -> tuple[int, float]:
    index = row.metadata.get("itemIndex") if row.metadata is not None else None
    if isinstance(index, int | float) and not isinstance(index, bool):
        return (0, index)
    return (1, 0)


@final
class InMemoryScoreStore(AsyncResource):
    """A :class:`~scorecore.evals.store.ScoreStore` kept in a dict, for tests and notebooks.

    It keeps the same contract as the SQLite and PostgreSQL stores (the same contract tests
    run against all three): a save is atomic and idempotent per ``(run_id, scorer_id)``
    (``created_at`` kept, ``updated_at`` moved), rows pass through
    :func:`~scorecore.evals.store.storable_row` and are read back as those stores read them,
    ``list_run`` orders by dataset position then run and scorer id, ``list_batches`` (the
    :class:`~scorecore.evals.store.BatchCatalog` port) lists each batch oldest first with its
    counts, and a key column no store can encode is a :class:`~scorecore.evals.StoreError`.
    Nothing is written anywhere: the rows live as long as the store.

    ``async with`` works (it does nothing), so it can stand in wherever a database store is
    opened; it needs no opening.

    Args:
        now: the wall clock for ``created_at``/``updated_at`` (UTC ``datetime.now`` by default).

    >>> import anyio
    >>> from scorecore.evals import ScoreRow
    >>> store = InMemoryScoreStore()
    >>> row = ScoreRow(id="r1/s", scorer_id="s", run_id="r1", batch_id="b", status="scored",
    ...                score=1.0)
    >>> anyio.run(store.save, [row, row])
    >>> [r.run_id for r in anyio.run(store.list_run, "b")], store.saves, store.writes
    (['r1'], 1, (('r1', 's'), ('r1', 's')))
    >>> store.rows[("r1", "s")].score
    1.0
    """

    __slots__ = ("_lock", "_now", "_rows", "_saves", "_writes")

    def __init__(self, *, now: Callable[[], datetime] = _utc_now) -> None:
        if not callable(now):
            raise misuse("InMemoryScoreStore.now", now, "must be callable")
        self._now = now
        self._rows: dict[tuple[str, str], ScoreRow] = {}
        self._saves = 0
        self._writes: list[tuple[str, str]] = []
        self._lock = anyio.Lock()

    url = "memory:"
    """Where the rows live, in the form the other stores report theirs."""

    @property
    def rows(self) -> Mapping[tuple[str, str], ScoreRow]:
        """Every stored row, of every batch, by ``(run_id, scorer_id)``: a read-only snapshot,
        in the order the pairs were first saved."""
        return MappingProxyType(dict(self._rows))

    @property
    def writes(self) -> tuple[tuple[str, str], ...]:
        """Every ``(run_id, scorer_id)`` saved, in order, repeats included: how often each
        row was written, not only what it holds now."""
        return tuple(self._writes)

    @property
    def saves(self) -> int:
        """How many non-empty :meth:`save` calls succeeded."""
        return self._saves

    def __repr__(self) -> str:
        return f"InMemoryScoreStore(rows={len(self._rows)})"

    async def save(self, rows: Sequence[ScoreRow], /) -> None:
        """Upsert ``rows`` atomically: all of them are kept, or (on :class:`StoreError`) none."""
        await anyio.lowlevel.checkpoint()
        if not rows:
            return
        try:
            kept = [storable_row(row) for row in rows]
        except ValueError as exc:  # a key column no store can keep
            raise StoreError(
                f"store {self.url} save failed: {exc}", store=self.url, operation="save"
            ) from exc
        async with self._lock:
            now = self._now()
            staged = dict(self._rows)
            for row in kept:
                key = (row.run_id, row.scorer_id)
                earlier = staged.get(key)
                copied: dict[str, Any] = {
                    field.name: _copy(getattr(row, field.name)) for field in attrs.fields(ScoreRow)
                }
                copied["scorer"] = copied["scorer"] or {}
                # The first save of a pair fixes its row id and created_at, as the SQL upserts.
                copied["id"] = earlier.id if earlier is not None else row.id
                copied["created_at"] = earlier.created_at if earlier is not None else now
                copied["updated_at"] = now
                staged[key] = ScoreRow(**copied)
            self._rows = staged
            self._saves += 1
            self._writes.extend((row.run_id, row.scorer_id) for row in kept)

    async def save_records(self, records: Sequence[tuple[Any, ...]], /) -> None:
        """Upsert the rows of ``records`` (of ``encode_rows``) as :meth:`save` upserts the rows
        (what :func:`~scorecore.evals.run_evals` hands a store that takes records)."""
        try:
            rows = [decode_row(dict(zip(_RECORD_NAMES, record, strict=True)), json_text=True,
                               store=self.url, operation="save") for record in records]
        except ValueError as exc:  # a record of another length
            raise StoreError(
                f"store {self.url} save failed: {exc}", store=self.url, operation="save"
            ) from exc
        await self.save(rows)

    def _read(self, row: ScoreRow, operation: str) -> ScoreRow:
        # Read back through the decoder every store uses, so that a row holding what no
        # store can read (a text score, an infinite one) fails here as it would there.
        record = {column.name: getattr(row, column.attr) for column in SCORE_COLUMNS}
        return decode_row(record, json_text=False, store=self.url, operation=operation)

    async def completed(self, batch_id: str, /) -> dict[tuple[str, str], CompletedScore]:
        """The final (scored or not-scorable) outcomes stored for ``batch_id``."""
        await anyio.lowlevel.checkpoint()
        done: dict[tuple[str, str], CompletedScore] = {}
        for key, stored in self._rows.items():
            if stored.batch_id == batch_id and stored.status in ("scored", "not_scorable"):
                row = self._read(stored, "completed")
                status = row.status
                if status != "failed":
                    done[key] = CompletedScore(status=status, score=row.score, reason=row.reason,
                                               not_scorable_kind=row.not_scorable_kind())
        return done

    async def has_batch(self, batch_id: str, /) -> bool:
        """Whether any row (of any status) is stored for ``batch_id``."""
        await anyio.lowlevel.checkpoint()
        return any(row.batch_id == batch_id for row in self._rows.values())

    async def list_run(self, batch_id: str, /) -> list[ScoreRow]:
        """Every row of ``batch_id``, by dataset position, then run id and scorer id."""
        await anyio.lowlevel.checkpoint()
        rows = [self._read(row, "list_run") for row in self._rows.values()
                if row.batch_id == batch_id]
        return sorted(rows, key=lambda r: (_position(r), r.run_id, r.scorer_id))

    async def list_batches(self) -> list[BatchSummary]:
        """Every stored batch, oldest first (by first write, then batch id), with its items,
        scorers and counts by status, as the SQLite and PostgreSQL stores list theirs.

        >>> import anyio
        >>> from scorecore.evals import ScoreRow
        >>> store = InMemoryScoreStore()
        >>> anyio.run(store.save, [ScoreRow(id="1", scorer_id="s", run_id="b:1", batch_id="b",
        ...                                 status="failed")])
        >>> [(b.batch_id, b.items, b.scorers, b.failed) for b in anyio.run(store.list_batches)]
        [('b', 1, ('s',), 1)]
        """
        await anyio.lowlevel.checkpoint()
        by_batch: dict[str, list[ScoreRow]] = {}
        for row in self._rows.values():
            by_batch.setdefault(row.batch_id, []).append(row)
        return sorted((_summary(b, rows) for b, rows in by_batch.items()), key=_oldest_first)


if TYPE_CHECKING:
    from scorecore.evals.store import BatchCatalog, RecordStore, ScoreStore

    def _is_a_score_store(store: InMemoryScoreStore) -> ScoreStore:
        # mypy --strict checks here that the class keeps the ScoreStore port.
        return store

    def _is_a_batch_catalog(store: InMemoryScoreStore) -> BatchCatalog:
        return store

    def _is_a_record_store(store: InMemoryScoreStore) -> RecordStore:
        return store
