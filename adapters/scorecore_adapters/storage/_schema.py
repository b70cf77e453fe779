"""The table both stores share: columns from :data:`scorecore.evals.store.SCORE_COLUMNS`,
rows ↔ records.

Every column of a :class:`~scorecore.evals.ScoreRow` is stored under its Mastra name (quoted,
camelCase), plus Mastra's other ``mastra_scorers`` columns (always NULL here) so the table has
Mastra's full shape. ``("runId", "scorerId")`` is unique: saving a pair again replaces its row.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final, Literal

from scorecore.evals import ScoreRow, StoreError
from scorecore.evals.store import (
    SCORE_COLUMNS,
    CompletedScore,
    ScoreColumn,
    decode_row,
    encode_rows,
)

__all__: list[str] = []  # internal: shared by the SQLite and PostgreSQL stores

DEFAULT_TABLE: Final = "scorecore_scores"
"""The table both stores use unless told otherwise."""

Dialect = Literal["sqlite", "postgres"]

_NAME: Final[Mapping[str, str]] = {c.attr: c.name for c in SCORE_COLUMNS}
ID: Final = _NAME["id"]
RUN_ID: Final = _NAME["run_id"]
SCORER_ID: Final = _NAME["scorer_id"]
BATCH_ID: Final = _NAME["batch_id"]
STATUS: Final = _NAME["status"]
SCORE: Final = _NAME["score"]
REASON: Final = _NAME["reason"]
METADATA: Final = _NAME["metadata"]
CREATED_AT: Final = _NAME["created_at"]

WRITTEN: Final = tuple(c.name for c in SCORE_COLUMNS)
"""Every column a save writes (and a read returns), in the row's order."""
JSON_COLUMNS: Final = frozenset(c.name for c in SCORE_COLUMNS if c.kind == "json")

# Mastra's other columns, kept (always NULL here) so the table has Mastra's full shape.
_MASTRA_ONLY: Final = (
    "extractStepResult", "extractPrompt", "reasonPrompt", "resourceId",
    "threadId", "organizationId", "projectId", "datasetId",
)
_JSON_MASTRA_ONLY: Final = frozenset({"extractStepResult"})

_TYPES: Final[Mapping[Dialect, Mapping[str, str]]] = {
    "sqlite": {"key": "TEXT", "text": "TEXT", "number": "REAL", "json": "TEXT", "time": "TEXT"},
    "postgres": {"key": "TEXT", "text": "TEXT", "number": "DOUBLE PRECISION", "json": "JSONB",
                 "time": "TIMESTAMPTZ"},
}
_CONSTRAINTS: Final[Mapping[str, str]] = {
    ID: " PRIMARY KEY", SCORER_ID: " NOT NULL", RUN_ID: " NOT NULL", STATUS: " NOT NULL",
}
# SQLite: the id is not a key. It is row_id(runId, scorerId), a digest, so it is unique with the
# pair the table already keeps unique, and no read looks a row up by it alone; as a key it was a
# third B-tree per insert, written in random order (a digest), which cost more than the row
# itself. Tables made with the key keep it (CREATE TABLE IF NOT EXISTS) and work the same.
_SQLITE_CONSTRAINTS: Final[Mapping[str, str]] = {**_CONSTRAINTS, ID: " NOT NULL"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def q(name: str) -> str:
    """A quoted SQL identifier (only checked or fixed names reach here)."""
    return f'"{name}"'


def check_table(table: str) -> str:
    """``table`` if it is a plain SQL identifier."""
    if not _IDENTIFIER.fullmatch(table):
        raise ValueError(f"table must be a plain SQL identifier (letters, digits, _): {table!r}")
    return table


def _definition(column: ScoreColumn, dialect: Dialect) -> str:
    not_null = " NOT NULL" if column.kind == "time" else ""
    constraints = _SQLITE_CONSTRAINTS if dialect == "sqlite" else _CONSTRAINTS
    constraint = constraints.get(column.name, not_null)
    return f"{q(column.name)} {_TYPES[dialect][column.kind]}{constraint}"


def schema(table: str, dialect: Dialect) -> list[str]:
    """The statements creating the table and its batch index (when missing)."""
    json_type = _TYPES[dialect]["json"]
    columns = [_definition(c, dialect) for c in SCORE_COLUMNS if c.kind != "time"]
    columns += [f"{q(c)} {json_type if c in _JSON_MASTRA_ONLY else 'TEXT'}" for c in _MASTRA_ONLY]
    columns += [_definition(c, dialect) for c in SCORE_COLUMNS if c.kind == "time"]
    columns.append(f"UNIQUE ({q(RUN_ID)}, {q(SCORER_ID)})")
    t = q(table)
    return [
        f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(columns)})",
        f"CREATE INDEX IF NOT EXISTS {q(table + '_batch')} ON {t} ({q(BATCH_ID)})",
    ]


def upsert_sql(table: str, marks: Sequence[str]) -> str:
    """Insert a row (``marks``: one placeholder per written column), or replace its pair's row."""
    return _upsert(table, f"VALUES ({', '.join(marks)})")


def upsert_from_sql(table: str, source: str, order: str = "") -> str:
    """Insert every row of the table ``source`` (the written columns, one row per pair), or
    replace its pair's row: :func:`upsert_sql` for many rows at once (``order``: an
    ``ORDER BY`` clause for the rows of ``source``)."""
    rows = f"SELECT {', '.join(q(c) for c in WRITTEN)} FROM {q(source)}"  # noqa: S608 - checked identifiers only
    return _upsert(table, f"{rows} {order}" if order else rows)


def _upsert(table: str, rows: str) -> str:
    names = ", ".join(q(c) for c in WRITTEN)
    updates = ", ".join(
        f"{q(c)} = excluded.{q(c)}" for c in WRITTEN if c not in (ID, CREATED_AT)
    )
    return (
        f"INSERT INTO {q(table)} ({names}) {rows} "
        f"ON CONFLICT ({q(RUN_ID)}, {q(SCORER_ID)}) DO UPDATE SET {updates}"
    )


_ID_AT: Final = WRITTEN.index(ID)
_PAIR_AT: Final = (WRITTEN.index(RUN_ID), WRITTEN.index(SCORER_ID))
_PAIR_OF: Final = operator.itemgetter(*_PAIR_AT)


def one_per_pair(records: Sequence[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``records`` (of :func:`params_of`) with one per (run, scorer) pair: the last one saved,
    under the first one's id, which is what upserting them one after the other leaves."""
    # Saves of run_evals never repeat a pair: counted in C first, the usual case walks nothing.
    if len(set(map(_PAIR_OF, records))) == len(records):
        return list(records)
    kept: dict[tuple[Any, Any], tuple[Any, ...]] = {}
    for record in records:
        pair = (record[_PAIR_AT[0]], record[_PAIR_AT[1]])
        first = kept.get(pair)
        if first is not None and first[_ID_AT] != record[_ID_AT]:
            record = (*record[:_ID_AT], first[_ID_AT], *record[_ID_AT + 1:])  # noqa: PLW2901 - the first id kept
        kept[pair] = record
    return list(kept.values())


COMPLETED: Final = (ID, RUN_ID, SCORER_ID, BATCH_ID, STATUS, SCORE, REASON)
"""The columns :func:`completed_sql` reads: a pair's outcome, and what names its row."""


def completed_sql(table: str, mark: str, kind: str) -> str:
    """The final pairs of a batch: the :data:`COMPLETED` columns, then ``kind``, the dialect's
    SQL reading a row's ``metadata.notScorable.kind`` (the metadata itself stays unread: it
    holds every judge call)."""
    return (
        f"SELECT {', '.join(q(c) for c in COMPLETED)}, {kind} FROM {q(table)} "  # noqa: S608 - checked identifiers only
        f"WHERE {q(BATCH_ID)} = {mark} AND {q(STATUS)} IN ('scored', 'not_scorable')"
    )


def completed_from(
    records: Sequence[Sequence[Any]], *, store: str
) -> dict[tuple[str, str], CompletedScore]:
    """The outcomes of :func:`completed_sql`'s records, each decoded as a row is."""
    done: dict[tuple[str, str], CompletedScore] = {}
    for *columns, kind in records:
        row = decode_row(dict(zip(COMPLETED, columns, strict=True)), json_text=False,
                         store=store, operation="completed")
        status = row.status
        if status != "failed":  # the SQL reads final rows only
            done[(row.run_id, row.scorer_id)] = CompletedScore(
                status=status, score=row.score, reason=row.reason,
                not_scorable_kind=kind if status == "not_scorable" and isinstance(kind, str)
                else None,
            )
    return done


def list_sql(table: str, mark: str, item_index: str) -> str:
    """A batch's rows by dataset position (``item_index``: the SQL reading it), run, scorer."""
    return (
        f"SELECT {', '.join(q(c) for c in WRITTEN)} FROM {q(table)} "  # noqa: S608 - checked identifiers only
        f"WHERE {q(BATCH_ID)} = {mark} ORDER BY {item_index}, {q(RUN_ID)}, {q(SCORER_ID)}"
    )


def params_of(rows: Sequence[ScoreRow], now: str | datetime, store: str) -> list[tuple[Any, ...]]:
    """The parameters saving ``rows``, stamped ``now``."""
    return stamped(records_of(rows, store), now)


def records_of(rows: Sequence[ScoreRow], store: str) -> list[tuple[Any, ...]]:
    """The records saving ``rows`` (of ``encode_rows``, not yet stamped)."""
    try:
        # storable_row makes any row storable: what neither store keeps (PostgreSQL refuses
        # NUL, UTF-8 lone surrogates; deep nesting and huge ints break the JSON codecs) is
        # replaced and listed in metadata["sanitized"], so one odd value never fails a whole
        # save. A row run_evals built is storable already and is not walked again.
        return encode_rows(rows)
    except ValueError as exc:  # a key column no store can keep (see storable_row)
        raise StoreError(
            f"store {store}: save failed: {exc}", store=store, operation="save"
        ) from exc


def stamped(records: Sequence[tuple[Any, ...]], now: str | datetime) -> list[tuple[Any, ...]]:
    """The parameters saving ``records`` (of ``encode_rows``), stamped ``now``: the time
    columns are the last ones."""
    times = (now, now)
    return [record + times for record in records]


def row_from(
    record: Sequence[Any], *, json_text: bool, store: str, operation: str = "list_run"
) -> ScoreRow:
    """A row from a record of :data:`WRITTEN`; ``json_text`` when JSON comes back as text.

    Raises:
        StoredRowError: a column holds what scorecore cannot read (see ``decode_row``).
    """
    return decode_row(dict(zip(WRITTEN, record, strict=True)), json_text=json_text,
                      store=store, operation=operation)


def row_with_sql(table: str, mark: str, column: str) -> str:
    """One row of a batch (first ``mark``) whose ``column`` holds a value (second ``mark``)."""
    return (
        f"SELECT {', '.join(q(c) for c in WRITTEN)} FROM {q(table)} "  # noqa: S608 - checked identifiers only
        f"WHERE {q(BATCH_ID)} = {mark} AND {q(column)} = {mark} LIMIT 1"
    )
