"""The PostgreSQL store, through psycopg 3 (the ``postgres`` extra)."""

from __future__ import annotations

import asyncio
import contextlib
import operator
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Sequence
from typing import Any, Final, final

import anyio
import anyio.to_thread

from scorecore.evals import ScoreRow, StoreError
from scorecore.evals.store import BatchSummary, CompletedScore
from scorecore_adapters._resources import AsyncResource
from scorecore_adapters.storage._batches import (
    UnreadableTime,
    batches_sql,
    scorers_sql,
    summaries,
    unreadable,
)
from scorecore_adapters.storage._common import Now, describe, import_psycopg, redact_url, utc_now
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
    JSON_COLUMNS,
    METADATA,
    RUN_ID,
    SCORER_ID,
    WRITTEN,
    check_table,
    completed_from,
    completed_sql,
    list_sql,
    one_per_pair,
    params_of,
    q,
    row_from,
    row_with_sql,
    schema,
    stamped,
    upsert_from_sql,
    upsert_sql,
)

__all__ = ["PostgresScoreStore"]

COPY_FROM: Final = 64
"""Rows from which a save copies them (COPY) rather than upserting each: below it, the two
more round trips (make the staging table if missing, copy) cost more CPU than they save
(``benchmarks/store_scale.py pg`` and pages of 1 to 128 rows: even at about 32, ahead from 64)."""
_STAGING: Final = "scorecore staging"
"""The temporary table a copied save goes through (a space: no table a store is given)."""
# Upserts take their rows by pair, by code point (COLLATE "C": UTF-8 bytes sort as code points,
# as Python sorts str), so that two writers upserting the same pairs lock their rows in the
# same order and never deadlock.
_BY_PAIR: Final = f'ORDER BY {q(RUN_ID)} COLLATE "C", {q(SCORER_ID)} COLLATE "C"'
_PAIR: Final = operator.itemgetter(WRITTEN.index(RUN_ID), WRITTEN.index(SCORER_ID))


@final
class PostgresScoreStore(PagedReads, AsyncResource):
    """A :class:`~scorecore.evals.store.ScoreStore` in PostgreSQL, through psycopg 3.

    JSON columns are ``jsonb``, timestamps ``timestamptz``. Each :meth:`save` is one
    transaction: an upsert per row (pipelined by ``executemany``), or for many rows a ``COPY``
    into the session's temporary staging table and one upsert from it. On asyncio the store uses
    psycopg's ``AsyncConnection``; psycopg's async API supports asyncio only, so on trio it
    runs a regular connection in a worker thread instead (same SQL, same behaviour).

    Args:
        dsn: a libpq connection string, e.g. ``"postgresql://user:pass@host:5432/db"``.
        table: the table name.
        now: the wall clock for ``createdAt``/``updatedAt`` (UTC ``datetime.now`` by default).
        connect_timeout: seconds allowed to connect.
        read_only: create nothing and run every transaction read-only (a role with only
            ``SELECT`` rights can read); :meth:`save` then fails with :class:`StoreError`.
    """

    __slots__ = (
        "_aconn", "_conn", "_dsn", "_limiter", "_lock", "_now", "_read_only", "_table",
        "_timeout", "_upsert_row", "_upsert_staged",
    )
    _DIALECT = "postgres"
    _MARK = "%s"

    def __init__(
        self,
        dsn: str,
        *,
        table: str = DEFAULT_TABLE,
        now: Now = utc_now,
        connect_timeout: float = 10.0,
        read_only: bool = False,
    ) -> None:
        self._dsn = dsn
        self._table = check_table(table)
        self._now = now
        self._timeout = connect_timeout
        self._read_only = read_only
        self._aconn: Any = None
        self._conn: Any = None
        marks = ["%s::jsonb" if c in JSON_COLUMNS else "%s" for c in WRITTEN]
        self._upsert_row = upsert_sql(self._table, marks)
        self._upsert_staged = upsert_from_sql(self._table, _STAGING, _BY_PAIR)
        self._lock = anyio.Lock()
        self._limiter = anyio.CapacityLimiter(1)

    @property
    def url(self) -> str:
        """The DSN without its password."""
        return redact_url(self._dsn)

    def __repr__(self) -> str:
        return f"PostgresScoreStore({self.url!r}, table={self._table!r})"

    def _setup(self) -> list[str]:
        """What a new connection runs: the schema, or (read-only) the session's read-only mode."""
        if self._read_only:
            return ["SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"]
        return schema(self._table, "postgres")

    @staticmethod
    def _asyncio() -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # trio (or no loop): not asyncio
            return False
        return True

    async def open(self) -> None:
        """Connect and create the table if needed.

        Raises:
            StoreError: psycopg is not installed, the server cannot be reached, or it refuses
                the login or the schema.
        """
        psycopg = import_psycopg(self.url)

        if self._aconn is not None or self._conn is not None:
            return
        try:
            if self._asyncio():
                aconn = await psycopg.AsyncConnection.connect(
                    self._dsn, autocommit=True, connect_timeout=max(1, round(self._timeout))
                )
                try:
                    for statement in self._setup():
                        await aconn.execute(statement)
                except BaseException:
                    await aconn.close()
                    raise
                self._aconn = aconn
            else:
                self._conn = await anyio.to_thread.run_sync(self._connect_sync,
                                                            limiter=self._limiter)
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot open store {self.url}: {describe(exc)}", store=self.url,
                operation="open",
            ) from exc

    def _connect_sync(self) -> Any:
        import psycopg  # noqa: PLC0415 - optional dependency

        conn = psycopg.Connection.connect(
            self._dsn, autocommit=True, connect_timeout=max(1, round(self._timeout))
        )
        try:
            for statement in self._setup():
                conn.execute(statement)
        except BaseException:
            conn.close()
            raise
        return conn

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        async with self._lock:
            aconn, self._aconn = self._aconn, None
            conn, self._conn = self._conn, None
            if aconn is not None:
                await aconn.close()
            if conn is not None:
                await anyio.to_thread.run_sync(conn.close, limiter=self._limiter)

    @contextlib.asynccontextmanager
    async def _connection(self, operation: str) -> AsyncIterator[None]:
        """Hold the connection (one operation at a time); a driver error becomes a
        :class:`StoreError` naming ``operation``."""
        import psycopg  # noqa: PLC0415 - optional dependency

        async with self._lock:
            if self._aconn is None and self._conn is None:
                raise StoreError(
                    f"store {self.url} is not open (use 'async with' or await open())",
                    store=self.url, operation=operation,
                )
            try:
                yield
            except psycopg.Error as exc:
                raise StoreError(
                    f"store {self.url}: {operation} failed: {describe(exc)}",
                    store=self.url, operation=operation,
                ) from exc

    async def _run(
        self, operation: str, sql: str, params: Any, *, many: bool = False, copy: bool = False
    ) -> list[tuple[Any, ...]]:
        async with self._connection(operation):
            if self._aconn is not None:
                records: list[tuple[Any, ...]] = await self._run_async(
                    self._aconn, sql, params, many=many, copy=copy
                )
                return records
            conn = self._conn

            def call() -> list[tuple[Any, ...]]:
                found: list[tuple[Any, ...]] = self._run_sync(conn, sql, params, many=many,
                                                              copy=copy)
                return found

            return await anyio.to_thread.run_sync(call, limiter=self._limiter)

    def _staging(self) -> tuple[str, str]:
        """The statements of a copied save before its upsert: make the staging table if this
        session lacks it, copy into it.

        The staging table is temporary, so each connection (each store, each process) has its
        own: concurrent writers never share one. It outlives the transaction (its rows do not:
        ``ON COMMIT DELETE ROWS``), sparing every save the creation and removal of a table; a
        transaction that made it and failed takes it away, and the next save makes it again.
        Its name is no plain identifier, so it never hides a store's table of that name.
        """
        names = ", ".join(q(c) for c in WRITTEN)
        return (f"CREATE TEMP TABLE IF NOT EXISTS {q(_STAGING)} ON COMMIT DELETE ROWS AS "  # noqa: S608 - checked identifiers only
                f"SELECT {names} FROM {q(self._table)} WITH NO DATA",
                f"COPY {q(_STAGING)} ({names}) FROM STDIN")

    async def _run_async(
        self, aconn: Any, sql: str, params: Any, *, many: bool, copy: bool
    ) -> Any:
        async with aconn.transaction(), aconn.cursor() as cur:
            if copy:
                create, copy_sql = self._staging()
                await cur.execute(create)
                async with cur.copy(copy_sql) as writing:
                    for record in params:
                        await writing.write_row(record)
                await cur.execute(sql)
                return []
            if many:
                await cur.executemany(sql, params)
                return []
            await cur.execute(sql, params)
            return await cur.fetchall()

    def _run_sync(self, conn: Any, sql: str, params: Any, *, many: bool, copy: bool) -> Any:
        with conn.transaction(), conn.cursor() as cur:
            if copy:
                create, copy_sql = self._staging()
                cur.execute(create)
                with cur.copy(copy_sql) as writing:
                    for record in params:
                        writing.write_row(record)
                cur.execute(sql)
                return []
            if many:
                cur.executemany(sql, params)
                return []
            cur.execute(sql, params)
            return cur.fetchall()

    async def save(self, rows: Sequence[ScoreRow], /) -> None:
        """Upsert ``rows`` in one transaction; a pair saved again replaces its row.

        Many rows (64 or more) are copied (``COPY``) into a temporary table and upserted
        from it by one statement: several times faster than an upsert per row, and the same
        rows stored.
        """
        if rows:
            await self._write(params_of(rows, self._now(), self.url))

    async def save_records(self, records: Sequence[tuple[Any, ...]], /) -> None:
        """Upsert the rows of ``records`` (of ``encode_rows``) in one transaction, as
        :meth:`save` upserts the rows."""
        if records:
            await self._write(stamped(records, self._now()))

    async def _write(self, params: list[tuple[Any, ...]]) -> None:
        if len(params) >= COPY_FROM:
            # One record per pair: one INSERT ... ON CONFLICT cannot change a row twice.
            await self._run("save", self._upsert_staged, one_per_pair(params), copy=True)
            return
        # By pair, as the copied upsert orders them (see _staging); a pair's records keep
        # their order, so the last one saved still wins.
        params.sort(key=_PAIR)
        await self._run("save", self._upsert_row, params, many=True)

    async def completed(self, batch_id: str, /) -> dict[tuple[str, str], CompletedScore]:
        """The final (scored or not-scorable) outcomes stored for ``batch_id``."""
        kind = f"{q(METADATA)}->'notScorable'->>'kind'"
        records = await self._run("completed", completed_sql(self._table, "%s", kind),
                                  (batch_id,))
        return completed_from(records, store=self.url)

    async def has_batch(self, batch_id: str, /) -> bool:
        """Whether any row (of any status) is stored for ``batch_id``."""
        sql = f"SELECT EXISTS (SELECT 1 FROM {q(self._table)} WHERE {q(BATCH_ID)} = %s)"  # noqa: S608 - checked identifiers only
        records = await self._run("has_batch", sql, (batch_id,))
        return bool(records[0][0])

    def _table_name(self) -> str:
        return self._table

    def _list_sql(self) -> str:
        # Only a JSON number is cast: another writer's "itemIndex": "3" must not fail the query.
        index = f"{q(METADATA)}->'itemIndex'"
        item_index = (f"CASE WHEN jsonb_typeof({index}) = 'number' "
                      f"THEN ({q(METADATA)}->>'itemIndex')::numeric END NULLS LAST")
        return list_sql(self._table, "%s", item_index)

    async def list_run(self, batch_id: str, /) -> list[ScoreRow]:
        """Every row of ``batch_id``, by dataset position, then scorer id."""
        records = await self._run("list_run", self._list_sql(), (batch_id,))
        return [row_from(record, json_text=False, store=self.url) for record in records]

    async def batch_scorers(self, batch_id: str, /) -> dict[str, frozenset[str | None]]:
        """Each scorer of ``batch_id`` with the fingerprints its rows record."""
        records = await self._run("compare", fingerprints_sql(self._table, "postgres", "%s"),
                                  (batch_id,))
        scorers, unreadable = scorers_from(records)
        if unreadable is not None:
            sql = (f"SELECT {', '.join(q(c) for c in WRITTEN)} FROM {q(self._table)} "  # noqa: S608 - checked identifiers only
                   f"WHERE {q(ID)} = %s")
            for record in await self._run("compare", sql, (unreadable,)):
                # Raises the StoredRowError naming the row, its column and its value.
                row_from(record, json_text=False, store=self.url, operation="compare")
        return scorers

    async def items_only_in(self, batch_id: str, other: str, /) -> list[str]:
        """The item ids of ``batch_id`` that ``other`` lacks, sorted."""
        records = await self._run("compare", only_in_sql(self._table, "postgres", "%s"),
                                  (batch_id, other))
        return [str(item) for (item,) in records]

    async def _records(
        self, operation: str, sql: str, params: tuple[Any, ...]
    ) -> AsyncGenerator[list[tuple[Any, ...]], None]:
        """The records of ``sql``, :data:`PAGE` at a time, from a server-side cursor (its
        transaction holds the connection until the last page)."""
        async with self._connection(operation):
            if self._aconn is not None:
                async with self._aconn.transaction(), \
                        self._aconn.cursor(name="scorecore_read") as cur:
                    await cur.execute(sql, params)
                    while records := await cur.fetchmany(PAGE):
                        yield records
                return
            # trio: the same cursor in a generator each of whose steps runs in the worker
            # thread, so that no network call blocks the event loop.
            pages = _pages(self._conn, sql, params)
            try:
                while records := await anyio.to_thread.run_sync(
                        next, pages, [], limiter=self._limiter):
                    yield records
            finally:
                await anyio.to_thread.run_sync(pages.close, limiter=self._limiter)

    async def list_batches(self) -> list[BatchSummary]:
        """Every stored batch, oldest first (``scorecore batches``)."""
        batches = await self._run("list_batches", batches_sql(self._table), ())
        scorers = await self._run("list_batches", scorers_sql(self._table), ())
        try:
            return summaries(batches, scorers)
        except UnreadableTime as bad:  # timestamptz columns: only a table of another schema
            records = await self._run("list_batches", row_with_sql(self._table, "%s", bad.column),
                                      (bad.batch_id, bad.value))
            row = None if not records else row_from(records[0], json_text=False,
                                                    store=self.url, operation="list_batches")
            raise unreadable(row, bad, self.url) from None


def _pages(conn: Any, sql: str, params: tuple[Any, ...]) -> Generator[list[tuple[Any, ...]]]:
    with conn.transaction(), conn.cursor(name="scorecore_read") as cur:
        cur.execute(sql, params)
        while records := cur.fetchmany(PAGE):
            yield records
