"""The storage port: :class:`ScoreStore`, what it remembers for resume, and its error."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, final, runtime_checkable

import attrs

from scorecore._core._errors import ScorecoreError
from scorecore.evals._rows._row import ScoreRow

__all__ = ["CompletedScore", "RecordStore", "ScoreStore", "StoreError", "StoredRowError"]


class StoreError(ScorecoreError):
    """A score store could not be reached, or could not read or write.

    Raised by :class:`ScoreStore` implementations (never a driver's own exception); it aborts
    :func:`run_evals`, since results could no longer be kept. Rows saved before the error
    stay saved, so the batch can be resumed.

    Attributes:
        store: where the store lives, with any password removed (e.g. ``"sqlite:scores.db"``).
        operation: what was attempted (``"open"``, ``"save"``, ``"completed"``, ``"list_run"``).
    """

    def __init__(self, message: str, *, store: str, operation: str) -> None:
        super().__init__(message)
        self.store = store
        self.operation = operation


class StoredRowError(StoreError):
    """A stored row holds a value scorecore cannot read (another writer's row, or an edit).

    Raised by a store's reads (:func:`~scorecore.evals.store.decode_row` builds it): the message
    names the row, the column and the value in one line.

    Attributes:
        row_id: the row's ``id`` (``None`` when that column itself is unreadable).
        column: the column's name (``"score"``, ``"createdAt"`` …).
        value: the value the column holds, as the database gave it.
    """

    def __init__(
        self, message: str, *, store: str, operation: str, row_id: str | None, column: str,
        value: object,
    ) -> None:
        super().__init__(message, store=store, operation=operation)
        self.row_id = row_id
        self.column = column
        self.value = value


@final
@attrs.frozen(kw_only=True)
class CompletedScore:
    """What a store remembers of a finished (run, scorer) pair, for resume.

    ``not_scorable_kind`` is a not-scorable row's ``metadata["notScorable"]["kind"]``, so a
    resumed batch counts the runs the judge could not decide as an uninterrupted one does.
    """

    status: Literal["scored", "not_scorable"]
    score: float | None = None
    reason: str | None = None
    not_scorable_kind: str | None = None


class ScoreStore(Protocol):
    """Where score rows are kept (SQLite, PostgreSQL, … in ``scorecore_adapters.storage``).

    Contract:

    - ``save(rows)`` writes every row or none (one transaction), and is idempotent per
      ``(run_id, scorer_id)``: saving a pair again replaces the earlier row (its
      ``created_at`` is kept, ``updated_at`` changes), so there is never more than one row
      per pair. When it returns, the rows are durable.
    - ``completed(batch_id)`` maps each ``(run_id, scorer_id)`` of the batch whose row is
      final (``"scored"`` or ``"not_scorable"``) to its outcome; failed rows are left out, so
      a resumed batch runs them again.
    - ``list_run(batch_id)`` returns the batch's rows, ordered by dataset position then
      scorer id (insertion order where the position is unknown).
    - ``has_batch(batch_id)`` tells whether any row (of any status) is stored for the batch;
      :func:`run_evals` asks it before writing, to refuse mixing two datasets in one batch.
    - Every method raises :class:`StoreError` (never a driver's exception) when the store
      cannot be reached or the operation fails; nothing else.
    """

    async def save(self, rows: Sequence[ScoreRow], /) -> None:
        """Upsert ``rows`` atomically (see the class contract)."""
        ...

    async def completed(self, batch_id: str, /) -> Mapping[tuple[str, str], CompletedScore]:
        """The final outcomes already stored for ``batch_id``, keyed by (run id, scorer id)."""
        ...

    async def list_run(self, batch_id: str, /) -> Sequence[ScoreRow]:
        """Every row stored for ``batch_id``."""
        ...

    async def has_batch(self, batch_id: str, /) -> bool:
        """Whether any row is stored for ``batch_id``."""
        ...


@runtime_checkable
class RecordStore(Protocol):
    """A :class:`ScoreStore` that also saves rows given as records; :func:`run_evals` hands
    such a store its rows so (both stores of ``scorecore_adapters.storage`` and the in-memory
    one are such stores), any other store gets :meth:`ScoreStore.save`.

    Contract: ``save_records(records)`` stores exactly what ``save(rows)`` stores for the rows
    whose records (:func:`~scorecore.evals.store.encode_rows`) they are, with the same
    guarantees (one transaction, idempotent per ``(run_id, scorer_id)``, durable on return,
    :class:`StoreError` and nothing else). A record holds the row's columns in
    :data:`~scorecore.evals.store.RECORD_COLUMNS` order (every column but the times, which the
    store sets), each JSON column as its JSON text; its values are storable already
    (:func:`~scorecore.evals.store.storable_row`): the store writes them as they are.
    """

    async def save_records(self, records: Sequence[tuple[Any, ...]], /) -> None:
        """Upsert the rows of ``records`` atomically (see the class contract)."""
        ...
