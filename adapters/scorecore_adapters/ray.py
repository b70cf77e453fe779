"""Scoring past one machine: :func:`score_dataset` runs scorers over a Ray Data dataset.

Each item runs the whole pipeline (function steps and judge calls) inside a ``map_batches``
actor pool. Every actor builds the scorers once (from a ``"module:attr"`` reference or a
picklable factory), keeps its own event loop and store connection, scores at most
``judge_concurrency`` items at a time (so at most that many judge calls are in flight per
actor), and saves each batch's rows in one transaction before handing the batch back.

Rows are keyed as :func:`~scorecore.evals.run_evals` keys them (run id ``f"{batch_id}:{id}"``
or ``f"{batch_id}:#{position}"``, row id :func:`~scorecore.evals.row_id` of (run id,
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

from __future__ import annotations

import functools
import hashlib
import hmac
import importlib
import json
import math
import pickle
import secrets
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias, cast, final

import anyio
import attrs
from anyio.from_thread import BlockingPortal, start_blocking_portal
from returns.result import Success

from scorecore import Runtime, Scorer, ScorerRunError
from scorecore.evals import (
    EconomicsSummary,
    EvalConfigError,
    EvalItem,
    EvalReport,
    InvalidItem,
    ItemFailure,
    ItemLike,
    ItemResult,
    ItemRows,
    ItemScorer,
    ReportFold,
    RunIds,
    ScorerCost,
    ScorerOutcome,
    ScoreRow,
    Threshold,
    TrustFold,
    item_key,
    row_id,
    run_evals,
)
from scorecore.judge.economics import JudgeMeter, Pricing
from scorecore_adapters.cache import MemoryJudgeCache, SqliteJudgeCache, open_cache
from scorecore_adapters.storage import DEFAULT_TABLE, open_store, redact_url

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type hints
    import ray.data

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

ITEM_COLUMN: Final = "scorecore_item"
"""The column :func:`items_dataset` keeps each item in, pickled (so every value survives) and
signed for this process: a dataset read from elsewhere with such a column is never unpickled."""

INDEX_COLUMN: Final = "scorecore_index"
"""The column holding each row's position in the dataset (added by :func:`score_dataset`)."""

ScorersSpec: TypeAlias = "str | Callable[[], Iterable[Scorer[Any, Any]] | Scorer[Any, Any]]"
"""Where actors get their scorers: ``"module:attr"`` or a picklable zero-argument factory."""

TargetSpec: TypeAlias = "str | Callable[[EvalItem], Any]"
"""The target producing each item's output: ``"module:function"`` or a picklable callable."""

_ITEMS_PER_BLOCK: Final = 1024
_MAX_BLOCKS: Final = 200
_RESULT_FIELDS: Final = (
    ("index", "int64"), ("run_id", "string"), ("item_id", "string"),
    ("scorer_id", "string"), ("status", "string"), ("score", "float64"),
    ("reason", "string"), ("error", "string"), ("item_error", "string"),
    ("resumed", "bool_"), ("duplicate_of", "int64"),
    ("cost_usd", "float64"), ("cost_known", "bool_"), ("saved_usd", "float64"),
    ("cache_hits", "int64"), ("cache_misses", "int64"), ("model_calls", "int64"),
    ("spent_usd", "float64"), ("spent_tokens", "int64"), ("trust", "string"),
)
_TRUST_KEYS: Final = ("panel", "pairwise")
"""The stored row's metadata the report's trust values are folded from (``trust`` column)."""


def load_scorers(spec: ScorersSpec) -> tuple[Scorer[Any, Any], ...]:
    """The scorers ``spec`` names: a ``"module:attr"`` reference or a zero-argument factory.

    The attribute (or the factory's return value) may be one scorer, an iterable of
    scorers, or a zero-argument callable returning either. Actors call this once each.

    Raises:
        ValueError: the reference is malformed, or its module or attribute is missing.
        TypeError: it gives something that is not scorers (the message names the spec).

    >>> load_scorers("scorecore.scorers:completeness")[0].id
    'completeness-scorer'
    """
    value: Any
    if isinstance(spec, str):
        module_name, sep, attr = spec.partition(":")
        if not sep or not module_name or not attr:
            raise ValueError(f"scorers reference must look like 'module:attr', got {spec!r}")
        try:
            value = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f"scorers reference {spec!r}: cannot import {module_name!r} "
                             f"({exc})") from None
        for part in attr.split("."):
            if not hasattr(value, part):
                raise ValueError(f"scorers reference {spec!r}: {module_name!r} has no "
                                 f"attribute {attr!r}")
            value = getattr(value, part)
    elif callable(spec):
        value = spec
    else:
        raise TypeError(f"scorers must be a 'module:attr' str or a zero-argument factory, "
                         f"got {type(spec).__name__}")
    if callable(value) and not isinstance(value, Scorer):
        value = value()
    found = (value,) if isinstance(value, Scorer) else value
    if isinstance(found, str | bytes | Mapping) or not isinstance(found, Iterable):
        raise TypeError(f"scorers {_name(spec)} gave {type(value).__name__}, "
                         f"not a scorer or scorers")
    scorers = tuple(found)
    for scorer in scorers:
        if not isinstance(scorer, Scorer):
            raise TypeError(f"scorers {_name(spec)} gave {type(scorer).__name__} among the "
                             f"scorers")
    return scorers


def _name(spec: object) -> str:
    return repr(spec) if isinstance(spec, str) else getattr(spec, "__qualname__", "factory")


def _load_target(spec: TargetSpec | None) -> Callable[[EvalItem], Any] | None:
    """The target ``spec`` names: a ``"module:function"`` reference, or the callable itself."""
    if spec is None or callable(spec):
        return spec
    if not isinstance(spec, str):
        raise ValueError(  # noqa: TRY004 - reported as a bad argument, with the others
            f"target must be a 'module:function' str or a callable, got {type(spec).__name__}")
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"target reference must look like 'module:function', got {spec!r}")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"target reference {spec!r}: cannot import {module_name!r} "
                         f"({exc})") from None
    for part in attr.split("."):
        if not hasattr(value, part):
            raise ValueError(f"target reference {spec!r}: {module_name!r} has no attribute "
                             f"{attr!r}")
        value = getattr(value, part)
    return cast("Callable[[EvalItem], Any]", value)


def _target_name(target: Callable[..., Any] | None) -> str | None:
    # The entity run_evals stores for a target: "module:qualname".
    if target is None:
        return None
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}:{name}" if module else name


def items_dataset(items: Iterable[ItemLike]) -> ray.data.Dataset:
    """A Ray dataset of items, each kept exactly as given (pickled in :data:`ITEM_COLUMN`).

    Use it for a Python list: Arrow, which Ray Data stores rows in, would otherwise merge
    the keys of mapping values across rows and refuse values whose types differ. Each item is
    signed with a key of this process, and :func:`score_dataset` (in this process) unpickles
    only what it signed: build the dataset where you score it.
    """
    import ray.data  # noqa: PLC0415 - the ray extra is optional

    rows = [{INDEX_COLUMN: index, ITEM_COLUMN: _seal(item)} for index, item in enumerate(items)]
    # Blocks of about a thousand items: Ray schedules a task per block per stage.
    blocks = max(1, min(_MAX_BLOCKS, -(-len(rows) // _ITEMS_PER_BLOCK)))
    return ray.data.from_items(rows, override_num_blocks=blocks)


# Unpickling runs code: only items this process pickled are unpickled, so a Parquet file from
# elsewhere with a scorecore_item column cannot run code on the actors.
_KEY: Final = secrets.token_bytes(32)
_SIGNATURE = 32


def _seal(item: object) -> bytes:
    payload = pickle.dumps(item)
    return hmac.new(_KEY, payload, hashlib.sha256).digest() + payload


@final
@attrs.frozen(kw_only=True)
class RayEvalResult:
    """What :func:`score_dataset` returns.

    Attributes:
        rows: one row per (item, scorer), materialized: ``index``, ``run_id``, ``item_id``,
            ``scorer_id``, ``status``, ``score``, ``reason``, ``error``, ``item_error``,
            ``resumed``, ``duplicate_of``, and the pair's judge economics: ``cost_usd``
            (``cost_known`` false when a call could not be priced), ``saved_usd``,
            ``cache_hits``, ``cache_misses``, ``model_calls``; ``spent_usd`` and
            ``spent_tokens`` hold what a whole ``map_batches`` call spent, on its first row
            (0 on the others); ``trust``, the pair's panel or pairwise result as its stored
            row keeps it (JSON text, else null), which the report's ``panels`` and
            ``pairwise`` are folded from. The full rows are in the store.
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
        return _item_results(self.rows)


def _decode(row: dict[str, Any], key: bytes) -> object:
    """The item a dataset row holds: sealed by :func:`items_dataset`, or the row itself."""
    if ITEM_COLUMN in row:
        sealed = row[ITEM_COLUMN]
        if not isinstance(sealed, bytes) or not hmac.compare_digest(
            sealed[:_SIGNATURE], hmac.new(key, sealed[_SIGNATURE:], hashlib.sha256).digest()
        ):
            return InvalidItem(reason=f"{ITEM_COLUMN} was not written by items_dataset in the "
                                      f"process scoring it; not unpickled")
        try:
            return pickle.loads(sealed[_SIGNATURE:])  # noqa: S301 - signed by items_dataset
        except Exception as exc:  # noqa: BLE001 - one unreadable row never stops a batch
            return InvalidItem(reason=f"{ITEM_COLUMN} could not be unpickled: "
                                      f"{type(exc).__name__}")
    # Arrow gives every row every column: a column another row filled is None here, which
    # for anything but the item's input and output means "not given".
    return {k: v for k, v in row.items() if v is not None or k in ("input", "output")}


def _ids(batch: pa.Table, key: bytes) -> pa.Table:
    """``(index, item id, line)`` of each row: what claims its run id (a map task)."""
    import pyarrow as pa  # noqa: PLC0415 - the ray extra is optional

    indices, ids, lines = [], [], []
    for row in batch.to_pylist():
        index = row.pop(INDEX_COLUMN)
        item_id, line = item_key(_decode(row, key), index)
        indices.append(index)
        ids.append(item_id)
        lines.append(line)
    return pa.table({"index": pa.array(indices, pa.int64()), "id": pa.array(ids, pa.string()),
                     "line": pa.array(lines, pa.int64())})


def _result_schema() -> pa.Schema:
    import pyarrow as pa  # noqa: PLC0415 - the ray extra is optional

    return pa.schema([(name, getattr(pa, kind)()) for name, kind in _RESULT_FIELDS])


def _text(value: str | None) -> str | None:
    # Arrow strings are UTF-8: a lone surrogate in a reason must not fail the whole batch.
    return None if value is None else value.encode("utf-8", "replace").decode("utf-8")


class _ScoringActor:
    """The class UDF of the actor pool: scorers, an event loop and a store per actor."""

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
        self._target = _load_target(target)
        self._rows = ItemRows(batch_id=batch_id, scorers=self._scorers,
                              target_name=_target_name(self._target))
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
        self._ledger = ledger  # a handle on the _Ledger actor
        self._key = key

    def __call__(self, batch: pa.Table) -> pa.Table:
        import pyarrow as pa  # noqa: PLC0415 - the ray extra is optional
        import ray  # noqa: PLC0415 - the ray extra is optional

        rows = batch.to_pylist()
        indices = [row[INDEX_COLUMN] for row in rows]
        suspects = frozenset(ray.get(self._ledger.begin.remote(indices)))
        ledger = None if self._meter is None else self._meter.ledger
        before = (0.0, 0) if ledger is None else (ledger.spent_usd, ledger.spent_tokens)
        results, trust = self._portal.call(self._score, rows, suspects)
        self._ledger.end.remote(indices)  # no need to wait: only a retry of this batch asks
        # Batches run one at a time in an actor: the meter's growth over this call is its spend.
        spent = (0.0, 0) if ledger is None else (ledger.spent_usd - before[0],
                                                 ledger.spent_tokens - before[1])
        return pa.Table.from_pylist(_result_rows(results, spent=spent, trust=trust),
                                    schema=_result_schema())

    async def _score(
        self, rows: list[dict[str, Any]], suspects: frozenset[int]
    ) -> tuple[list[ItemResult], dict[tuple[str, str], str]]:
        # A fresh scorer per batch: a batch Ray runs again must not see its own ids as
        # repeated (repeats across the dataset were found before scoring began).
        score = ItemScorer(scorers=self._scorers, target=self._target, runtime=self._runtime,
                           batch_id=self._batch_id, done=self._done)
        results: list[ItemResult | None] = [None] * len(rows)
        saved: list[Any] = []
        trust: dict[tuple[str, str], str] = {}
        pending = iter([(p, r) for p, r in enumerate(rows) if r[INDEX_COLUMN] not in suspects])

        async def finish(position: int, result: ItemResult) -> None:
            result, item_rows = self._rows.rows(result)
            results[position] = result
            saved.extend(item_rows)
            trust.update(_trust_of(item_rows))

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
                    item_id, _ = item_key(_decode(dict(row), self._key), index)
                    await finish(position, score.failed(index, _CRASHED, item_id=item_id))
                else:
                    await finish(position, await self._item(score, row))
                    await self._ledger.survived.remote(index)
        if saved:
            await self._store.save(saved)  # one transaction per batch, an upsert per pair
        return [r for r in results if r is not None], trust

    async def _item(self, score: ItemScorer, row: dict[str, Any]) -> ItemResult:
        row = dict(row)
        index = row.pop(INDEX_COLUMN)
        raw = _decode(row, self._key)
        repeat = self._repeats.get(index)
        if repeat is not None:
            # Not scored and not stored: its run id is an earlier item's (as run_evals does).
            item_id, _ = item_key(raw, index)
            return score.failed(index, repeat, item_id=item_id)
        return await score(index, raw)


_CRASHED: Final = ItemFailure(
    error="its worker died while scoring it, alone, after dying with its batch (a crash, "
          "running out of memory or a kill): not scored; a resume tries it again"
)


class _Ledger:
    """Which items are in flight, so that an item that kills its worker is found.

    One small actor per :func:`score_dataset` call. A batch marks its items started and, when
    its rows are saved, ended; a batch Ray retries after its worker died finds them still
    started (suspects). Each suspect is then scored alone: one that dies alone twice is
    failed, one that survives is counted as safe again.
    """

    def __init__(self) -> None:
        self._started: dict[int, int] = {}
        self._alone: dict[int, int] = {}

    def begin(self, indices: list[int]) -> list[int]:
        """Mark ``indices`` started; the ones started before and never ended."""
        started = self._started
        suspects = [i for i in indices if i in started]
        for index in indices:
            started[index] = started.get(index, 0) + 1
        return suspects

    def isolate(self, index: int) -> int:
        """Mark ``index`` about to be scored alone; how many times it was (this one included)."""
        self._alone[index] = self._alone.get(index, 0) + 1
        return self._alone[index]

    def survived(self, index: int) -> None:
        """``index`` was scored alone without its worker dying."""
        self._alone.pop(index, None)

    def end(self, indices: list[int]) -> None:
        """The batch of ``indices`` is saved."""
        for index in indices:
            self._started.pop(index, None)
            self._alone.pop(index, None)


def _positive(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise EvalConfigError(f"score_dataset: {name} must be an int >= 1, got {value!r}",
                              field=name, value=value)
    return value


def _check_store(store_url: object, concurrency: int) -> str:
    if not isinstance(store_url, str) or not store_url.startswith(
        ("sqlite:", "postgresql://", "postgres://")
    ):
        shown = redact_url(store_url) if isinstance(store_url, str) else store_url
        raise EvalConfigError(
            f"score_dataset: store_url must be postgresql://… (or sqlite:PATH for one local "
            f"worker), got {shown!r}", field="store_url", value=shown)
    if store_url.startswith("sqlite:"):
        several = _several_workers(concurrency)
        if several is not None:
            raise EvalConfigError(
                f"score_dataset: a SQLite store ({store_url}) takes one local worker only "
                f"(concurrency=1 on a one-node cluster started from this machine); got "
                f"{several}. Use a PostgreSQL store_url (postgresql://…) that every worker "
                f"can reach", field="store_url", value=redact_url(store_url))
        store = open_store(store_url)
        path = store.url.removeprefix("sqlite:")
        if path == ":memory:":
            raise EvalConfigError(
                "score_dataset: sqlite::memory: would keep the rows inside the actor, which "
                "Ray ends with the batch; give a file (sqlite:PATH) or postgresql://…",
                field="store_url", value=store_url)
        # The actor's working directory need not be this one: name the file absolutely.
        return f"sqlite:{Path(path).resolve()}"
    return store_url


def _several_workers(concurrency: int) -> str | None:
    """Why ``concurrency`` actors on the connected Ray cluster are not one local worker (what a
    SQLite store or cache needs), or ``None`` when they are."""
    import ray  # noqa: PLC0415 - the ray extra is optional

    # Ray leaves these two unannotated.
    nodes = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
    client = ray.util.client.ray.is_connected()  # type: ignore[no-untyped-call]
    if concurrency == 1 and len(nodes) == 1 and not client:
        return None
    return (f"concurrency={concurrency} on {len(nodes)} node(s)"
            f"{' through ray://' if client else ''}")


async def _check_cache(cache_url: object, concurrency: int) -> str:
    """The cache URL the actors open (a SQLite path made absolute), once it opened here.

    Opening it here refuses a bad URL before any item is scored, and creates the cache's table
    once rather than from every actor at the same time.
    """
    shown = redact_url(cache_url) if isinstance(cache_url, str) else cache_url
    if not isinstance(cache_url, str):
        raise EvalConfigError(f"score_dataset: cache_url must be a str (postgresql://…, or "
                              f"sqlite:PATH for one local worker), got {shown!r}",
                              field="cache_url", value=shown)
    try:
        cache = open_cache(cache_url)
    except ValueError as exc:
        raise EvalConfigError(f"score_dataset: cache_url: {exc}", field="cache_url",
                              value=shown) from None
    if isinstance(cache, SqliteJudgeCache | MemoryJudgeCache):
        several = _several_workers(concurrency)
        if several is not None:
            kind = "SQLite" if isinstance(cache, SqliteJudgeCache) else "memory"
            raise EvalConfigError(
                f"score_dataset: a {kind} judge cache (cache_url={shown!r}) takes one local "
                f"worker only; got {several}. Use a PostgreSQL cache_url (postgresql://…) "
                f"that every worker shares, or no cache", field="cache_url", value=shown)
        if isinstance(cache, SqliteJudgeCache):
            cache_url = f"sqlite:{cache.path.resolve()}"  # actors may run in another directory
    opened = open_cache(cache_url)
    if isinstance(opened, MemoryJudgeCache):
        return cache_url
    try:
        async with opened:
            pass
    except Exception as exc:  # noqa: BLE001 - whatever the driver raises, it is unusable
        raise EvalConfigError(
            f"score_dataset: cache_url={shown!r} cannot be opened ({type(exc).__name__}); "
            f"every worker must reach it", field="cache_url", value=shown) from None
    return cache_url


async def _check(
    scorers: Sequence[Scorer[Any, Any]],
    *,
    store_url: str,
    table: str,
    batch_id: str,
    resume: bool,
    thresholds: Mapping[str, float | Threshold] | None,
    gates: Iterable[str] | None,
    max_failures: int | None,
    max_failure_rate: float | None,
    target: Callable[[EvalItem], Any] | None,
) -> EvalReport:
    """Check the arguments and the batch as ``run_evals`` does: it runs on no items here.

    The empty report gives the normalized thresholds and gates the fold needs; nothing is
    written to the store.
    """
    try:
        async with open_store(store_url, table=table) as store:
            return await run_evals((), scorers, thresholds=thresholds, gates=gates, store=store,
                                   batch_id=batch_id, resume=resume, max_failures=max_failures,
                                   max_failure_rate=max_failure_rate, target=target)
    except EvalConfigError as exc:
        message = str(exc).replace("run_evals", "score_dataset", 1)
        raise EvalConfigError(message, field=exc.field, value=exc.value) from None


def _indexed(ds: ray.data.Dataset) -> ray.data.Dataset:
    """``ds`` with each row's position in :data:`INDEX_COLUMN`, materialized.

    Positions are run ids of items without an id, so they must not change between a run and
    its resume: the order is preserved while the dataset is numbered.
    """
    import ray.data  # noqa: PLC0415 - the ray extra is optional

    if INDEX_COLUMN in (ds.columns() or ()):
        return cast("ray.data.Dataset", ds.materialize())  # numbered by items_dataset
    context = ray.data.DataContext.get_current()
    kept = context.execution_options.preserve_order
    context.execution_options.preserve_order = True
    try:
        ordered = ds.materialize()
        total = ordered.count()
        if total == 0:
            return cast("ray.data.Dataset", ordered)  # nothing to number (zip needs rows)
        index = ray.data.range(total).rename_columns({"id": INDEX_COLUMN})
        with warnings.catch_warnings():
            # Dataset.zip is deprecated (Ray 2.64 drops it) as it relies on a deterministic
            # order, which is exactly what preserve_order gives here.
            warnings.simplefilter("ignore", DeprecationWarning)
            indexed = ordered.zip(index)
        # Every block as Arrow: Ray's batcher cannot join a pandas block (zip may make one)
        # to an Arrow block in one batch.
        indexed = indexed.map_batches(_as_arrow, batch_format="pyarrow",
                                      batch_size=None).materialize()
    finally:
        context.execution_options.preserve_order = kept
    return cast("ray.data.Dataset", indexed)


def _spread(ds: ray.data.Dataset, concurrency: int, batch_size: int) -> ray.data.Dataset:
    """``ds`` in enough blocks to keep every actor busy (Ray hands an actor whole blocks)."""
    wanted = max(1, min(-(-ds.count() // batch_size), 4 * concurrency))
    if ds.num_blocks() >= wanted:
        return ds
    # Splitting without a shuffle keeps the order (and the numbering is already done).
    return cast("ray.data.Dataset", ds.repartition(wanted, shuffle=False).materialize())


def _as_arrow(table: pa.Table) -> pa.Table:
    return table


def _tables(ds: ray.data.Dataset) -> Iterator[pa.Table]:
    """The dataset's blocks as Arrow tables, in order."""
    return cast("Iterator[pa.Table]", ds.iter_batches(batch_format="pyarrow", batch_size=None))


def _repeats(indexed: ray.data.Dataset, batch_id: str) -> dict[int, ItemFailure]:
    """Items whose run id an earlier item already has, each with the failure saying so.

    Claimed in dataset order over the whole dataset, as ``run_evals`` claims them, so the
    first item keeps its run id and rows wherever the later one is scored.
    """
    keys = indexed.map_batches(functools.partial(_ids, key=_KEY), batch_format="pyarrow")
    claimed: list[tuple[int, str | None, int | None]] = []
    for batch in _tables(keys):
        claimed.extend(zip(*(batch.column(c).to_pylist() for c in ("index", "id", "line")),
                           strict=True))
    claimed.sort(key=lambda key: key[0])
    run_ids = RunIds(batch_id)
    repeats: dict[int, ItemFailure] = {}
    for index, item_id, line in claimed:
        claim = run_ids.claim(index, item_id, line)
        if not isinstance(claim, Success):
            repeats[index] = claim.failure()
    return repeats


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
            scorer id); the report is folded by the same :class:`~scorecore.evals.ReportFold`,
            so its verdict and ``verdict_reason`` are ``run_evals``'.
        table: the store's table.
        target: an (async) function of the item producing the output to score, as in
            ``run_evals``: ``"module:function"`` or a picklable callable, loaded once per
            actor.
        cache_url: the judge cache each actor opens once (:func:`~scorecore_adapters.cache.
            open_cache`): ``postgresql://…``, shared by every worker, so an identical judge
            call is asked once across the pool and across runs; ``sqlite:PATH`` or
            ``memory:`` with one local worker only (refused otherwise). ``None``: no cache.
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
    import ray.data  # noqa: PLC0415 - the ray extra is optional

    started = time.monotonic()
    try:
        chosen = load_scorers(scorers)
    except (ValueError, TypeError) as exc:
        raise EvalConfigError(f"score_dataset: {exc}", field="scorers", value=scorers) from None
    try:
        loaded_target = _load_target(target)
    except ValueError as exc:
        raise EvalConfigError(f"score_dataset: {exc}", field="target", value=target) from None
    for name, value in (("concurrency", concurrency), ("batch_size", batch_size),
                        ("judge_concurrency", judge_concurrency)):
        _positive(name, value)
    gate_ids = None if gates is None or isinstance(gates, str) else tuple(gates)
    if gates is not None and (gate_ids is None or any(not isinstance(g, str) for g in gate_ids)):
        raise EvalConfigError(f"score_dataset: gates must be a list of scorer ids, got "
                              f"{gates!r}", field="gates", value=gates)
    store_url = _check_store(store_url, concurrency)
    if pricing is not None and not isinstance(pricing, Pricing):
        raise EvalConfigError(f"score_dataset: pricing must be a Pricing, got "
                              f"{type(pricing).__name__}", field="pricing", value=pricing)
    cache_url = None if cache_url is None else anyio.run(_check_cache, cache_url, concurrency)
    empty = anyio.run(lambda: _check(chosen, store_url=store_url, table=table,
                                     batch_id=batch_id, resume=resume, thresholds=thresholds,
                                     gates=gate_ids, max_failures=max_failures,
                                     max_failure_rate=max_failure_rate,
                                     target=loaded_target))
    metered = cache_url is not None or pricing is not None
    fold_ids = [s.scorer_id for s in empty.scorers]
    fold = ReportFold(
        fold_ids,
        thresholds={t.scorer_id: t.threshold for t in empty.thresholds},
        gates=[g.scorer_id for g in empty.gates], max_failures=max_failures,
        max_failure_rate=max_failure_rate,
    )

    indexed = _spread(_indexed(ds), concurrency, batch_size)
    if indexed.count() == 0:
        import pyarrow as pa  # noqa: PLC0415 - the ray extra is optional

        empty_rows = ray.data.from_arrow(pa.Table.from_pylist([], schema=_result_schema()))
        return RayEvalResult(rows=empty_rows, report=attrs.evolve(
            empty, duration=time.monotonic() - started,
            economics=_economics(empty_rows, fold_ids) if metered else None))
    repeats = _repeats(indexed, batch_id)
    ledger: Any = ray.remote(num_cpus=0)(_Ledger).remote()
    try:
        rows = indexed.map_batches(
            _ScoringActor,
            fn_constructor_kwargs={
                "scorers": scorers, "store_url": store_url, "table": table, "batch_id": batch_id,
                "resume": resume, "judge_concurrency": judge_concurrency, "repeats": repeats,
                "ledger": ledger, "key": _KEY, "target": target, "cache_url": cache_url,
                "pricing": pricing,
            },
            batch_size=batch_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=concurrency),
            num_cpus=1,
        ).materialize()
    finally:
        ray.kill(ledger)
    report = _report(rows, fold, batch_id=batch_id, duration=time.monotonic() - started)
    if metered:
        report = attrs.evolve(report, economics=_economics(rows, fold_ids))
    return RayEvalResult(rows=rows, report=report)


def _report(rows: ray.data.Dataset, fold: ReportFold, *, batch_id: str,
            duration: float) -> EvalReport:
    """Fold the result rows into the report ``run_evals`` gives (both folds are order-free):
    the counts and means, and the panels' agreement and pairwise summaries from their
    ``trust`` column."""
    trust = TrustFold()

    def counted() -> Iterator[dict[str, Any]]:
        for batch in _tables(rows):
            for row in batch.to_pylist():
                if row.get("trust") is not None:
                    trust.add_row(_trust_row(row, batch_id))
                yield row

    for result in _regroup(counted()):
        fold.add(result)
    return trust.finish(fold.report(batch_id=batch_id, duration=duration))


def _trust_of(rows: Iterable[ScoreRow]) -> dict[tuple[str, str], str]:
    """The panel or pairwise part of each stored row that has one, as JSON text, by (run id,
    scorer id)."""
    out: dict[tuple[str, str], str] = {}
    for row in rows:
        metadata = row.metadata or {}
        kept = {key: metadata[key] for key in _TRUST_KEYS if key in metadata}
        if kept:
            out[(row.run_id, row.scorer_id)] = json.dumps(kept)
    return out


def _trust_row(row: Mapping[str, Any], batch_id: str) -> ScoreRow:
    """A result row's trust part as the stored row :meth:`TrustFold.add_row` reads."""
    item_id = row["item_id"] if row["item_id"] is not None else f"#{row['index']}"
    return ScoreRow(id=row_id(row["run_id"], row["scorer_id"]), scorer_id=row["scorer_id"],
                    run_id=row["run_id"], batch_id=batch_id, status=row["status"],
                    score=row["score"], dataset_item_id=item_id,
                    metadata=json.loads(row["trust"]))


def _item_results(rows: ray.data.Dataset) -> Iterator[ItemResult]:
    """The items' results from the result dataset, in its order."""
    return _regroup(row for batch in _tables(rows) for row in batch.to_pylist())


def _result_rows(
    results: Iterable[ItemResult], *, spent: tuple[float, int] = (0.0, 0),
    trust: Mapping[tuple[str, str], str] | None = None,
) -> list[dict[str, Any]]:
    """One result row per (item, scorer), an item's rows together (see :class:`RayEvalResult`).

    ``spent`` (what the meter spent on these items: USD, tokens) goes on the first row;
    ``trust`` holds the pairs' panel or pairwise JSON by (run id, scorer id).
    """
    trust = trust or {}
    rows = [
        {"index": r.index, "run_id": r.run_id, "item_id": _text(r.item_id),
         "scorer_id": o.scorer_id, "status": o.status, "score": o.score,
         "reason": _text(o.reason), "error": _text(o.error), "item_error": _text(r.error),
         "resumed": o.resumed, "duplicate_of": r.duplicate_of, **_costs(o),
         "spent_usd": 0.0, "spent_tokens": 0,
         "trust": None if o.resumed else trust.get((r.run_id, o.scorer_id))}
        for r in results for o in r.outcomes
    ]
    if rows:
        rows[0]["spent_usd"], rows[0]["spent_tokens"] = spent
    return rows


def _costs(outcome: ScorerOutcome) -> dict[str, Any]:
    """The pair's judge cost and cache counts, from its judge executions as ``run_evals``
    counts them (a failed run's partial result included)."""
    result: Any = outcome.result
    if result is None and isinstance(outcome.run_error, ScorerRunError):
        result = outcome.run_error.partial
    executions = [] if result is None else [
        e for per_step in result.judge.values() for e in per_step
    ]
    return {
        "cost_usd": math.fsum(e.cost_usd or 0.0 for e in executions),
        "cost_known": all(e.cost_usd is not None or not (e.model_call_count or e.cache_hits)
                          for e in executions),
        "saved_usd": math.fsum(e.saved_usd or 0.0 for e in executions),
        "cache_hits": sum(e.cache_hits for e in executions),
        "cache_misses": sum(e.cache_misses for e in executions),
        "model_calls": sum(e.model_call_count for e in executions),
    }


def _economics(rows: ray.data.Dataset, scorer_ids: Sequence[str]) -> EconomicsSummary:
    """The report's economics summed from the result rows, as ``run_evals`` sums its items."""
    columns = ("scorer_id", "cost_usd", "cost_known", "saved_usd", "cache_hits",
               "cache_misses", "model_calls", "spent_usd", "spent_tokens")
    sums: dict[str, dict[str, list[Any]]] = {sid: {c: [] for c in columns} for sid in scorer_ids}
    spent_usd: list[float] = []
    spent_tokens = 0
    for batch in _tables(rows.select_columns(list(columns))):
        data = batch.to_pydict()
        spent_usd.extend(data["spent_usd"])
        spent_tokens += sum(data["spent_tokens"])
        for position, sid in enumerate(data["scorer_id"]):
            if sid in sums:
                for column in columns:
                    sums[sid][column].append(data[column][position])
    costs = [
        ScorerCost(
            scorer_id=sid,
            cost_usd=round(math.fsum(s["cost_usd"]), 12) if all(s["cost_known"]) else None,
            saved_usd=round(math.fsum(s["saved_usd"]), 12), cache_hits=sum(s["cache_hits"]),
            cache_misses=sum(s["cache_misses"]), model_calls=sum(s["model_calls"]),
        )
        for sid, s in sums.items()
    ]
    known = all(c.cost_usd is not None for c in costs)
    return EconomicsSummary(
        scorers=tuple(costs),
        cost_usd=round(math.fsum(c.cost_usd or 0.0 for c in costs), 12) if known else None,
        saved_usd=round(math.fsum(c.saved_usd for c in costs), 12),
        cache_hits=sum(c.cache_hits for c in costs),
        cache_misses=sum(c.cache_misses for c in costs),
        spent_usd=round(math.fsum(spent_usd), 12), spent_tokens=spent_tokens,
    )


def _regroup(rows: Iterable[Mapping[str, Any]]) -> Iterator[ItemResult]:
    """The items' results back from :func:`_result_rows`'s rows."""
    item: list[Mapping[str, Any]] = []
    for row in rows:
        if item and item[0]["index"] != row["index"]:
            yield _item_result(item)
            item = []
        item.append(row)
    if item:
        yield _item_result(item)


def _item_result(rows: Sequence[Mapping[str, Any]]) -> ItemResult:
    first = rows[0]
    return ItemResult(
        index=first["index"], item_id=first["item_id"], run_id=first["run_id"], item=None,
        error=first["item_error"], duplicate_of=first["duplicate_of"],
        outcomes=tuple(
            ScorerOutcome(scorer_id=r["scorer_id"], status=r["status"], score=r["score"],
                          reason=r["reason"], error=r["error"], resumed=r["resumed"])
            for r in rows
        ),
    )
