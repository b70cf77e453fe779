"""What a store knows about each stored batch, and the port that lists them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, final

import attrs

__all__ = ["BatchCatalog", "BatchSummary"]


@final
@attrs.frozen(kw_only=True)
class BatchSummary:
    """One stored batch (``scorecore batches``).

    Attributes:
        batch_id: the batch.
        created_at: when its first row was stored.
        updated_at: when a row of it was last stored.
        items: distinct items (run ids) with a row.
        scorers: the scorer ids with a row, sorted.
        scored: rows scored.
        not_scorable: rows not scorable.
        failed: rows failed.
    """

    batch_id: str
    created_at: datetime | None
    updated_at: datetime | None
    items: int
    scorers: tuple[str, ...]
    scored: int
    not_scorable: int
    failed: int


class BatchCatalog(Protocol):
    """A store that can list its batches (both stores in ``scorecore_adapters.storage`` can).

    Contract: ``list_batches()`` returns one summary per batch with at least one row, oldest
    first (by ``created_at``, then batch id); it raises :class:`StoreError` and nothing else
    when the store cannot be read.
    """

    async def list_batches(self) -> Sequence[BatchSummary]:
        """Every stored batch, oldest first."""
        ...
