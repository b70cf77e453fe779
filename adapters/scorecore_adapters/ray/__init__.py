"""Scoring past one machine: :func:`score_dataset` runs scorers over a Ray Data dataset.

A driver of :mod:`scorecore.evals.engine`: the items are scored, stored and folded by the
parts ``run_evals`` is made of; this package adds the actors, the crash ledger and the
dataset I/O.

Each item runs the whole pipeline (function steps and judge calls) inside a ``map_batches``
actor pool. Every actor builds the scorers once (from a ``"module:attr"`` reference or a
picklable factory), keeps its own event loop and store connection, scores at most
``judge_concurrency`` items at a time (so at most that many judge calls are in flight per
actor), and saves each batch's rows in one transaction before handing the batch back.

Rows are keyed as :func:`~scorecore.evals.run_evals` keys them (run id ``f"{batch_id}:{id}"``
or ``f"{batch_id}:#{position}"``, row id :func:`~scorecore.evals.store.row_id` of (run id,
scorer id)) and every save is an upsert, so a batch retried by Ray after an actor died, or
resumed after the driver died, ends with exactly one row per (item, scorer). The report is
:func:`~scorecore.evals.run_evals`'s, folded from the result rows with the same exact means,
thresholds and gates.

With a judge cache (``cache_url``) or :class:`~scorecore.judge.economics.Pricing`, each actor runs
its items through a :class:`~scorecore.judge.economics.JudgeMeter` of its own, over the one cache
every actor opens (a PostgreSQL cache is shared by all workers; a SQLite one takes a single local
worker). Each result row carries its pair's cost and cache counts, and the report's ``economics``
is summed from them as ``run_evals`` sums its items'.

Needs the ``ray`` extra: ``pip install 'scorecore[ray]'``. See ``docs/scale.md``.
"""

from scorecore_adapters.ray._items import INDEX_COLUMN, ITEM_COLUMN, items_dataset
from scorecore_adapters.ray._references import ScorersSpec, TargetSpec, load_scorers
from scorecore_adapters.ray._score import RayEvalResult, score_dataset

__all__ = [
    "INDEX_COLUMN",
    "ITEM_COLUMN",
    "RayEvalResult",
    "ScorersSpec",
    "TargetSpec",
    "items_dataset",
    "load_scorers",
    "score_dataset",
]
