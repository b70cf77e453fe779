"""The store SPI: what a score store implements, and the helpers every store uses.

A store (``scorecore_adapters.storage`` has SQLite and PostgreSQL ones) implements
:class:`ScoreStore` (and, to be listed by ``scorecore batches``, :class:`BatchCatalog`; to be
handed :func:`~scorecore.evals.run_evals`' rows ready to write, :class:`RecordStore`). It
keeps :class:`~scorecore.evals.ScoreRow` values in the columns :data:`SCORE_COLUMNS` names,
passes every row it saves through :func:`storable_row`, reads every row back through
:func:`decode_row` (a :class:`StoredRowError` names what it cannot read), answers resume with
:class:`CompletedScore` values keyed by (run id, scorer id), and raises
:class:`~scorecore.evals.StoreError` and nothing else. :func:`row_id` is a row's stable key;
:func:`row_item_id` the dataset item a row scored.

>>> from scorecore.evals import ScoreRow
>>> from scorecore.evals.store import SCORE_COLUMNS, row_id, storable_row
>>> row = ScoreRow(id=row_id("b:1", "exact"), scorer_id="exact", run_id="b:1", batch_id="b",
...                status="scored", score=1.0)
>>> storable_row(row) == row
True
>>> SCORE_COLUMNS[0].name
'id'
"""

from scorecore.evals._compare._paired import PairedComparison
from scorecore.evals._compare._pairs import PairedScore, TrialScore, paired_score
from scorecore.evals._persistence._catalog import BatchCatalog, BatchSummary
from scorecore.evals._persistence._decode import decode_row
from scorecore.evals._persistence._paired import PairedReader
from scorecore.evals._persistence._port import (
    CompletedScore,
    RecordStore,
    ScoreStore,
    StoredRowError,
)
from scorecore.evals._persistence._record import RECORD_COLUMNS, encode_rows
from scorecore.evals._rows._row import SCORE_COLUMNS, ScoreColumn, row_id, row_item_id, storable_row

__all__ = [
    "RECORD_COLUMNS",
    "SCORE_COLUMNS",
    "BatchCatalog",
    "BatchSummary",
    "CompletedScore",
    "PairedComparison",
    "PairedReader",
    "PairedScore",
    "RecordStore",
    "ScoreColumn",
    "ScoreStore",
    "StoredRowError",
    "TrialScore",
    "decode_row",
    "encode_rows",
    "paired_score",
    "row_id",
    "row_item_id",
    "storable_row",
]
