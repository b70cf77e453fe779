"""Dataset I/O: items in a Ray dataset, their positions, and the run ids they claim."""

from __future__ import annotations

import functools
import hashlib
import hmac
import pickle
import secrets
import warnings
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final, cast

from returns.result import Success

from scorecore.evals import InvalidItem, ItemLike
from scorecore.evals.engine import RESULT_COLUMNS, ItemFailure, RunIds, item_key

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type hints
    import ray.data

__all__ = ["INDEX_COLUMN", "ITEM_COLUMN", "items_dataset"]

ITEM_COLUMN: Final = "scorecore_item"
"""The column :func:`items_dataset` keeps each item in, pickled (so every value survives) and
signed for this process: a dataset read from elsewhere with such a column is never unpickled."""

INDEX_COLUMN: Final = "scorecore_index"
"""The column holding each row's position in the dataset (added by :func:`score_dataset`)."""

_ITEMS_PER_BLOCK: Final = 1024
_MAX_BLOCKS: Final = 200

# Unpickling runs code: only items this process pickled are unpickled, so a Parquet file from
# elsewhere with a scorecore_item column cannot run code on the actors.
KEY: Final = secrets.token_bytes(32)
_SIGNATURE = 32


def items_dataset(items: Iterable[ItemLike]) -> ray.data.Dataset:
    """A Ray dataset of items, each kept exactly as given (pickled in :data:`ITEM_COLUMN`).

    Use it for a Python list: Arrow, which Ray Data stores rows in, would otherwise merge
    the keys of mapping values across rows and refuse values whose types differ. Each item is
    signed with a key of this process, and :func:`score_dataset` (in this process) unpickles
    only what it signed: build the dataset where you score it.
    """
    import ray.data  # noqa: PLC0415 - the ray extra is optional

    rows = [{INDEX_COLUMN: index, ITEM_COLUMN: _seal(item)} for index, item in enumerate(items)]
    # Blocks of about a thousand items: Ray schedules a task per block per stage.
    blocks = max(1, min(_MAX_BLOCKS, -(-len(rows) // _ITEMS_PER_BLOCK)))
    return ray.data.from_items(rows, override_num_blocks=blocks)


def _seal(item: object) -> bytes:
    payload = pickle.dumps(item)
    return hmac.new(KEY, payload, hashlib.sha256).digest() + payload


def decode(row: dict[str, Any], key: bytes) -> object:
    """The item a dataset row holds: sealed by :func:`items_dataset`, or the row itself."""
    if ITEM_COLUMN in row:
        sealed = row[ITEM_COLUMN]
        if not isinstance(sealed, bytes) or not hmac.compare_digest(
            sealed[:_SIGNATURE], hmac.new(key, sealed[_SIGNATURE:], hashlib.sha256).digest()
        ):
            return InvalidItem(reason=f"{ITEM_COLUMN} was not written by items_dataset in the "
                                      f"process scoring it; not unpickled")
        try:
            return pickle.loads(sealed[_SIGNATURE:])  # noqa: S301 - signed by items_dataset
        except Exception as exc:  # noqa: BLE001 - one unreadable row never stops a batch
            return InvalidItem(reason=f"{ITEM_COLUMN} could not be unpickled: "
                                      f"{type(exc).__name__}")
    # Arrow gives every row every column: a column another row filled is None here, which
    # for anything but the item's input and output means "not given".
    return {k: v for k, v in row.items() if v is not None or k in ("input", "output")}


def _ids(batch: pa.Table, key: bytes) -> pa.Table:
    """``(index, item id, line)`` of each row: what claims its run id (a map task)."""
    import pyarrow as pa  # noqa: PLC0415 - the ray extra is optional

    indices, ids, lines = [], [], []
    for row in batch.to_pylist():
        index = row.pop(INDEX_COLUMN)
        item_id, line = item_key(decode(row, key), index)
        indices.append(index)
        ids.append(item_id)
        lines.append(line)
    return pa.table({"index": pa.array(indices, pa.int64()), "id": pa.array(ids, pa.string()),
                     "line": pa.array(lines, pa.int64())})


def indexed(ds: ray.data.Dataset) -> ray.data.Dataset:
    """``ds`` with each row's position in :data:`INDEX_COLUMN`, materialized.

    Positions are run ids of items without an id, so they must not change between a run and
    its resume: the order is preserved while the dataset is numbered.
    """
    import ray.data  # noqa: PLC0415 - the ray extra is optional

    if INDEX_COLUMN in (ds.columns() or ()):
        return cast("ray.data.Dataset", ds.materialize())  # numbered by items_dataset
    context = ray.data.DataContext.get_current()
    kept = context.execution_options.preserve_order
    context.execution_options.preserve_order = True
    try:
        ordered = ds.materialize()
        total = ordered.count()
        if total == 0:
            return cast("ray.data.Dataset", ordered)  # nothing to number (zip needs rows)
        index = ray.data.range(total).rename_columns({"id": INDEX_COLUMN})
        with warnings.catch_warnings():
            # Dataset.zip is deprecated (Ray 2.64 drops it) as it relies on a deterministic
            # order, which is exactly what preserve_order gives here.
            warnings.simplefilter("ignore", DeprecationWarning)
            numbered = ordered.zip(index)
        # Every block as Arrow: Ray's batcher cannot join a pandas block (zip may make one)
        # to an Arrow block in one batch.
        numbered = numbered.map_batches(_as_arrow, batch_format="pyarrow",
                                        batch_size=None).materialize()
    finally:
        context.execution_options.preserve_order = kept
    return cast("ray.data.Dataset", numbered)


def spread(ds: ray.data.Dataset, concurrency: int, batch_size: int) -> ray.data.Dataset:
    """``ds`` in enough blocks to keep every actor busy (Ray hands an actor whole blocks)."""
    wanted = max(1, min(-(-ds.count() // batch_size), 4 * concurrency))
    if ds.num_blocks() >= wanted:
        return ds
    # Splitting without a shuffle keeps the order (and the numbering is already done).
    return cast("ray.data.Dataset", ds.repartition(wanted, shuffle=False).materialize())


def _as_arrow(table: pa.Table) -> pa.Table:
    return table


def tables(ds: ray.data.Dataset) -> Iterator[pa.Table]:
    """The dataset's blocks as Arrow tables, in order."""
    return cast("Iterator[pa.Table]", ds.iter_batches(batch_format="pyarrow", batch_size=None))


def repeats(numbered: ray.data.Dataset, batch_id: str) -> dict[int, ItemFailure]:
    """Items whose run id an earlier item already has, each with the failure saying so.

    Claimed in dataset order over the whole dataset, as ``run_evals`` claims them, so the
    first item keeps its run id and rows wherever the later one is scored.
    """
    keys = numbered.map_batches(functools.partial(_ids, key=KEY), batch_format="pyarrow")
    claimed: list[tuple[int, str | None, int | None]] = []
    for batch in tables(keys):
        claimed.extend(zip(*(batch.column(c).to_pylist() for c in ("index", "id", "line")),
                           strict=True))
    claimed.sort(key=lambda key: key[0])
    run_ids = RunIds(batch_id)
    found: dict[int, ItemFailure] = {}
    for index, item_id, line in claimed:
        claim = run_ids.claim(index, item_id, line)
        if not isinstance(claim, Success):
            found[index] = claim.failure()
    return found


def result_schema() -> pa.Schema:
    """The Arrow schema of the result rows (:data:`scorecore.evals.engine.RESULT_COLUMNS`)."""
    import pyarrow as pa  # noqa: PLC0415 - the ray extra is optional

    kinds = {int: pa.int64(), float: pa.float64(), bool: pa.bool_(), str: pa.string()}
    return pa.schema([(name, kinds[kind]) for name, kind in RESULT_COLUMNS])


def no_results() -> ray.data.Dataset:
    """An empty dataset of result rows (the result of scoring no items)."""
    import pyarrow as pa  # noqa: PLC0415 - the ray extra is optional
    import ray.data  # noqa: PLC0415 - the ray extra is optional

    return ray.data.from_arrow(pa.Table.from_pylist([], schema=result_schema()))
