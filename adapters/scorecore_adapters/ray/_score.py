"""The driver: :func:`score_dataset` checks, numbers the items, runs the pool, folds the report."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast, final

import anyio
import attrs

from scorecore.evals import EvalConfigError, EvalReport, ItemResult, Threshold
from scorecore.evals.engine import EconomicsFold, ReportFold, fold_result_rows, item_results
from scorecore.judge.economics import Pricing
from scorecore_adapters.ray._actor import ScoringActor
from scorecore_adapters.ray._checks import (
    check_batch,
    check_cache,
    check_store,
    positive,
)
from scorecore_adapters.ray._items import KEY, indexed, no_results, repeats, spread, tables
from scorecore_adapters.ray._ledger import Ledger
from scorecore_adapters.ray._references import ScorersSpec, TargetSpec, load_scorers, load_target
from scorecore_adapters.storage import DEFAULT_TABLE

if TYPE_CHECKING:
    import ray.data

__all__ = ["RayEvalResult", "score_dataset"]


@final
@attrs.frozen(kw_only=True)
class RayEvalResult:
    """What :func:`score_dataset` returns.

    Attributes:
        rows: one row per (item, scorer), materialized, with the columns of
            :data:`scorecore.evals.engine.RESULT_COLUMNS`: ``index``, ``run_id``,
            ``item_id``, ``scorer_id``, ``status``, ``score``, ``reason``, ``error``,
            ``item_error``, ``resumed``, ``duplicate_of``, and the pair's judge economics:
            ``cost_usd`` (``cost_known`` false when a call could not be priced),
            ``saved_usd``, ``cache_hits``, ``cache_misses``, ``model_calls``,
            ``budget_stopped``; ``spent_usd`` and ``spent_tokens`` hold what a whole
            ``map_batches`` call spent, on its first row (0 on the others); ``trust``, the
            pair's panel or pairwise result as its stored row keeps it (JSON text, else
            null), which the report's ``panels`` and ``pairwise`` are folded from. The full
            rows are in the store.
        report: the :class:`~scorecore.evals.EvalReport` ``run_evals`` gives for the same
            items (exact means, thresholds, gates, verdict, and ``economics`` with a cache or
            pricing).
    """

    rows: ray.data.Dataset = attrs.field(repr=False)
    report: EvalReport

    def item_results(self) -> Iterator[ItemResult]:
        """Each item's :class:`~scorecore.evals.ItemResult`, in dataset order, from :attr:`rows`.

        The results carry ids, statuses, scores, reasons and errors; the full results (step
        results, prompts, judge calls) are in the store's rows.
        """
        return item_results(_pylist(self.rows))


def _pylist(rows: ray.data.Dataset) -> Iterator[dict[str, Any]]:
    """The result rows, in order."""
    return (row for batch in tables(rows) for row in batch.to_pylist())


def score_dataset(
    ds: ray.data.Dataset,
    scorers: ScorersSpec,
    *,
    store_url: str,
    batch_id: str,
    resume: bool = False,
    concurrency: int = 1,
    batch_size: int = 64,
    judge_concurrency: int = 16,
    thresholds: Mapping[str, float | Threshold] | None = None,
    gates: Iterable[str] | None = None,
    max_failures: int | None = 0,
    table: str = DEFAULT_TABLE,
    target: TargetSpec | None = None,
    cache_url: str | None = None,
    pricing: Pricing | None = None,
    max_failure_rate: float | None = None,
) -> RayEvalResult:
    """Score every item of a Ray dataset in an actor pool, storing rows exactly once.

    Args:
        ds: the items, one per row, in :func:`~scorecore.evals.run_evals`'s item shape:
            columns ``input``, ``output``, ``ground_truth`` … (Parquet, JSONL read with
            ``ray.data.read_json``), or one :data:`ITEM_COLUMN` (:func:`items_dataset`).
        scorers: ``"module:attr"`` or a picklable zero-argument factory; each actor builds
            the scorers once from it (see :func:`load_scorers`).
        store_url: where rows go: ``postgresql://…``, which every worker must reach, or
            ``sqlite:PATH`` with one local worker only (refused otherwise).
        batch_id: the batch's id; run ids are ``f"{batch_id}:{item id}"`` (or
            ``f"{batch_id}:#{position}"``) as in ``run_evals``.
        resume: continue a stored batch, skipping the (item, scorer) pairs already stored
            as final, on whichever worker stored them.
        concurrency: actors in the pool (each on one CPU).
        batch_size: items per ``map_batches`` call; each call's rows are saved in one
            transaction.
        judge_concurrency: items (hence judge calls) in flight at once in each actor.
        thresholds, gates, max_failures, max_failure_rate: as in ``run_evals`` (gates by
            scorer id); the report is folded by the same
            :class:`~scorecore.evals.engine.ReportFold`, so its verdict and
            ``verdict_reason`` are ``run_evals``'.
        table: the store's table.
        target: an (async) function of the item producing the output to score, as in
            ``run_evals``: ``"module:function"`` or a picklable callable, loaded once per
            actor.
        cache_url: the judge cache each actor opens once
            (:func:`~scorecore_adapters.cache.open_cache`): ``postgresql://…``, shared by
            every worker, so an identical judge call is asked once across the pool and across
            runs; ``sqlite:PATH`` or ``memory:`` with one local worker only (refused
            otherwise). ``None``: no cache.
        pricing: judge prices; each pair's cost goes in its row and the report's
            ``economics`` (as ``run_evals(pricing=...)``).

    Returns:
        The result rows (materialized) and the report ``run_evals`` gives for these items.

    Raises:
        EvalConfigError: a bad argument, a SQLite store or cache with more than one worker
            or a remote cluster, a cache that cannot be opened, a stored batch id without
            ``resume``, or ``resume`` of an unknown batch (all before any item is scored).
        StoreError: the store failed when the batch was checked (rows saved so far stay;
            resume to finish). A store failing inside an actor fails the batch with Ray's
            task error, whose cause is the StoreError.

    The example in ``docs/scale.md`` runs on a local Ray runtime (the tests run it).
    """
    started = time.monotonic()
    try:
        chosen = load_scorers(scorers)
    except (ValueError, TypeError) as exc:
        raise EvalConfigError(f"score_dataset: {exc}", field="scorers", value=scorers) from None
    try:
        loaded_target = load_target(target)
    except ValueError as exc:
        raise EvalConfigError(f"score_dataset: {exc}", field="target", value=target) from None
    for name, value in (("concurrency", concurrency), ("batch_size", batch_size),
                        ("judge_concurrency", judge_concurrency)):
        positive(name, value)
    gate_ids = None if gates is None or isinstance(gates, str) else tuple(gates)
    if gates is not None and (gate_ids is None or any(not isinstance(g, str) for g in gate_ids)):
        raise EvalConfigError(f"score_dataset: gates must be a list of scorer ids, got "
                              f"{gates!r}", field="gates", value=gates)
    store_url = check_store(store_url, concurrency)
    if pricing is not None and not isinstance(pricing, Pricing):
        raise EvalConfigError(f"score_dataset: pricing must be a Pricing, got "
                              f"{type(pricing).__name__}", field="pricing", value=pricing)
    cache_url = None if cache_url is None else anyio.run(check_cache, cache_url, concurrency)
    empty = anyio.run(lambda: check_batch(chosen, store_url=store_url, table=table,
                                          batch_id=batch_id, resume=resume,
                                          thresholds=thresholds, gates=gate_ids,
                                          max_failures=max_failures,
                                          max_failure_rate=max_failure_rate,
                                          target=loaded_target))
    fold_ids = [s.scorer_id for s in empty.scorers]
    fold = ReportFold(
        fold_ids,
        thresholds={t.scorer_id: t.threshold for t in empty.thresholds},
        gates=[g.scorer_id for g in empty.gates], max_failures=max_failures,
        max_failure_rate=max_failure_rate,
    )
    # Each actor meters its own calls; the report sums what their rows say they spent.
    economics = (EconomicsFold(scorer_ids=fold_ids, metered=True)
                 if cache_url is not None or pricing is not None else None)

    numbered = spread(indexed(ds), concurrency, batch_size)
    if numbered.count() == 0:
        rows = no_results()
    else:
        rows = _score(numbered, scorers=scorers, store_url=store_url, table=table,
                      batch_id=batch_id, resume=resume, concurrency=concurrency,
                      batch_size=batch_size, judge_concurrency=judge_concurrency,
                      target=target, cache_url=cache_url, pricing=pricing)
    report = fold_result_rows(_pylist(rows), fold, batch_id=batch_id,
                              duration=time.monotonic() - started, economics=economics)
    return RayEvalResult(rows=rows, report=report)


def _score(
    numbered: ray.data.Dataset, *, scorers: ScorersSpec, store_url: str, table: str,
    batch_id: str, resume: bool, concurrency: int, batch_size: int, judge_concurrency: int,
    target: TargetSpec | None, cache_url: str | None, pricing: Pricing | None,
) -> ray.data.Dataset:
    """The result rows of the numbered items, scored by a pool of ``concurrency`` actors."""
    import ray.data  # noqa: PLC0415 - the ray extra is optional

    repeated = repeats(numbered, batch_id)
    ledger: Any = ray.remote(num_cpus=0)(Ledger).remote()
    try:
        return cast("ray.data.Dataset", numbered.map_batches(
            ScoringActor,
            fn_constructor_kwargs={
                "scorers": scorers, "store_url": store_url, "table": table, "batch_id": batch_id,
                "resume": resume, "judge_concurrency": judge_concurrency, "repeats": repeated,
                "ledger": ledger, "key": KEY, "target": target, "cache_url": cache_url,
                "pricing": pricing,
            },
            batch_size=batch_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=concurrency),
            num_cpus=1,
        ).materialize())
    finally:
        ray.kill(ledger)
