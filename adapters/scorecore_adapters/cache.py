"""Judge caches: a SQLite file, a PostgreSQL table shared by workers, and memory for tests.

Each implements :class:`scorecore.judge.economics.JudgeCache`. Give one to
``run_evals(..., cache=...)`` or to a single run with ``Runtime(meter=JudgeMeter(cache=...))``;
``open_cache(url)`` builds one from a URL (what ``scorecore eval --cache`` does).

A cache never raises for a storage problem: an entry that cannot be read is a miss, one that
cannot be written is dropped, and both are counted in ``errors`` (the last message, naming the
cache, in ``last_error``), so a broken cache costs judge calls, never a batch.
``await cache.check()`` says whether a cache that opens is usable (``thorough=True`` reads every
entry); ``scorecore eval`` warns once about a damaged cache, and ``--strict-cache`` refuses it.

>>> import anyio
>>> from scorecore.judge import JudgeResponse
>>> cache = MemoryJudgeCache()
>>> anyio.run(cache.put, "k", JudgeResponse(text="yes"))
>>> anyio.run(cache.get, "k").text, len(cache)
('yes', 1)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeAlias, final

import anyio
import anyio.lowlevel
import anyio.to_thread

from scorecore.judge import JudgeResponse
from scorecore_adapters._reply_rows import NUL_ESCAPE as _NUL_ESCAPE
from scorecore_adapters._reply_rows import WRAPPED as _WRAPPED
from scorecore_adapters._reply_rows import RowReader as _RowReader
from scorecore_adapters._reply_rows import decode as _decode
from scorecore_adapters._reply_rows import encode as _encode
from scorecore_adapters._resources import AsyncResource
from scorecore_adapters.storage._common import redact_url
from scorecore_adapters.storage._url import StoreUrl

__all__ = [
    "DEFAULT_CACHE_PATH",
    "AnyJudgeCache",
    "MemoryJudgeCache",
    "PostgresJudgeCache",
    "SqliteJudgeCache",
    "open_cache",
]

DEFAULT_CACHE_PATH = ".scorecore/cache.db"
"""Where ``scorecore eval`` keeps its judge cache unless told otherwise."""

_TABLE = "scorecore_judge_cache"
def _describe(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


_UNREADABLE_ENTRY = "an entry cannot be read back (damaged, or not written by scorecore)"
_COLUMNS = ("key", "response", "created_at")


@final
class MemoryJudgeCache:
    """A judge cache in a dict, for tests (and one-process runs that need no file).

    ``entries`` maps each key to its reply; ``gets`` and ``puts`` count the calls.
    """

    __slots__ = ("entries", "errors", "gets", "last_error", "puts")

    def __init__(self) -> None:
        self.entries: dict[str, JudgeResponse] = {}
        self.gets = 0
        self.puts = 0
        self.errors = 0
        self.last_error: str | None = None

    async def get(self, key: str, /) -> JudgeResponse | None:
        """The reply stored under ``key``, or ``None``."""
        self.gets += 1
        return self.entries.get(key)

    async def put(self, key: str, response: JudgeResponse, /) -> None:
        """Store ``response`` under ``key``."""
        self.puts += 1
        self.entries[key] = response

    async def check(self, *, thorough: bool = False) -> str | None:
        """Nothing in memory can be damaged: ``None`` (see :meth:`SqliteJudgeCache.check`)."""
        return None

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"MemoryJudgeCache({len(self.entries)} entries)"


class _ThreadedCache(AsyncResource):
    """The shared part of the SQL caches: a connection used from one worker thread."""

    _name: str

    def __init__(self) -> None:
        self._conn: Any = None
        self._limiter = anyio.CapacityLimiter(1)
        self._queue: list[tuple[str, str]] = []
        self._next: anyio.Event | None = None
        self._writing = False
        self.errors = 0
        self.last_error: str | None = None

    @property
    def name(self) -> str:
        """The cache as a URL (``sqlite:PATH``; a database URL without its password)."""
        return self._name

    _PARAM: str  # the driver's query placeholder: ``?`` (sqlite3) or ``%s`` (psycopg)

    def _connect(self) -> Any:
        raise NotImplementedError

    @staticmethod
    def _prepared(conn: Any, statements: Sequence[str]) -> Any:
        """``conn`` once ``statements`` ran on it (the table created, settings made); closed
        again if one fails, so a cache that cannot open leaves no connection behind."""
        try:
            for statement in statements:
                conn.execute(statement)
        except BaseException:
            conn.close()
            raise
        return conn

    def _get_sync(self, conn: Any, key: str) -> Any:
        row = conn.execute(
            f"SELECT response FROM {_TABLE} WHERE key = {self._PARAM}", (key,)  # noqa: S608
        ).fetchone()
        return None if row is None else row[0]

    def _failed(self, exc: BaseException | str) -> None:
        self.errors += 1
        what = exc if isinstance(exc, str) else _describe(exc)
        self.last_error = f"{self._name}: {what}"

    def _decoded(self, data: Any) -> JudgeResponse | None:
        response = _decode(data)
        if response is None:
            self._failed(_UNREADABLE_ENTRY)
        return response

    def _check_sync(self, conn: Any, thorough: bool) -> str | None:
        names = self._column_names(conn)
        missing = [c for c in _COLUMNS if c not in names]
        if missing:
            return (f"table {_TABLE} has no column {', '.join(missing)} (it has "
                    f"{', '.join(names) or 'none'}): every reply would be asked again")
        if not thorough:
            return None
        damaged = total = 0
        for (data,) in conn.execute(f"SELECT response FROM {_TABLE}"):  # noqa: S608
            total += 1
            damaged += _decode(data) is None
        if damaged:
            return (f"{damaged} of {total} entries cannot be read back (damaged, or not "
                    f"written by scorecore)")
        return None

    def _column_names(self, conn: Any) -> list[str]:
        raise NotImplementedError

    async def check(self, *, thorough: bool = False) -> str | None:
        """What is wrong with the cache, or ``None`` when it is usable.

        Always checks the table's shape (a file that opens but holds another table would make
        every lookup a miss); ``thorough`` also reads every entry back (and, for SQLite, runs
        ``PRAGMA quick_check`` on the file's pages) — what ``scorecore eval --strict-cache``
        does before it starts. A cache that cannot be read at all answers with the reason.

        Raises:
            OSError, sqlite3.Error, psycopg.Error: the cache cannot be opened (as
                :meth:`open`).
        """
        await self.open()

        def run(conn: Any) -> str | None:
            try:
                return self._check_sync(conn, thorough)
            except Exception as exc:  # noqa: BLE001 - any database error is the answer here
                return _describe(exc)

        found: str | None = await self._call(run)
        return found

    def _open_sync(self) -> Any:
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    async def _call(self, fn: Any, *args: Any) -> Any:
        def run() -> Any:
            return fn(self._open_sync(), *args)

        return await anyio.to_thread.run_sync(run, limiter=self._limiter)

    async def get(self, key: str, /) -> JudgeResponse | None:
        """The reply stored under ``key``; ``None`` for a miss or an unreadable entry."""
        try:
            data = await self._call(self._get_sync, key)
        except Exception as exc:  # noqa: BLE001 - a broken cache is a miss (see the module)
            self._failed(exc)
            return None
        return None if data is None else self._decoded(data)

    async def put(self, key: str, response: JudgeResponse, /) -> None:
        """Store ``response`` under ``key`` (replacing an older entry); return once committed.

        Concurrent puts are committed together (group commit): one worker-thread hop and one
        transaction for every entry queued while the previous one was written.
        """
        self._queue.append((key, _encode(response)))
        if self._next is None:
            self._next = anyio.Event()
        mine = self._next
        if self._writing:
            await mine.wait()
            return
        self._writing = True
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                done, self._next = self._next, None
                try:
                    await self._call(self._put_many_sync, batch)
                except Exception as exc:  # noqa: BLE001 - a broken cache drops the entries
                    self._failed(exc)
                finally:
                    if done is not None:
                        done.set()
        finally:
            self._writing = False
            if self._next is not None and self._queue:
                # Cancelled with entries queued: wake their callers; the next put writes them.
                self._next.set()
                self._next = None

    def _put_many_sync(self, conn: Any, batch: list[tuple[str, str]]) -> None:
        raise NotImplementedError

    async def open(self) -> None:
        """Connect (and create the table) now rather than on first use.

        Raises:
            OSError, sqlite3.Error, psycopg.Error: the cache cannot be opened — the one place
                a cache raises, so a command can refuse a bad ``--cache`` before it starts.
        """
        await anyio.to_thread.run_sync(self._open_sync, limiter=self._limiter)

    async def aclose(self) -> None:
        """Close the connection (idempotent); a later use opens it again."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await anyio.to_thread.run_sync(conn.close, limiter=self._limiter)



# How many writes the SQLite caches of this process committed: a snapshot begun before one
# may miss what it wrote (see SqliteJudgeCache._snapshot).
_WRITES = [0]


def _call_soon() -> Callable[[Callable[[], None]], object] | None:
    """How to have the event loop call a function at its next turn (asyncio's or trio's,
    the two anyio runs on), or ``None``."""
    try:
        return asyncio.get_running_loop().call_soon
    except RuntimeError:  # not asyncio
        pass
    trio = sys.modules.get("trio")
    if trio is None:
        return None
    try:
        token = trio.lowlevel.current_trio_token()
    except RuntimeError:
        return None
    soon: Callable[[Callable[[], None]], object] = token.run_sync_soon
    return soon


# The gets one read snapshot serves at most (about a millisecond of reads), so a long turn of
# the event loop still reads entries other processes wrote since it began.
_SNAPSHOT_GETS = 256
_READER_CACHE_KIB = 65_536  # the reading connection's page cache, at most (64 MiB)
# A warm re-run's one query per get, written once.
_GET_ONE = f"SELECT response FROM {_TABLE} WHERE key = ?"  # noqa: S608 - the table's own name


@final
class SqliteJudgeCache(_ThreadedCache):
    """A judge cache in a SQLite file, created (with its directory) on first use.

    Several processes may share the file (WAL mode; a busy file is waited for 30 s).
    """

    _PARAM = "?"

    def __init__(self, path: str | Path = DEFAULT_CACHE_PATH) -> None:
        super().__init__()
        self.path = Path(path)
        self._name = f"sqlite:{self.path}"
        self._reader: sqlite3.Connection | None = None
        # The reading connection's one cursor: a get runs its query and reads its row without
        # a turn of the event loop in between, so gets never share it half-read, and a cursor
        # made per query cost a measurable share of a get. The key is the table's primary
        # key, so fetchone steps the query to its end, which resets it.
        self._cursor: sqlite3.Cursor | None = None
        self._rows = _RowReader()
        # The read snapshot the gets of one turn of the event loop share (see _snapshot): the
        # gets it has left, the _WRITES count when it began, and whether its end is asked of
        # the event loop already.
        self._left = 0
        self._begun_after = 0
        self._turn_ends = False

    async def get(self, key: str, /) -> JudgeResponse | None:
        """The reply stored under ``key``; ``None`` for a miss or an unreadable entry.

        Read on the event loop's thread, at once, in one indexed query: a read of a local
        WAL file takes microseconds and never waits for a writer, while a hop to a worker
        thread, or a turn of the event loop to read the gets of concurrent runs together,
        costs more than the read (a warm re-run makes one get per prompt step). Writes still
        go through a worker thread.
        """
        try:
            if self._left > 0 and self._begun_after == _WRITES[0]:
                self._left -= 1
            else:
                self._snapshot()
            row = (self._cursor or self._inline_cursor()).execute(_GET_ONE, (key,)).fetchone()
        except (sqlite3.Error, OSError) as exc:  # a broken cache is a counted miss
            self._failed(exc)
            return None
        if row is None:
            return None
        data = row[0]
        # The row as _encode writes it, read here (a warm re-run reads tens of thousands);
        # any other row through _decoded, which counts the one that cannot be read.
        if type(data) is str:
            plain = self._rows.read(data)
            if plain is not None:
                return plain
        return self._decoded(data)

    async def put(self, key: str, response: JudgeResponse, /) -> None:
        """Store ``response`` under ``key``; return once committed.

        Written on the event loop's thread when the file is free (a WAL commit takes tens of
        microseconds); when another process holds the write lock, the write waits for it in
        a worker thread instead, never blocking the loop.
        """
        try:
            self._end_snapshot()  # the write, and the gets after it, see the file as it is
            self._put_many_sync(self._inline(), [(key, _encode(response))])
        except (sqlite3.Error, OSError):
            await super().put(key, response)  # busy (or broken): wait, or count the error
            return
        await anyio.lowlevel.checkpoint()

    def _snapshot(self) -> None:
        """Before a get outside a snapshot (or one to leave): begin one for the next gets.

        A query outside a transaction is a read transaction of its own, which SQLite begins
        with system calls (a lock of the WAL index taken and released, the file's size read):
        about a quarter of the CPU time of a cached read. The gets of one turn of the loop (a
        warm re-run's runs answer many steps before they yield) share one read transaction
        instead, begun at the turn's second get (a lone get costs what it did) and ended when
        the event loop next turns, after _SNAPSHOT_GETS gets, or before a get that follows a
        write by a cache of this process (which reads alone, as the first of a turn does).

        So a get sees every entry the SQLite caches of this process wrote before it, and
        every entry written by another process before the snapshot began, at most one turn
        of the event loop (and a few hundred reads) earlier: an entry another process wrote
        since may be missed, as a get made that moment earlier would have missed it. The
        snapshot is never held while the event loop waits, so it keeps no other process's
        checkpoint waiting.
        """
        reader = self._inline()
        if reader.in_transaction:  # its gets spent, or a write since it began
            reader.commit()
        self._left = 0
        written, self._begun_after = self._begun_after != _WRITES[0], _WRITES[0]
        if not self._turn_ends:  # the turn's first get: it reads alone
            soon = _call_soon()
            if soon is not None:
                soon(self._end_turn)
                self._turn_ends = True
        elif not written:  # (the first get after a write reads alone too)
            reader.execute("BEGIN")
            self._left = _SNAPSHOT_GETS - 1

    def _end_snapshot(self) -> None:
        self._left = 0
        reader = self._reader
        if reader is not None and reader.in_transaction:
            reader.commit()

    def _end_turn(self) -> None:
        # Called by the event loop, which must not see it raise (trio stops the run): a
        # failed commit of a read transaction leaves nothing to undo.
        self._turn_ends = False
        with contextlib.suppress(sqlite3.Error):
            self._end_snapshot()

    def _inline_cursor(self) -> sqlite3.Cursor:
        self._cursor = self._inline().cursor()
        return self._cursor

    def _inline(self) -> sqlite3.Connection:
        if self._reader is None:
            reader = self._connect()
            try:
                reader.execute("PRAGMA busy_timeout = 0")  # never wait on the event loop
                # A warm re-run reads every page of the file once; with SQLite's default
                # 2 MB page cache a larger file is read from the OS again and again (a
                # system call per page), with 64 MB at most once. Memory is taken as pages
                # are read, so a small file costs no more.
                reader.execute(f"PRAGMA cache_size = -{_READER_CACHE_KIB}")
            except BaseException:
                reader.close()
                raise
            self._reader = reader
        return self._reader

    async def aclose(self) -> None:
        """Close the connections (idempotent); a later use opens them again."""
        reader, self._reader = self._reader, None
        self._cursor = None
        self._left = 0
        self._turn_ends = False  # the loop may have stopped before the turn's end ran
        if reader is not None:
            reader.close()
        await super().aclose()

    def _connect(self) -> Any:
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=30.0
        )
        return self._prepared(conn, (
            "PRAGMA journal_mode=WAL",
            "PRAGMA synchronous=NORMAL",
            f"CREATE TABLE IF NOT EXISTS {_TABLE} "
            "(key TEXT PRIMARY KEY, response TEXT NOT NULL, created_at REAL NOT NULL)",
        ))

    def _column_names(self, conn: Any) -> list[str]:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({_TABLE})")]

    def _check_sync(self, conn: Any, thorough: bool) -> str | None:
        if thorough:
            found = [row[0] for row in conn.execute("PRAGMA quick_check")]
            if found != ["ok"]:
                return f"the file is damaged (quick_check: {'; '.join(map(str, found[:3]))})"
        return super()._check_sync(conn, thorough)

    def _put_many_sync(self, conn: Any, batch: list[tuple[str, str]]) -> None:
        now = time.time()
        with conn:  # one transaction
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                f"INSERT OR REPLACE INTO {_TABLE} (key, response, created_at) "  # noqa: S608
                "VALUES (?, ?, ?)", [(key, text, now) for key, text in batch],
            )
        _WRITES[0] += 1  # committed (after a failed one nothing is new to read)

    def __repr__(self) -> str:
        return f"SqliteJudgeCache({str(self.path)!r})"


@final
class PostgresJudgeCache(_ThreadedCache):
    """A judge cache in a PostgreSQL table, shared by every worker that points at it.

    Needs psycopg (``pip install 'scorecore[postgres]'``). The DSN's password never appears
    in a repr or an error.
    """

    _PARAM = "%s"

    def __init__(self, dsn: str, *, connect_timeout: float = 10.0) -> None:
        super().__init__()
        self._dsn = dsn
        self._timeout = connect_timeout
        self._name = redact_url(dsn)

    def _connect(self) -> Any:
        import psycopg  # noqa: PLC0415 - optional dependency, only needed here

        conn = psycopg.Connection.connect(
            self._dsn, autocommit=True, connect_timeout=max(1, round(self._timeout))
        )
        return self._prepared(conn, (
            f"CREATE TABLE IF NOT EXISTS {_TABLE} "
            "(key text PRIMARY KEY, response jsonb NOT NULL, "
            "created_at timestamptz NOT NULL DEFAULT now())",
        ))

    def _column_names(self, conn: Any) -> list[str]:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
            "AND table_schema = current_schema() ORDER BY ordinal_position", (_TABLE,),
        ).fetchall()
        return [str(row[0]) for row in rows]

    def _put_many_sync(self, conn: Any, batch: list[tuple[str, str]]) -> None:
        rows = [(key, json.dumps({_WRAPPED: data}) if _NUL_ESCAPE in data else data)
                for key, data in batch]
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {_TABLE} (key, response) VALUES (%s, %s::jsonb) "  # noqa: S608
                "ON CONFLICT (key) DO UPDATE SET response = excluded.response, "
                "created_at = now()",
                rows,
            )

    def __repr__(self) -> str:
        return f"PostgresJudgeCache({self._name!r})"


AnyJudgeCache: TypeAlias = SqliteJudgeCache | PostgresJudgeCache | MemoryJudgeCache


def open_cache(url: str | StoreUrl) -> AnyJudgeCache:
    """Build the judge cache a URL names (connected on first use).

    ``sqlite:PATH`` (or a bare path) gives a :class:`SqliteJudgeCache`; ``postgresql://…`` or
    ``postgres://…`` a :class:`PostgresJudgeCache`; ``memory:`` a :class:`MemoryJudgeCache`.

    Raises:
        ValueError: the URL is empty, names no known cache, or is a key=value DSN (see
            :meth:`~scorecore_adapters.storage.StoreUrl.for_cache`).

    >>> open_cache("sqlite:.scorecore/cache.db")
    SqliteJudgeCache('.scorecore/cache.db')
    >>> open_cache("postgresql://me:pw@localhost/db")
    PostgresJudgeCache('postgresql://me:***@localhost/db')
    """
    parsed = url if isinstance(url, StoreUrl) else StoreUrl.for_cache(url)
    if parsed.kind == "postgres":
        return PostgresJudgeCache(parsed.url)
    if parsed.kind == "memory" or parsed.path is None:
        return MemoryJudgeCache()
    return SqliteJudgeCache(parsed.path)
