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
from scorecore_adapters.storage._datasets import DatasetLookupError, DatasetStore
from scorecore_adapters.storage._experiments import (
    Experiment,
    ExperimentScorer,
    ExperimentStore,
)
from scorecore_adapters.storage._postgres import PostgresScoreStore
from scorecore_adapters.storage._recording import record_experiment
from scorecore_adapters.storage._schema import DEFAULT_TABLE
from scorecore_adapters.storage._sqlite import SqliteScoreStore
from scorecore_adapters.storage._url import StoreUrl

__all__ = [
    "DEFAULT_TABLE",
    "DatasetLookupError",
    "DatasetStore",
    "Experiment",
    "ExperimentScorer",
    "ExperimentStore",
    "PostgresScoreStore",
    "SqliteScoreStore",
    "StoreUrl",
    "open_store",
    "record_experiment",
    "redact_url",
]

Store: TypeAlias = SqliteScoreStore | PostgresScoreStore
"""Either store (what :func:`open_store` returns)."""


def open_store(
    url: str | StoreUrl, *, table: str = DEFAULT_TABLE, read_only: bool = False
) -> Store:
    """Build the store a URL names (not yet open: use ``async with``).

    ``sqlite:PATH`` (relative or absolute; ``sqlite:///abs/path`` and ``sqlite::memory:``
    work too) gives a :class:`SqliteScoreStore`; ``postgresql://…`` or ``postgres://…`` a
    :class:`PostgresScoreStore`. ``read_only=True`` opens an existing store for reading only
    (what ``scorecore show`` does).

    Raises:
        ValueError: the URL names no known store (see :meth:`StoreUrl.for_store`).
        StoreError: a PostgreSQL URL, but psycopg is not installed
            (``pip install 'scorecore[postgres]'``).

    >>> open_store("sqlite:scores.db")
    SqliteScoreStore('scores.db', table='scorecore_scores')
    >>> open_store("postgresql://me:pw@localhost/db")
    PostgresScoreStore('postgresql://me:***@localhost/db', table='scorecore_scores')
    """
    parsed = url if isinstance(url, StoreUrl) else StoreUrl.for_store(url)
    if parsed.kind == "postgres":
        import_psycopg(parsed.shown)
        return PostgresScoreStore(parsed.url, table=table, read_only=read_only)
    if parsed.kind == "sqlite" and parsed.path is not None:
        return SqliteScoreStore(parsed.path, table=table, read_only=read_only)
    raise ValueError(f"{parsed.shown!r} is a judge cache URL, not a store's; use sqlite:PATH or "
                     f"postgresql://USER@HOST/DB")
