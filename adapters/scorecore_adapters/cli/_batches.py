"""``scorecore batches``: the stored batches, oldest first, with their counts."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TextIO

import anyio

from scorecore.evals import StoreError
from scorecore.evals.store import BatchCatalog, BatchSummary
from scorecore_adapters.cli._common import (
    EXIT_PASSED,
    UsageError,
    clip,
    open_url,
    print_json,
    print_table,
)
from scorecore_adapters.storage import Store

_HEADERS = ("batch", "created", "items", "scorers", "scored", "not scorable", "failed")


async def _list(store: Store) -> Sequence[BatchSummary]:
    catalog: BatchCatalog = store
    try:
        async with store:
            return await catalog.list_batches()
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def _when(value: datetime | None) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def _json(batch: BatchSummary) -> dict[str, Any]:
    return {
        "batchId": batch.batch_id,
        "createdAt": batch.created_at.isoformat() if batch.created_at else None,
        "updatedAt": batch.updated_at.isoformat() if batch.updated_at else None,
        "items": batch.items, "scorers": list(batch.scorers), "scored": batch.scored,
        "notScorable": batch.not_scorable, "failed": batch.failed,
    }


def batches(args: argparse.Namespace, out: TextIO) -> int:
    """List the store's batches (read-only)."""
    store = open_url(args.store, must_exist=True, read_only=True)
    found = anyio.run(_list, store)
    if args.json:
        print_json({"store": store.url, "batches": [_json(b) for b in found]}, out)
        return EXIT_PASSED
    if not found:
        print(f"no batches in {store.url}", file=out)
        return EXIT_PASSED
    rows = [(clip(b.batch_id, 60), _when(b.created_at), str(b.items),
             clip(", ".join(b.scorers), 60), str(b.scored), str(b.not_scorable), str(b.failed))
            for b in found]
    print_table(_HEADERS, rows, rich_output=out.isatty(), out=out)
    print(f"{len(found)} batch(es) in {store.url}", file=out)
    return EXIT_PASSED
