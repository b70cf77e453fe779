"""The dataset tables' definitions on both backends (see :mod:`._datasets` for their use).

Only the column types differ between SQLite and PostgreSQL: a key that numbers itself, the
time column, and the id's collation, which must sort as Python's ``sorted()`` does because
the version digest is computed over the ids in that order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

from scorecore_adapters.storage._schema import q

__all__: list[str] = []  # internal: the dataset store's

_Dialect: TypeAlias = Literal["sqlite", "postgres"]

_TYPES: Final[Mapping[_Dialect, Mapping[str, str]]] = {
    "sqlite": {"key": "INTEGER PRIMARY KEY AUTOINCREMENT", "ref": "INTEGER", "time": "TEXT",
               "id": "TEXT"},
    # "C": ids sort by code point, as Python's sorted() does (the version digest's order)
    "postgres": {"key": "BIGSERIAL PRIMARY KEY", "ref": "BIGINT", "time": "TIMESTAMPTZ",
                 "id": 'TEXT COLLATE "C"'},
}


def tables(dialect: _Dialect, names: str, versions: str, items: str,
           sources: str) -> list[str]:
    """The four tables' ``CREATE TABLE IF NOT EXISTS`` statements."""
    t = _TYPES[dialect]
    return [
        f"CREATE TABLE IF NOT EXISTS {q(versions)} ({q('id')} {t['key']}, "
        f"{q('digest')} TEXT UNIQUE, {q('items')} {t['ref']} NOT NULL, "
        f"{q('createdAt')} {t['time']} NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {q(items)} ({q('versionId')} {t['ref']} NOT NULL, "
        f"{q('itemId')} {t['id']} NOT NULL, {q('digest')} TEXT NOT NULL, "
        f"{q('line')} {t['ref']}, {q('body')} TEXT NOT NULL, "
        f"PRIMARY KEY ({q('versionId')}, {q('itemId')}))",
        f"CREATE TABLE IF NOT EXISTS {q(names)} ({q('name')} TEXT NOT NULL, "
        f"{q('number')} {t['ref']} NOT NULL, {q('versionId')} {t['ref']} NOT NULL, "
        f"{q('touched')} {t['ref']} NOT NULL, {q('createdAt')} {t['time']} NOT NULL, "
        f"PRIMARY KEY ({q('name')}, {q('number')}), UNIQUE ({q('name')}, {q('versionId')}))",
        # a file's key (see DatasetStore.add's source_key) to the version its items were
        f"CREATE TABLE IF NOT EXISTS {q(sources)} ({q('key')} TEXT PRIMARY KEY, "
        f"{q('versionId')} {t['ref']} NOT NULL)",
    ]


def staging_table(dialect: _Dialect, name: str) -> str:
    """A connection's own table an add stages its items in before the version is stored."""
    t = _TYPES[dialect]
    return (f"CREATE TEMPORARY TABLE IF NOT EXISTS {q(name)} ("
            f"{q('itemId')} {t['id']} PRIMARY KEY, {q('digest')} TEXT NOT NULL, "
            f"{q('line')} {t['ref']}, {q('body')} TEXT NOT NULL)")
