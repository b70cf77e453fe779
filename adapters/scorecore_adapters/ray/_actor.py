"""The actor pool's class UDF: each actor builds the scorers once and scores batches of items."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from scorecore import Runtime
from scorecore.evals import ItemResult, ScoreRow
from scorecore.evals.engine import ItemFailure, ItemRows, ItemScorer, item_key, result_rows
from scorecore.judge.economics import JudgeMeter, Pricing
from scorecore_adapters.cache import MemoryJudgeCache, open_cache
from scorecore_adapters.ray._items import INDEX_COLUMN, decode, result_schema
from scorecore_adapters.ray._ledger import CRASHED
from scorecore_adapters.ray._references import ScorersSpec, TargetSpec, load_scorers, load_target
from scorecore_adapters.storage import open_store

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type hints

__all__: list[str] = []


class ScoringActor:
    """The class UDF of the actor pool: scorers, an event loop and a store per actor.

    Each ``map_batches`` call scores its items (at most ``judge_concurrency`` at a time) with
    the engine's :class:`~scorecore.evals.engine.ItemScorer`, saves their rows in one
    transaction and hands back their result rows (:func:`~scorecore.evals.engine.result_rows`),
    with what the actor's meter spent meanwhile on the first one.
    """

    def __init__(
        self,
        *,
        scorers: ScorersSpec,
        store_url: str,
        table: str,
        batch_id: str,
        resume: bool,
        judge_concurrency: int,
        repeats: Mapping[int, ItemFailure],
        ledger: Any,
        key: bytes,
        target: TargetSpec | None,
        cache_url: str | None = None,
        pricing: Pricing | None = None,
    ) -> None:
        self._portal_cm = start_blocking_portal("asyncio")
        self._portal: BlockingPortal = self._portal_cm.__enter__()
        self._scorers = load_scorers(scorers)
        self._store = open_store(store_url, table=table)
        self._portal.call(self._store.open)
        self._done = self._portal.call(self._store.completed, batch_id) if resume else {}
        self._target = load_target(target)
        self._rows = ItemRows(batch_id=batch_id, scorers=self._scorers, target=self._target)
        self._meter: JudgeMeter | None = None
        if cache_url is not None or pricing is not None:
            cache = None if cache_url is None else open_cache(cache_url)
            if cache is not None and not isinstance(cache, MemoryJudgeCache):
                self._portal.call(cache.open)  # once per actor; a bad cache fails it now
            self._meter = JudgeMeter(cache=cache, pricing=pricing)
        self._runtime = Runtime(meter=self._meter)
        self._batch_id = batch_id
        self._workers = judge_concurrency
        self._repeats = repeats
        self._ledger = ledger  # a handle on the Ledger actor
        self._key = key

    def __call__(self, batch: pa.Table) -> pa.Table:
        import pyarrow as pa  # noqa: PLC0415 - the ray extra is optional
        import ray  # noqa: PLC0415 - the ray extra is optional

        rows = batch.to_pylist()
        indices = [row[INDEX_COLUMN] for row in rows]
        suspects = frozenset(ray.get(self._ledger.begin.remote(indices)))
        ledger = None if self._meter is None else self._meter.ledger
        before = (0.0, 0) if ledger is None else (ledger.spent_usd, ledger.spent_tokens)
        results, saved = self._portal.call(self._score, rows, suspects)
        self._ledger.end.remote(indices)  # no need to wait: only a retry of this batch asks
        # Batches run one at a time in an actor: the meter's growth over this call is its spend.
        spent = (0.0, 0) if ledger is None else (ledger.spent_usd - before[0],
                                                 ledger.spent_tokens - before[1])
        return pa.Table.from_pylist(result_rows(results, stored=saved, spent=spent),
                                    schema=result_schema())

    async def _score(
        self, rows: list[dict[str, Any]], suspects: frozenset[int]
    ) -> tuple[list[ItemResult], list[ScoreRow]]:
        # A fresh scorer per batch: a batch Ray runs again must not see its own ids as
        # repeated (repeats across the dataset were found before scoring began).
        score = ItemScorer(scorers=self._scorers, target=self._target, runtime=self._runtime,
                           batch_id=self._batch_id, done=self._done)
        results: list[ItemResult | None] = [None] * len(rows)
        saved: list[ScoreRow] = []
        pending = iter([(p, r) for p, r in enumerate(rows) if r[INDEX_COLUMN] not in suspects])

        async def finish(position: int, result: ItemResult) -> None:
            result, item_rows = self._rows.rows(result)
            results[position] = result
            saved.extend(item_rows)

        async def worker() -> None:
            for position, row in pending:
                await finish(position, await self._item(score, row))

        async with anyio.create_task_group() as group:
            for _ in range(min(self._workers, len(rows))):
                group.start_soon(worker)
        # The batch's worker died while these items were in flight: score each alone, so that
        # an item that kills its worker every time is found, and failed instead of retried
        # for ever.
        for position, row in enumerate(rows):
            index = row[INDEX_COLUMN]
            if index in suspects:
                if await self._ledger.isolate.remote(index) > 1:
                    item_id, _ = item_key(decode(dict(row), self._key), index)
                    await finish(position, score.failed(index, CRASHED, item_id=item_id))
                else:
                    await finish(position, await self._item(score, row))
                    await self._ledger.survived.remote(index)
        if saved:
            await self._store.save(saved)  # one transaction per batch, an upsert per pair
        return [r for r in results if r is not None], saved

    async def _item(self, score: ItemScorer, row: dict[str, Any]) -> ItemResult:
        row = dict(row)
        index = row.pop(INDEX_COLUMN)
        raw = decode(row, self._key)
        repeat = self._repeats.get(index)
        if repeat is not None:
            # Not scored and not stored: its run id is an earlier item's (as run_evals does).
            item_id, _ = item_key(raw, index)
            return score.failed(index, repeat, item_id=item_id)
        return await score(index, raw)
