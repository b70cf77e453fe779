"""Score stores: SQLite (the embedded default) and PostgreSQL, plus :func:`open_store`.

Both implement :class:`scorecore.ScoreStore` over one table (``scorecore_scores`` by default)
whose columns are Mastra's ``mastra_scorers`` columns, camelCase and quoted, plus scorecore's
``status`` column. ``("runId", "scorerId")`` is unique and every save is an upsert inside one
transaction, so saving is idempotent and a batch killed at any point resumes cleanly.

>>> import anyio
>>> from scorecore.evals import ScoreRow
>>> async def demo() -> list[str]:
...     async with SqliteScoreStore(":memory:") as store:
...         row = ScoreRow(id="r1/s", scorer_id="s", run_id="r1", batch_id="b", status="scored",
...                        score=1.0)
...         await store.save([row])
...         await store.save([row])  # idempotent: still one row
...         return [r.run_id for r in await store.list_run("b")]
>>> anyio.run(demo)
['r1']
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self, TypeAlias, final
from urllib.parse import urlsplit, urlunsplit

import anyio
import anyio.to_thread

from scorecore.evals import CompletedScore, ScoreRow, StoreError, storable_row

__all__ = [
    "DEFAULT_TABLE",
    "PostgresScoreStore",
    "SqliteScoreStore",
    "open_store",
    "redact_url",
]

DEFAULT_TABLE: Final = "scorecore_scores"
"""The table both stores use unless told otherwise."""

Now: TypeAlias = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(UTC)


# Column name, whether it holds JSON, the ScoreRow attribute.
_COLUMNS: Final[tuple[tuple[str, bool, str], ...]] = (
    ("id", False, "id"),
    ("scorerId", False, "scorer_id"),
    ("runId", False, "run_id"),
    ("batchId", False, "batch_id"),
    ("status", False, "status"),
    ("score", False, "score"),
    ("reason", False, "reason"),
    ("scorer", True, "scorer"),
    ("input", True, "input"),
    ("output", True, "output"),
    ("preprocessStepResult", True, "preprocess_step_result"),
    ("analyzeStepResult", True, "analyze_step_result"),
    ("preprocessPrompt", False, "preprocess_prompt"),
    ("analyzePrompt", False, "analyze_prompt"),
    ("generateScorePrompt", False, "generate_score_prompt"),
    ("generateReasonPrompt", False, "generate_reason_prompt"),
    ("additionalContext", True, "additional_context"),
    ("requestContext", True, "request_context"),
    ("entityType", False, "entity_type"),
    ("entity", True, "entity"),
    ("entityId", False, "entity_id"),
    ("source", False, "source"),
    ("datasetItemId", False, "dataset_item_id"),
    ("metadata", True, "metadata"),
    ("traceId", False, "trace_id"),
    ("spanId", False, "span_id"),
)
# Mastra's other columns, kept (always NULL here) so the table has Mastra's full shape.
_MASTRA_ONLY: Final = (
    "extractStepResult", "extractPrompt", "reasonPrompt", "resourceId",
    "threadId", "organizationId", "projectId", "datasetId",
)
_JSON_MASTRA_ONLY: Final = frozenset({"extractStepResult"})
_WRITTEN: Final = (*(c for c, _, _ in _COLUMNS), "createdAt", "updatedAt")


def _q(name: str) -> str:
    return f'"{name}"'


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def _check_table(table: str) -> str:
    if not _IDENTIFIER.fullmatch(table):
        raise ValueError(f"table must be a plain SQL identifier (letters, digits, _): {table!r}")
    return table


def _encode(value: Any) -> str | None:
    # Values come from storable_row: plain JSON, no NUL or lone surrogate, bounded depth.
    return None if value is None else json.dumps(value, ensure_ascii=False, allow_nan=False)


def _decode(value: Any) -> Any:
    return None if value is None else json.loads(value)


def _params(row: ScoreRow, now: str | datetime) -> tuple[Any, ...]:
    # storable_row makes any row storable: what neither store keeps (PostgreSQL refuses NUL,
    # UTF-8 lone surrogates; deep nesting and huge ints break the JSON codecs) is replaced and
    # listed in metadata["sanitized"], so one odd value never fails a whole save.
    row = storable_row(row)
    values = [
        _encode(getattr(row, attr)) if is_json else getattr(row, attr)
        for _, is_json, attr in _COLUMNS
    ]
    return (*values, now, now)


def _params_of(rows: Sequence[ScoreRow], now: str | datetime, store: str) -> list[tuple[Any, ...]]:
    try:
        return [_params(row, now) for row in rows]
    except ValueError as exc:  # a key column no store can keep (see storable_row)
        raise StoreError(
            f"store {store}: save failed: {exc}", store=store, operation="save"
        ) from exc


def _row_from(record: Mapping[str, Any], *, json_text: bool) -> ScoreRow:
    """A row from a record; ``json_text`` when JSON columns come back as text (SQLite)."""
    fields: dict[str, Any] = {}
    for column, is_json, attr in _COLUMNS:
        value = record[column]
        fields[attr] = _decode(value) if is_json and json_text else value
    if fields["scorer"] is None:
        fields["scorer"] = {}
    for column, attr in (("createdAt", "created_at"), ("updatedAt", "updated_at")):
        value = record[column]
        fields[attr] = datetime.fromisoformat(value) if isinstance(value, str) else value
    return ScoreRow(**fields)


def redact_url(url: str) -> str:
    """The store URL with any password replaced by ``***`` (for messages and logs).

    >>> redact_url("postgresql://me:s3cret@db:5432/scores")
    'postgresql://me:***@db:5432/scores'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _import_psycopg(store: str) -> Any:
    """The psycopg module, or a :class:`StoreError` naming the extra that installs it."""
    try:
        import psycopg  # noqa: PLC0415 - optional dependency, only needed for PostgreSQL
    except ImportError as exc:
        raise StoreError(
            f"store {store} needs the PostgreSQL driver psycopg, which cannot be imported "
            f"({_describe(exc)}): pip install 'scorecore[postgres]'",
            store=store, operation="open",
        ) from exc
    return psycopg


# --------------------------------------------------------------------------- SQLite


@final
class SqliteScoreStore:
    """A :class:`~scorecore.ScoreStore` in a SQLite file (or ``":memory:"``).

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

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        table: str = DEFAULT_TABLE,
        now: Now = _utc_now,
        read_only: bool = False,
    ) -> None:
        self._path = os.fspath(path)
        self._table = _check_table(table)
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

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

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
                    f"store {self.url}: {operation} failed: {_describe(exc)}",
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
                f"cannot open store {self.url}: {_describe(exc)}", store=self.url,
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
            conn.executescript(self._schema())
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

    def _schema(self) -> str:
        t = _q(self._table)
        columns = [
            '"id" TEXT PRIMARY KEY',
            '"scorerId" TEXT NOT NULL',
            '"runId" TEXT NOT NULL',
            '"batchId" TEXT',
            '"status" TEXT NOT NULL',
            '"score" REAL',
        ]
        columns += [
            f"{_q(c)} TEXT" for c, _, _ in _COLUMNS[6:]
        ]
        columns += [f"{_q(c)} TEXT" for c in _MASTRA_ONLY]
        columns += ['"createdAt" TEXT NOT NULL', '"updatedAt" TEXT NOT NULL',
                    'UNIQUE ("runId", "scorerId")']
        return (
            f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(columns)});\n"
            f'CREATE INDEX IF NOT EXISTS {_q(self._table + "_batch")} ON {t} ("batchId");\n'
        )

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        async with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                await anyio.to_thread.run_sync(conn.close, limiter=self._limiter)

    async def save(self, rows: Sequence[ScoreRow], /) -> None:
        """Upsert ``rows`` in one transaction; a pair saved again replaces its row."""
        if not rows:
            return
        stamp = self._now().isoformat()
        params = _params_of(rows, stamp, self.url)
        names = ", ".join(_q(c) for c in _WRITTEN)
        marks = ", ".join("?" for _ in _WRITTEN)
        updates = ", ".join(
            f"{_q(c)} = excluded.{_q(c)}" for c in _WRITTEN if c not in ("id", "createdAt")
        )
        sql = (
            f"INSERT INTO {_q(self._table)} ({names}) VALUES ({marks}) "  # noqa: S608 - checked identifiers only
            f'ON CONFLICT ("runId", "scorerId") DO UPDATE SET {updates}'
        )

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(sql, params)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

        await self._call("save", write)

    async def completed(self, batch_id: str, /) -> dict[tuple[str, str], CompletedScore]:
        """The final (scored or not-scorable) outcomes stored for ``batch_id``."""
        sql = (
            f'SELECT "runId", "scorerId", "status", "score", "reason" FROM {_q(self._table)} '  # noqa: S608 - checked identifiers only
            f"""WHERE "batchId" = ? AND "status" IN ('scored', 'not_scorable')"""
        )

        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return conn.execute(sql, (batch_id,)).fetchall()

        records: list[tuple[Any, ...]] = await self._call("completed", read)
        return {
            (run_id, scorer_id): CompletedScore(status=status, score=score, reason=reason)
            for run_id, scorer_id, status, score, reason in records
        }

    async def has_batch(self, batch_id: str, /) -> bool:
        """Whether any row (of any status) is stored for ``batch_id``."""
        sql = f'SELECT 1 FROM {_q(self._table)} WHERE "batchId" = ? LIMIT 1'  # noqa: S608 - checked identifiers only

        def read(conn: sqlite3.Connection) -> bool:
            return conn.execute(sql, (batch_id,)).fetchone() is not None

        found: bool = await self._call("has_batch", read)
        return found

    async def list_run(self, batch_id: str, /) -> list[ScoreRow]:
        """Every row of ``batch_id``, by dataset position, then scorer id."""
        names = ", ".join(_q(c) for c in _WRITTEN)
        sql = (
            f'SELECT {names} FROM {_q(self._table)} WHERE "batchId" = ? '  # noqa: S608 - checked identifiers only
            f"""ORDER BY json_extract("metadata", '$.itemIndex'), "runId", "scorerId" """
        )

        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return conn.execute(sql, (batch_id,)).fetchall()

        records: list[tuple[Any, ...]] = await self._call("list_run", read)
        return [_row_from(dict(zip(_WRITTEN, record, strict=True)), json_text=True)
                for record in records]


# --------------------------------------------------------------------------- PostgreSQL


@final
class PostgresScoreStore:
    """A :class:`~scorecore.ScoreStore` in PostgreSQL, through psycopg 3.

    JSON columns are ``jsonb``, timestamps ``timestamptz``. Each :meth:`save` is one
    transaction (an upsert per row, pipelined by ``executemany``). On asyncio the store uses
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
        "_timeout",
    )

    def __init__(
        self,
        dsn: str,
        *,
        table: str = DEFAULT_TABLE,
        now: Now = _utc_now,
        connect_timeout: float = 10.0,
        read_only: bool = False,
    ) -> None:
        self._dsn = dsn
        self._table = _check_table(table)
        self._now = now
        self._timeout = connect_timeout
        self._read_only = read_only
        self._aconn: Any = None
        self._conn: Any = None
        self._lock = anyio.Lock()
        self._limiter = anyio.CapacityLimiter(1)

    @property
    def url(self) -> str:
        """The DSN without its password."""
        return redact_url(self._dsn)

    def __repr__(self) -> str:
        return f"PostgresScoreStore({self.url!r}, table={self._table!r})"

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _schema(self) -> list[str]:
        t = _q(self._table)
        json_cols = {c for c, is_json, _ in _COLUMNS if is_json} | _JSON_MASTRA_ONLY
        columns = [
            '"id" TEXT PRIMARY KEY',
            '"scorerId" TEXT NOT NULL',
            '"runId" TEXT NOT NULL',
            '"batchId" TEXT',
            '"status" TEXT NOT NULL',
            '"score" DOUBLE PRECISION',
        ]
        columns += [
            f"{_q(c)} {'JSONB' if c in json_cols else 'TEXT'}"
            for c in (*(c for c, _, _ in _COLUMNS[6:]), *_MASTRA_ONLY)
        ]
        columns += ['"createdAt" TIMESTAMPTZ NOT NULL', '"updatedAt" TIMESTAMPTZ NOT NULL',
                    'UNIQUE ("runId", "scorerId")']
        return [
            f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(columns)})",
            f'CREATE INDEX IF NOT EXISTS {_q(self._table + "_batch")} ON {t} ("batchId")',
        ]

    def _setup(self) -> list[str]:
        """What a new connection runs: the schema, or (read-only) the session's read-only mode."""
        if self._read_only:
            return ["SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"]
        return self._schema()

    def _upsert_sql(self) -> str:
        json_cols = {c for c, is_json, _ in _COLUMNS if is_json}
        names = ", ".join(_q(c) for c in _WRITTEN)
        marks = ", ".join("%s::jsonb" if c in json_cols else "%s" for c in _WRITTEN)
        updates = ", ".join(
            f"{_q(c)} = EXCLUDED.{_q(c)}" for c in _WRITTEN if c not in ("id", "createdAt")
        )
        return (
            f"INSERT INTO {_q(self._table)} ({names}) VALUES ({marks}) "  # noqa: S608 - checked identifiers only
            f'ON CONFLICT ("runId", "scorerId") DO UPDATE SET {updates}'
        )

    def _completed_sql(self) -> str:
        return (
            f'SELECT "runId", "scorerId", "status", "score", "reason" FROM {_q(self._table)} '  # noqa: S608 - checked identifiers only
            f"""WHERE "batchId" = %s AND "status" IN ('scored', 'not_scorable')"""
        )

    def _list_sql(self) -> str:
        names = ", ".join(_q(c) for c in _WRITTEN)
        return (
            f'SELECT {names} FROM {_q(self._table)} WHERE "batchId" = %s '  # noqa: S608 - checked identifiers only
            f"""ORDER BY ("metadata"->>'itemIndex')::bigint NULLS LAST, """
            f'"runId", "scorerId"'
        )

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
        psycopg = _import_psycopg(self.url)

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
                f"cannot open store {self.url}: {_describe(exc)}", store=self.url,
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

    async def _run(
        self, operation: str, sql: str, params: Any, *, many: bool = False
    ) -> list[tuple[Any, ...]]:
        import psycopg  # noqa: PLC0415 - optional dependency

        async with self._lock:
            if self._aconn is None and self._conn is None:
                raise StoreError(
                    f"store {self.url} is not open (use 'async with' or await open())",
                    store=self.url, operation=operation,
                )
            try:
                if self._aconn is not None:
                    records: list[tuple[Any, ...]] = await self._run_async(
                        self._aconn, sql, params, many=many
                    )
                    return records
                conn = self._conn

                def call() -> list[tuple[Any, ...]]:
                    found: list[tuple[Any, ...]] = self._run_sync(conn, sql, params, many=many)
                    return found

                return await anyio.to_thread.run_sync(call, limiter=self._limiter)
            except psycopg.Error as exc:
                raise StoreError(
                    f"store {self.url}: {operation} failed: {_describe(exc)}",
                    store=self.url, operation=operation,
                ) from exc

    @staticmethod
    async def _run_async(aconn: Any, sql: str, params: Any, *, many: bool) -> Any:
        async with aconn.transaction(), aconn.cursor() as cur:
            if many:
                await cur.executemany(sql, params)
                return []
            await cur.execute(sql, params)
            return await cur.fetchall()

    @staticmethod
    def _run_sync(conn: Any, sql: str, params: Any, *, many: bool) -> Any:
        with conn.transaction(), conn.cursor() as cur:
            if many:
                cur.executemany(sql, params)
                return []
            cur.execute(sql, params)
            return cur.fetchall()

    async def save(self, rows: Sequence[ScoreRow], /) -> None:
        """Upsert ``rows`` in one transaction; a pair saved again replaces its row."""
        if not rows:
            return
        stamp = self._now()
        await self._run("save", self._upsert_sql(), _params_of(rows, stamp, self.url),
                        many=True)

    async def completed(self, batch_id: str, /) -> dict[tuple[str, str], CompletedScore]:
        """The final (scored or not-scorable) outcomes stored for ``batch_id``."""
        records = await self._run("completed", self._completed_sql(), (batch_id,))
        return {
            (run_id, scorer_id): CompletedScore(status=status, score=score, reason=reason)
            for run_id, scorer_id, status, score, reason in records
        }

    async def has_batch(self, batch_id: str, /) -> bool:
        """Whether any row (of any status) is stored for ``batch_id``."""
        sql = f'SELECT EXISTS (SELECT 1 FROM {_q(self._table)} WHERE "batchId" = %s)'  # noqa: S608 - checked identifiers only
        records = await self._run("has_batch", sql, (batch_id,))
        return bool(records[0][0])

    async def list_run(self, batch_id: str, /) -> list[ScoreRow]:
        """Every row of ``batch_id``, by dataset position, then scorer id."""
        records = await self._run("list_run", self._list_sql(), (batch_id,))
        return [_row_from(dict(zip(_WRITTEN, record, strict=True)), json_text=False)
                for record in records]


# --------------------------------------------------------------------------- URLs

Store: TypeAlias = SqliteScoreStore | PostgresScoreStore


def open_store(url: str, *, table: str = DEFAULT_TABLE, read_only: bool = False) -> Store:
    """Build the store a URL names (not yet open: use ``async with``).

    ``sqlite:PATH`` (relative or absolute; ``sqlite:///abs/path`` and ``sqlite::memory:``
    work too) gives a :class:`SqliteScoreStore`; ``postgresql://…`` or ``postgres://…`` a
    :class:`PostgresScoreStore`. ``read_only=True`` opens an existing store for reading only
    (what ``scorecore show`` does).

    Raises:
        ValueError: the URL names no known store.
        StoreError: a PostgreSQL URL, but psycopg is not installed
            (``pip install 'scorecore[postgres]'``).

    >>> open_store("sqlite:scores.db")
    SqliteScoreStore('scores.db', table='scorecore_scores')
    >>> open_store("postgresql://me:pw@localhost/db")
    PostgresScoreStore('postgresql://me:***@localhost/db', table='scorecore_scores')
    """
    if url.startswith(("postgresql://", "postgres://")):
        _import_psycopg(redact_url(url))
        return PostgresScoreStore(url, table=table, read_only=read_only)
    if url.startswith("sqlite:"):
        path = url.removeprefix("sqlite:")
        if path.startswith("//"):
            # sqlite:///abs/path (SQLAlchemy style) → /abs/path; sqlite://rel → rel
            path = path[2:]
        if not path:
            raise ValueError(f"store URL {url!r} names no file; use sqlite:PATH")
        return SqliteScoreStore(path, table=table, read_only=read_only)
    raise ValueError(
        f"unknown store URL {redact_url(url)!r}; use sqlite:PATH or postgresql://USER@HOST/DB"
    )
