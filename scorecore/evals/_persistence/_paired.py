"""The port of a store that reads big batches without loading them: pairs and pages."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Protocol

from scorecore.evals._compare._pairs import PairedScore
from scorecore.evals._rows._row import ScoreRow

__all__ = ["PairedReader"]


class PairedReader(Protocol):
    """A store that pairs two batches and pages through one itself (both stores in
    ``scorecore_adapters.storage`` do); ``scorecore compare``, ``show`` and ``report`` then
    hold a page of rows at a time, not a batch.

    Contract:

    - ``batch_scorers(batch_id)`` maps each scorer id with a row in the batch to the set of
      its rows' scorer fingerprints (``scorer["fingerprint"]`` when it is a string, else
      ``None``).
    - ``items_only_in(batch_id, other)`` lists, sorted, the item ids
      (:func:`~scorecore.evals.store.row_item_id`) with a row in ``batch_id`` and none in
      ``other``.
    - ``paired_scores(base, new)`` yields pages of :class:`PairedScore`, one per (scorer, item)
      with rows in both batches, ordered by scorer id then item id (code point order); an
      item's trials are one pair, as :func:`~scorecore.evals.compare` takes them.
    - ``pages(batch_id)`` yields the batch's rows in pages, in ``list_run``'s order.
    - ``item_ids(batch_id)`` yields the batch's distinct item ids in pages, sorted (code
      point order).
    - Every method raises :class:`~scorecore.evals.StoreError` (a
      :class:`~scorecore.evals.store.StoredRowError` for a value it cannot read) and nothing
      else.
    """

    async def batch_scorers(self, batch_id: str, /) -> Mapping[str, frozenset[str | None]]:
        """Each scorer of ``batch_id`` with its fingerprints."""
        ...

    async def items_only_in(self, batch_id: str, other: str, /) -> Sequence[str]:
        """The item ids of ``batch_id`` that ``other`` lacks, sorted."""
        ...

    def paired_scores(
        self, base: str, new: str, /
    ) -> AsyncGenerator[Sequence[PairedScore], None]:
        """The two batches' paired items, page by page (see the class contract)."""
        ...

    def pages(self, batch_id: str, /) -> AsyncGenerator[Sequence[ScoreRow], None]:
        """The batch's rows, page by page."""
        ...

    def item_ids(self, batch_id: str, /) -> AsyncGenerator[Sequence[str], None]:
        """The batch's distinct item ids, sorted, page by page."""
        ...
