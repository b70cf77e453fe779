"""Score stores: SQLite (the embedded default) and PostgreSQL, plus :func:`open_store`.

Both implement :class:`scorecore.evals.store.ScoreStore` over one table (``scorecore_scores`` by
default) whose columns are Mastra's ``mastra_scorers`` columns, camelCase and quoted
(:data:`scorecore.evals.store.SCORE_COLUMNS` names them), plus scorecore's ``status`` column.
``("runId", "scorerId")`` is unique and every save is an upsert inside one transaction, so
saving is idempotent and a batch killed at any point resumes cleanly.

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

from typing import TypeAlias

from scorecore_adapters.storage._common import import_psycopg, redact_url
from scorecore_adapters.storage._postgres import PostgresScoreStore
from scorecore_adapters.storage._schema import DEFAULT_TABLE
from scorecore_adapters.storage._sqlite import SqliteScoreStore

__all__ = [
    "DEFAULT_TABLE",
    "PostgresScoreStore",
    "SqliteScoreStore",
    "open_store",
    "redact_url",
]

Store: TypeAlias = SqliteScoreStore | PostgresScoreStore
"""Either store (what :func:`open_store` returns)."""


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
        import_psycopg(redact_url(url))
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
