"""The SQLite store: the embedded default, one file (or ``":memory:"``) in WAL mode."""

from __future__ import annotations

import operator
import os
import sqlite3
from collections.abc import AsyncGenerator, Callable, Sequence
from itertools import compress
from pathlib import Path
from typing import Any, Final, final

import anyio
import anyio.to_thread

from scorecore.evals import ScoreRow, StoreError
from scorecore.evals.store import BatchSummary, CompletedScore, StoredRowError
from scorecore_adapters._resources import AsyncResource
from scorecore_adapters.storage._batches import (
    UnreadableTime,
    batches_sql,
    scorers_sql,
    summaries,
    unreadable,
)
from scorecore_adapters.storage._common import Now, describe, utc_now
from scorecore_adapters.storage._paired import (
    PAGE,
    PagedReads,
    only_in_sql,
    scorers_from,
)
from scorecore_adapters.storage._paired import scorers_sql as fingerprints_sql
from scorecore_adapters.storage._schema import (
    BATCH_ID,
    DEFAULT_TABLE,
    ID,
    METADATA,
    WRITTEN,
    check_table,
    completed_from,
    completed_sql,
    list_sql,
    one_per_pair,
    q,
    records_of,
    row_from,
    row_with_sql,
    schema,
    upsert_sql,
)

__all__ = ["SqliteScoreStore"]


@final
class SqliteScoreStore(PagedReads, AsyncResource):
    """A :class:`~scorecore.evals.store.ScoreStore` in a SQLite file (or ``":memory:"``).

    The database runs in WAL mode and each :meth:`save` is one transaction, committed before
    it returns: a process killed at any point (even ``kill -9``) loses at most the rows not
    yet saved. sqlite3 calls run in a worker thread (``anyio.to_thread``), one at a time, so
    the event loop never blocks on the disk.

    Use it as an async context manager (``async with SqliteScoreStore(path) as store``), or
    call :meth:`open` and :meth:`aclose`.

    With ``read_only=True`` the file is opened for reading only (``mode=ro``): nothing is
    created or written, so a database on a read-only filesystem or owned by another user can
    be read; :meth:`save` then fails with :class:`StoreError`.

    Args:
        path: the database file; created (with its table) when missing, unless ``read_only``.
        table: the table name.
        now: the wall clock for ``createdAt``/``updatedAt`` (UTC ``datetime.now`` by default).
        read_only: open an existing database for reading only.
    """

    __slots__ = ("_conn", "_limiter", "_lock", "_now", "_path", "_read_only", "_table")
    _DIALECT = "sqlite"
    _MARK = "?"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        table: str = DEFAULT_TABLE,
        now: Now = utc_now,
        read_only: bool = False,
    ) -> None:
        self._path = os.fspath(path)
        self._table = check_table(table)
        self._now = now
        if read_only and self._path == ":memory:":
            raise ValueError("a read-only SqliteScoreStore needs a database file, not ':memory:'")
        self._read_only = read_only
        self._conn: sqlite3.Connection | None = None
        self._lock = anyio.Lock()
        self._limiter = anyio.CapacityLimiter(1)

    @property
    def url(self) -> str:
        """``sqlite:PATH``."""
        return f"sqlite:{self._path}"

    def __repr__(self) -> str:
        return f"SqliteScoreStore({self._path!r}, table={self._table!r})"

    async def _call(self, operation: str, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        async with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreError(
                    f"store {self.url} is not open (use 'async with' or await open())",
                    store=self.url, operation=operation,
                )
            try:
                return await anyio.to_thread.run_sync(fn, conn, limiter=self._limiter)
            except sqlite3.Error as exc:
                raise StoreError(
                    f"store {self.url}: {operation} failed: {describe(exc)}",
                    store=self.url, operation=operation,
                ) from exc

    async def open(self) -> None:
        """Connect, switch to WAL mode and create the table if needed.

        Raises:
            StoreError: the file cannot be opened or created.
        """
        if self._conn is not None:
            return
        try:
            conn = await anyio.to_thread.run_sync(self._connect, limiter=self._limiter)
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open store {self.url}: {describe(exc)}", store=self.url,
                operation="open",
            ) from exc
        self._conn = conn

    def _connect(self) -> sqlite3.Connection:
        if self._read_only:
            return self._connect_read_only()
        if self._path != ":memory:":
            parent = Path(self._path).parent
            if not parent.is_dir():
                raise sqlite3.OperationalError(f"directory {str(parent)!r} does not exist")
        # isolation_level=None: explicit BEGIN/COMMIT below; the connection is used from
        # whichever worker thread anyio picks, one call at a time (hence check_same_thread).
        conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL under WAL survives a killed process (not a power cut) and is much faster.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=10000")
            conn.executescript(";\n".join(schema(self._table, "sqlite")) + ";")
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        path = Path(self._path)
        if not path.is_file():
            raise sqlite3.OperationalError(f"file {self._path!r} does not exist")
        # A reader of a WAL database normally creates the -wal and -shm files next to it: a
        # read-only directory cannot hold them, and left behind owned by us they would stop
        # another user from writing their own database. While any connection is open the
        # -wal file exists; when it does not, every commit is in the main file, which is then
        # read as immutable (no side files). Otherwise mode=ro reads the live WAL.
        live = any(Path(self._path + suffix).exists() for suffix in ("-wal", "-journal"))
        uri = path.resolve().as_uri() + ("?mode=ro" if live else "?mode=ro&immutable=1")
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout=10000")
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (self._table,)
            ).fetchone()
        except BaseException:
            conn.close()
            raise
        if found is None:
            conn.close()
            raise sqlite3.OperationalError(
                f"no table {self._table!r} in it (not a scorecore store?)"
            )
        return conn

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        async with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                await anyio.to_thread.run_sync(conn.close, limiter=self._limiter)

    async def save(self, rows: Sequence[ScoreRow], /) -> None:
        """Upsert ``rows`` in one transaction; a pair saved again replaces its row."""
        if rows:
            await self._write(records_of(rows, self.url))

    async def save_records(self, records: Sequence[tuple[Any, ...]], /) -> None:
        """Upsert the rows of ``records`` (of ``encode_rows``) in one transaction, as
        :meth:`save` upserts the rows."""
        if records:
            await self._write(records)

    async def _write(self, records: Sequence[tuple[Any, ...]]) -> None:
        # The save's time, the same in every row, written in the statement (as the NULLs are)
        # rather than bound twice per row: a statement per save is prepared once for
        # thousands of rows. An ISO time holds no quote; doubled anyway, as SQL escapes one.
        now = "'" + self._now().isoformat().replace("'", "''") + "'"
        by_nulls = _by_nulls(records)

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for kept, values in by_nulls.items():
                    marks = ["?" if value else "NULL" for value in kept]
                    conn.executemany(upsert_sql(self._table, [*marks, now, now]), values)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

        await self._call("save", write)

    async def completed(self, batch_id: str, /) -> dict[tuple[str, str], CompletedScore]:
        """The final (scored or not-scorable) outcomes stored for ``batch_id``."""
        metadata = q(METADATA)
        # json_valid first, as in list_run: another writer's text must not fail the query.
        sql = completed_sql(self._table, "?", f"CASE WHEN json_valid({metadata}) THEN "
                                              f"json_extract({metadata}, '$.notScorable.kind') END")

        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return conn.execute(sql, (batch_id,)).fetchall()

        records: list[tuple[Any, ...]] = await self._call("completed", read)
        return completed_from(records, store=self.url)

    async def has_batch(self, batch_id: str, /) -> bool:
        """Whether any row (of any status) is stored for ``batch_id``."""
        sql = f"SELECT 1 FROM {q(self._table)} WHERE {q(BATCH_ID)} = ? LIMIT 1"  # noqa: S608 - checked identifiers only

        def read(conn: sqlite3.Connection) -> bool:
            return conn.execute(sql, (batch_id,)).fetchone() is not None

        found: bool = await self._call("has_batch", read)
        return found

    def _table_name(self) -> str:
        return self._table

    def _list_sql(self) -> str:
        # json_valid first: json_extract of text that is not JSON (another writer's row)
        # fails the whole query; such a row is read last and decoding names it.
        metadata = q(METADATA)
        return list_sql(self._table, "?", f"CASE WHEN json_valid({metadata}) "
                                          f"THEN json_extract({metadata}, '$.itemIndex') END")

    async def list_run(self, batch_id: str, /) -> list[ScoreRow]:
        """Every row of ``batch_id``, by dataset position, then scorer id."""
        sql = self._list_sql()

        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return conn.execute(sql, (batch_id,)).fetchall()

        records: list[tuple[Any, ...]] = await self._call("list_run", read)
        return [row_from(record, json_text=True, store=self.url) for record in records]

    async def list_batches(self) -> list[BatchSummary]:
        """Every stored batch, oldest first (``scorecore batches``)."""
        batches, scorers = batches_sql(self._table), scorers_sql(self._table)

        def read(conn: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
            return conn.execute(batches).fetchall(), conn.execute(scorers).fetchall()

        records: tuple[list[Any], list[Any]] = await self._call("list_batches", read)
        try:
            return summaries(*records)
        except UnreadableTime as bad:
            raise await self._holding(bad) from None

    async def _holding(self, bad: UnreadableTime) -> StoredRowError:
        """The error naming the row that holds ``bad`` (decoding it raises that error)."""
        sql = row_with_sql(self._table, "?", bad.column)

        def read(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            found: tuple[Any, ...] | None = conn.execute(sql, (bad.batch_id, bad.value)).fetchone()
            return found

        record = await self._call("list_batches", read)
        row = None if record is None else row_from(record, json_text=True, store=self.url,
                                                   operation="list_batches")
        return unreadable(row, bad, self.url)

    async def batch_scorers(self, batch_id: str, /) -> dict[str, frozenset[str | None]]:
        """Each scorer of ``batch_id`` with the fingerprints its rows record."""
        sql = fingerprints_sql(self._table, "sqlite", "?")

        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return conn.execute(sql, (batch_id,)).fetchall()

        scorers, unreadable = scorers_from(await self._call("compare", read))
        if unreadable is not None:
            # By batch first: the batch is indexed, the id is not (see _schema).
            row = (f"SELECT {', '.join(q(c) for c in WRITTEN)} FROM {q(self._table)} "  # noqa: S608 - checked identifiers only
                   f"WHERE {q(BATCH_ID)} = ? AND {q(ID)} = ?")

            def read_row(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
                return conn.execute(row, (batch_id, unreadable)).fetchall()

            for record in await self._call("compare", read_row):
                # Raises the StoredRowError naming the row, its column and its value.
                row_from(record, json_text=True, store=self.url, operation="compare")
        return scorers

    async def items_only_in(self, batch_id: str, other: str, /) -> list[str]:
        """The item ids of ``batch_id`` that ``other`` lacks, sorted."""
        sql = only_in_sql(self._table, "sqlite", "?")

        def read(conn: sqlite3.Connection) -> list[str]:
            return [str(item) for (item,) in conn.execute(sql, (batch_id, other))]

        found: list[str] = await self._call("compare", read)
        return found

    async def _records(
        self, operation: str, sql: str, params: tuple[Any, ...]
    ) -> AsyncGenerator[list[tuple[Any, ...]], None]:
        """The records of ``sql``, :data:`PAGE` at a time, from one cursor."""
        cursor: sqlite3.Cursor = await self._call(operation, lambda conn: conn.execute(sql,
                                                                                       params))
        try:
            while True:
                records: list[tuple[Any, ...]] = await self._call(
                    operation, lambda _conn: cursor.fetchmany(PAGE))
                if not records:
                    return
                yield records
        finally:
            cursor.close()


# Compared with a record column by column (map stops at the record's end): which hold a value.
_NONES: Final = (None,) * len(WRITTEN)


def _by_nulls(
    records: Sequence[tuple[Any, ...]],
) -> dict[tuple[bool, ...], list[tuple[Any, ...]]]:
    """``records`` grouped by the columns they leave NULL (``True``: a value), each without its
    ``None`` values, which the statement of its group writes as ``NULL`` instead.

    sqlite3 binds ``None`` the slow way: it looks for an adapter of ``NoneType`` first, and
    failing to find one formats an ``AttributeError`` message it throws away, for each ``None``
    (some 2,000 instructions each, counted with callgrind; about half the columns of a row are
    ``None``). Writing ``NULL`` in the SQL stores the same NULL. One record per
    pair first (the last one saved, under the first one's id, as upserting them in order
    leaves), so that the groups' order cannot change which one a pair keeps.
    """
    groups: dict[tuple[bool, ...], list[tuple[Any, ...]]] = {}
    # Per group, its columns' getter: a record's values in one C call. A record's key columns
    # are never None, so each getter takes several columns and gives a tuple.
    getters: dict[tuple[bool, ...], Callable[[tuple[Any, ...]], tuple[Any, ...]]] = {}
    for record in one_per_pair(records):
        kept = tuple(map(operator.is_not, record, _NONES))
        group = groups.get(kept)
        if group is None:
            group = groups[kept] = []
            getters[kept] = operator.itemgetter(*compress(range(len(kept)), kept))
        group.append(getters[kept](record))
    return groups
