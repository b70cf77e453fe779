"""The own connection of a table family kept next to the scores (labels, datasets).

Each such store connects on its own, creates its tables unless read-only, and, read-only, tells
whether its tables exist (a store without them reads as empty) instead of creating them.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scorecore_adapters.storage._common import import_psycopg
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
