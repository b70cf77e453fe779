"""The own connection of a table family kept next to the scores (labels, datasets).

Each such store connects on its own, creates its tables unless read-only, and, read-only, tells
whether its tables exist (a store without them reads as empty) instead of creating them.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Literal, Self

import anyio
import anyio.to_thread

from scorecore.evals import StoreError
from scorecore_adapters.storage._common import describe, import_psycopg
from scorecore_adapters.storage._url import StoreUrl

__all__: list[str] = []  # internal: the labels' and the datasets' stores


def driver_errors(url: StoreUrl) -> tuple[type[BaseException], ...]:
    """The errors the URL's database driver raises (what becomes a ``StoreError``)."""
    if url.kind == "postgres":
        return (import_psycopg(url.shown).Error,)
    return (sqlite3.Error,)


def connect(url: StoreUrl, statements: Sequence[str], *, read_only: bool,
            probe: str) -> tuple[Any, bool]:
    """A connection to the store (autocommit), and whether the table ``probe`` exists.

    Unless ``read_only``, ``statements`` (idempotent ``CREATE … IF NOT EXISTS``) run first.
    A read-only SQLite store must exist and is opened with ``mode=ro``.
    """
    if url.kind == "postgres":
        psycopg = import_psycopg(url.shown)
        conn = psycopg.connect(url.url, autocommit=True, connect_timeout=10)
        if read_only:
            found = conn.execute("SELECT to_regclass(%s)", (probe,)).fetchone()
            return conn, found is not None and found[0] is not None
        for statement in statements:
            conn.execute(statement)
        return conn, True
    path = url.path or ""
    if read_only:
        if not Path(path).is_file():
            raise sqlite3.OperationalError(f"file {path!r} does not exist")
        conn = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True,
                               isolation_level=None, check_same_thread=False)
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                             "name = ?", (probe,)).fetchone()
        return conn, found is not None
    if path != ":memory:" and not Path(os.path.dirname(path) or ".").is_dir():
        raise sqlite3.OperationalError(f"directory of {path!r} does not exist")
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=10000")
    conn.executescript(";\n".join(statements) + ";")
    return conn, True


class OwnConnection:
    """What a store of tables kept next to the scores shares: its URL, its own connection
    (opened by the subclass's ``open``, used one call at a time in a worker thread), the
    driver's errors, closing, and the refusal to be used unopened.

    Subclasses name their tables for messages in ``_TABLES`` (``"labels"``, ``"datasets"``).
    """

    __slots__ = ("_conn", "_dialect", "_exists", "_limiter", "_lock", "_read_only", "_url")
    _TABLES: ClassVar[str] = "tables"

    def __init__(self, url: str | StoreUrl, *, read_only: bool) -> None:
        self._url = url if isinstance(url, StoreUrl) else StoreUrl.for_store(url)
        if self._url.kind == "memory":
            raise ValueError(f"{self._TABLES} need a score store's URL, got {self._url.shown!r}")
        self._dialect: Literal["sqlite", "postgres"] = (
            "postgres" if self._url.kind == "postgres" else "sqlite")
        self._read_only = read_only
        self._conn: Any = None
        self._exists = True
        self._lock = anyio.Lock()
        self._limiter = anyio.CapacityLimiter(1)

    @property
    def url(self) -> str:
        """The store's URL, any password masked."""
        return self._url.shown

    async def open(self) -> None:
        """Connect (each store says how)."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    def _errors(self) -> tuple[type[BaseException], ...]:
        return driver_errors(self._url)

    async def _run(self, operation: str, fn: Callable[[], Any]) -> Any:
        """``fn()`` on the worker thread; a driver error becomes a ``StoreError``."""
        try:
            return await anyio.to_thread.run_sync(fn, limiter=self._limiter)
        except self._errors() as exc:
            raise StoreError(f"store {self.url}: {self._TABLES} {operation} failed: "
                             f"{describe(exc)}", store=self.url,
                             operation=f"{self._TABLES}.{operation}") from exc

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        async with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                await anyio.to_thread.run_sync(conn.close, limiter=self._limiter)

    def _connection(self, operation: str) -> Any:
        if self._conn is None:
            raise StoreError(f"{self._TABLES} of {self.url} are not open (use 'async with')",
                             store=self.url, operation=f"{self._TABLES}.{operation}")
        return self._conn
