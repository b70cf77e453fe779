"""``run_evals``: items streamed through an item scorer by workers, rows saved by one writer.

:func:`run_evals` streams items (never materialising the dataset), runs an optional target and
every scorer per item with a concurrency limit, and folds each item into running totals, so
memory stays flat however large the dataset is. A failing item, target, scorer or judge is
recorded for that item and never aborts the batch.

The parts: ``_Source`` numbers the items; the item scorer turns one into an :class:`ItemResult`;
``_worker`` pulls items and hands each result to ``_Finish`` (the pure report fold and the
caller's hook) or, with a store, to the writer's queue; ``_Writer`` builds the queued items' rows,
finishes them as ``_Finish`` does and saves the rows in few, large transactions.
Run ids are deterministic per (batch, item), so a batch run again with ``resume=True`` skips
what is already stored and finishes with exactly one row per (item, scorer).
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from typing import Any, Final, final

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from scorecore._core._budget import Budget
from scorecore._core._cache import JudgeCache
from scorecore._core._pricing import Pricing
from scorecore._core._runtime import DEFAULT_RUNTIME, Runtime
from scorecore._core._scorer import Scorer
from scorecore.evals._economics._batch import (
    EconomicsFold,
    TrialScorer,
    TrialUnit,
    batch_meter,
    check_economics,
    per_trial,
)
from scorecore.evals._messages import exception_text
from scorecore.evals._persistence._port import CompletedScore, RecordStore, ScoreStore
from scorecore.evals._report._fold import ReportFold
from scorecore.evals._report._values import EvalReport, ItemResult, Threshold
from scorecore.evals._rows._per_item import ItemRows
from scorecore.evals._run._items import EvalItem, ItemFailure, ItemLike
from scorecore.evals._run._options import (
    check_arguments,
    check_batch,
    check_concurrency,
    check_scorers,
    check_thresholds,
)
from scorecore.evals._run._scoring import ClaimedItem, ItemScorer
from scorecore.evals._trust._fold import TrustFold

__all__ = ["run_evals"]

_END: Final = object()
# Items the workers may run ahead of the store. Workers of fast scorers finish a few hundred
# items between checkpoints; a queue smaller than that blocks a sender per item (a task switch
# each) and gives the store many small saves (a thread hop and a commit each): 64 cost about
# 2 us a stored row more than 512. Judged items are slow, so little is ever queued for them.
_QUEUED_ITEMS: Final = 512
_SAVED_TOGETHER: Final = 1024  # queued items the writer builds and commits in one go, at most
_YIELD_EVERY: Final = 32  # items a worker handles between checkpoints


@final
class _Source:
    """Pulls items one at a time from a sync or async iterable, numbering them."""

    __slots__ = ("_async", "_index", "_iter", "_lock")

    def __init__(self, data: Iterable[object] | AsyncIterable[object]) -> None:
        self._index = 0
        self._lock = anyio.Lock()
        self._async: AsyncIterator[object] | None = None
        self._iter: Iterator[object] = iter(())
        if isinstance(data, AsyncIterable):
            self._async = aiter(data)
        else:
            self._iter = iter(data)

    async def next(self) -> tuple[int, object]:
        if self._async is None:
            value = next(self._iter, _END)
        else:
            # Async generators refuse concurrent __anext__ calls; pull one at a time.
            async with self._lock:
                try:
                    value = await anext(self._async)
                except StopAsyncIteration:
                    value = _END
        index = self._index
        if value is not _END:
            self._index += 1
        return index, value


@final
class _Open:
    """An item whose trials are being handed out: its claim and the next trial to hand out."""

    __slots__ = ("claimed", "index", "next")

    def __init__(self, index: int, claimed: ItemResult | ClaimedItem) -> None:
        self.index = index
        self.claimed = claimed
        self.next = 0


@final
class _Trials:
    """Hands out each item's trials one by one, as units of work for the same workers.

    An item is pulled from the source (and its run id claimed) only when every trial of the
    items before it has been handed out, so at most one item per worker is open: nothing is
    built for a trial before a worker takes it, however many trials there are.
    """

    __slots__ = ("_open", "_scorer", "_source", "_trials")

    def __init__(self, source: _Source, scorer: TrialScorer, trials: int) -> None:
        self._source = source
        self._scorer = scorer
        self._trials = trials
        self._open: deque[_Open] = deque()

    async def next(self) -> tuple[int, object]:
        """The next (item index, :class:`TrialUnit`), or ``(index, _END)`` when done."""
        while not self._open:
            index, raw = await self._source.next()
            if raw is _END:
                if not self._open:  # another worker may have opened an item meanwhile
                    return index, _END
                break
            # Claimed right after the source numbered it, with no await in between.
            self._open.append(_Open(index, self._scorer.prepare(index, raw)))
        head = self._open[0]
        trial = head.next
        head.next += 1
        if head.next == self._trials:
            self._open.popleft()
        return head.index, TrialUnit(head.claimed, trial)


@final
class _Stop:
    """The first error of a worker or the writer; it cancels the batch (re-raised after)."""

    __slots__ = ("error", "scope")

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.error: BaseException | None = None
        self.scope = scope

    def fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
        self.scope.cancel()


@final
class _Finish:
    """What happens to each finished item, in order: the report fold, then the caller's hook."""

    __slots__ = ("_fold", "_hook")

    def __init__(self, *, fold: ReportFold, hook: Callable[[ItemResult], object]) -> None:
        self._fold = fold
        self._hook = hook

    def __call__(self, result: ItemResult, *, store: bool = True) -> Awaitable[None] | None:
        """Fold the item in and call the hook; what is left to await (an async hook), if any.

        Synchronous when the hook is, so an item of a batch without store costs no coroutine
        here. ``store`` is for :class:`_Queue`'s sake (nothing is stored here).
        """
        self._fold.add(result)
        called = self._hook(result)
        if called is not None and inspect.isawaitable(called):  # a plain hook: no ABC lookup
            return _awaited(called)
        return None


async def _awaited(called: Awaitable[object]) -> None:
    await called


# A finished item in the writer's queue, with its rows when they were built at once (see
# _Queue), else None: the writer builds them.
_Queued = tuple[ItemResult, list[Any] | None]


@final
class _Queue:
    """:class:`_Finish`'s place with a store: each finished item goes to the writer's queue,
    which builds its rows and finishes it (:class:`_Writer`).

    An item whose stored values the caller could still change (a dict, a list: see
    :meth:`ItemRows.lasting`) has its rows built at once, from the values as they are now.
    """

    __slots__ = ("_build", "_send")

    def __init__(
        self,
        send: MemoryObjectSendStream[_Queued],
        build: Callable[[ItemResult], tuple[ItemResult, list[Any]]],
    ) -> None:
        self._send = send
        self._build = build

    def __call__(self, result: ItemResult, *, store: bool = True) -> Awaitable[None] | None:
        """Queue the item; what is left to await (room in the queue), if anything."""
        queued: _Queued = (result, [])
        if store:
            queued = (result, None) if ItemRows.lasting(result) else self._build(result)
        # Queued at once while the queue has room: send() yields to the event loop first,
        # one loop turn per item (most of a stored batch's loop turns were these).
        try:
            self._send.send_nowait(queued)
        except anyio.WouldBlock:
            return self._send.send(queued)  # waits for room in the queue
        return None


@final
class _Writer:
    """Builds the rows of queued items, finishes them (:class:`_Finish`) and saves the rows:
    whatever is queued goes in one transaction.

    Rows are built here, a batch at a time, rather than as each item finishes: the same
    code run for hundreds of items in a row runs faster than interleaved with scoring (with the
    two loops of ``_write``, what a stored row of two trivial scorers adds in CPU fell from about
    24.5 to 20 us). An item is finished (folded, hooked) once its rows are built, since a pair
    whose row lost data is failed in its result, and before the rows are committed.
    """

    __slots__ = ("_build", "_finish", "_save")

    def __init__(
        self,
        *,
        build: Callable[[ItemResult], tuple[ItemResult, list[Any]]],
        finish: _Finish,
        save: Callable[[list[Any]], Awaitable[None]],
    ) -> None:
        self._build = build
        self._finish = finish
        self._save = save

    def queue(self, send: MemoryObjectSendStream[_Queued]) -> _Queue:
        """The workers' end of this writer's queue."""
        return _Queue(send, self._build)

    async def run(self, receive: MemoryObjectReceiveStream[_Queued], stop: _Stop) -> None:
        """Write until the queue is closed and empty; a failure stops the batch."""
        try:
            async with receive:
                async for first in receive:
                    queued = [first]
                    while len(queued) < _SAVED_TOGETHER:
                        try:
                            queued.append(receive.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                    await self._write(queued)
        except Exception as exc:  # noqa: BLE001 - re-raised by run_evals, outside the group
            stop.fail(exc)

    async def _write(self, queued: list[_Queued]) -> None:
        rows: list[Any] = []
        results: list[ItemResult] = []
        build, finish = self._build, self._finish
        # Every row first, then every item finished: each loop runs one kind of code.
        for result, built in queued:
            if built is None:
                result, built = build(result)  # noqa: PLW2901 - failed where a row lost data
            rows += built
            results.append(result)
        for result in results:
            pending = finish(result)
            if pending is not None:
                await pending
        if rows:
            await self._save(rows)


@final
class _Work:
    """What workers do: take a unit (an item, or one trial of one), score it, or fail it."""

    __slots__ = ("fail", "next", "score")

    def __init__(
        self,
        next: Callable[[], Awaitable[tuple[int, Any]]],
        score: Callable[[int, Any], Awaitable[ItemResult]],
        fail: Callable[[int, Any, ItemFailure], ItemResult],
    ) -> None:
        self.next = next
        self.score = score
        self.fail = fail

    @classmethod
    def of(cls, source: _Source, score: ItemScorer | TrialScorer, trials: int) -> _Work:
        if isinstance(score, TrialScorer):
            return cls(_Trials(source, score, trials).next, score, score.failed)
        item_scorer = score
        return cls(source.next, score,
                   lambda index, _raw, failure: item_scorer.failed(index, failure))


async def _worker(work: _Work, finish: _Finish | _Queue, stop: _Stop) -> None:
    """Score units from ``work`` until it ends, finishing each."""
    try:
        processed = 0
        next_unit, score = work.next, work.score
        while True:
            index, raw = await next_unit()
            if raw is _END:
                return
            try:
                result = await score(index, raw)
            except Exception as exc:  # noqa: BLE001 - a safety net: one item never stops a batch
                # Not expected (the item scorer guards each call of user code); nothing is
                # stored for the item, so a resume runs it again.
                failure = ItemFailure(
                    error=f"item #{index}: scorecore failed on it: {exception_text(exc)}"
                )
                pending = finish(work.fail(index, raw, failure), store=False)
                if pending is not None:
                    await pending
            else:
                pending = finish(result)
                if pending is not None:
                    await pending
            processed += 1
            if processed % _YIELD_EVERY == 0:
                # Items with only synchronous work never yield; let others run now and then.
                await anyio.lowlevel.checkpoint()
    except Exception as exc:  # noqa: BLE001 - re-raised by run_evals, outside the group
        stop.fail(exc)


async def run_evals(
    data: Iterable[ItemLike] | AsyncIterable[ItemLike],
    scorers: Iterable[Scorer[Any, Any]],
    *,
    target: Callable[[EvalItem], Any] | None = None,
    concurrency: int = 8,
    thresholds: Mapping[str, float | Threshold] | None = None,
    gates: Iterable[str | Scorer[Any, Any]] | None = None,
    store: ScoreStore | None = None,
    on_item_complete: Callable[[ItemResult], object] | None = None,
    runtime: Runtime | None = None,
    batch_id: str | None = None,
    resume: bool = False,
    keep_results: bool = False,
    max_failures: int | None = 0,
    cache: JudgeCache | None = None,
    pricing: Pricing | None = None,
    budget: Budget | None = None,
    trials: int = 1,
    max_failure_rate: float | None = None,
    max_output_tokens: int | None = None,
) -> EvalReport:
    """Run every scorer over every item of a dataset and report the aggregate.

    Items are pulled from ``data`` lazily (an iterable or async iterable; never turned into a
    list), at most ``concurrency`` at a time. For each item the ``target`` (if any) produces
    the output, then every scorer runs, one after the other, with the run id
    ``f"{batch_id}:{item id}"`` (or ``f"{batch_id}:#{index}"``). A bad item, a raising target,
    a raising scorer or a failing judge is recorded for that item; the batch goes on.

    Args:
        data: the items: :class:`EvalItem` values or mappings with the keys ``input``,
            ``output``, ``ground_truth`` (or ``groundTruth``), ``request_context`` (or
            ``requestContext``), ``expected_trajectory``, ``id``, ``extra``, and
            ``baseline_output`` (kept in ``extra``: what a pairwise judgement compares the
            output with).
        scorers: the scorers to run (ids must be unique).
        target: an (async) function of the item returning the output to score; its result
            replaces the item's ``output``.
        concurrency: the most items in flight at once (>= 1); with ``trials``, the most
            trials in flight (a trial of an item is a unit of work, like an item).
        thresholds: scorer id → minimum mean (a number) or a :class:`Threshold`.
        gates: scorers (or their ids) that must average 1.0; scorers given here are run
            even when not in ``scorers``.
        store: where each item's rows are saved: one writer task builds and commits the rows
            of whatever items finished meanwhile, together.
        on_item_complete: called (sync or async) with each :class:`ItemResult` as it completes,
            in completion order; with a ``store``, once its rows are built, before they are
            committed (by the writer, which takes the items finished meanwhile together).
        runtime: clock, sleep and ids for scorers and the duration; the real one by default.
        batch_id: the batch's id, without ``:`` or ``/`` (they separate the item and the
            trial in run ids); a fresh id from the runtime by default. With a ``store``,
            a batch id that already has rows there is refused unless ``resume`` is set, so
            two datasets never mix in one batch.
        resume: skip (run id, scorer id) pairs the store already holds as final for
            ``batch_id`` (needs ``store`` and ``batch_id``, and the batch must have rows in
            the store); failed pairs run again.
        keep_results: keep every :class:`ItemResult` in ``report.results`` (memory grows
            with the dataset; off by default).
        max_failures: the most failed scorer runs (a raising target, a bad item, a failing
            judge or step …) the verdict tolerates: by default 0, so any failed run fails
            the batch; ``None`` never fails it for failures alone. Not-scorable runs the
            judge could not decide (position bias, a panel tie, low confidence, an echoed
            example: :class:`~scorecore.NotScorable` kinds) count with them; runs not scorable
            because the item does not apply never do.
        cache: a judge cache (``scorecore_adapters.cache``): a judge request already answered
            (same prompt, schema, model, settings and trial) is read back, not asked again.
        pricing: judge prices; every judge execution gets ``cost_usd`` and the report's
            ``economics`` sums them per scorer.
        budget: a spending limit for the batch's judge calls; in hard mode a refused call
            fails its run with cause ``BudgetExhausted`` (resume with a larger budget).
        trials: score every item this many times, each with its own trial index (the cache
            keeps trials apart) and run ids ``f"{batch_id}/trial-{t}:{item}"`` after the
            first; the report's ``trials`` gives each scorer's spread. Trials share the
            ``concurrency`` with items and are handed out one at a time (memory does not
            grow with their number). See docs/economics.md.
        max_failure_rate: the share of scorer runs (over every scorer) that may fail, e.g.
            ``0.05``; it relaxes ``max_failures``: failures fail the verdict only when beyond
            both.
        max_output_tokens: the output cap of judge replies whose step sets none (instead of
            the judge model's default, or 1,024): sent to the provider, reserved by the budget.

    Returns:
        The :class:`EvalReport`: per-scorer means and counts, threshold and gate results, and
        the verdict: ``"failed"`` when the batch has no items, a scorer scored none of the
        items it applies to (every run failed or undecided by the judge, not-scorable ones
        aside), a threshold or gate failed, or more scorer runs failed (or were undecided by
        the judge) than ``max_failures`` / ``max_failure_rate`` allow;
        ``report.verdict_reason`` says why in one line.

    Raises:
        EvalConfigError: a bad argument, a ``batch_id`` already in the store without
            ``resume``, or ``resume`` of a batch the store does not hold (before any item
            runs or any row is written).
        StoreError: the store failed; rows saved so far stay, resume to finish.

    >>> import anyio
    >>> from scorecore import create_scorer
    >>> exact = create_scorer(id="exact", description="Exact match").generate_score(
    ...     lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
    >>> data = [{"input": "2+2?", "output": "4", "ground_truth": "4"},
    ...         {"input": "3+3?", "output": "7", "groundTruth": "6"}]
    >>> report = anyio.run(lambda: run_evals(data, [exact], thresholds={"exact": 0.5}))
    >>> report.summary("exact").mean, report.verdict
    (0.5, 'passed')
    """
    chosen, gate_ids = check_scorers(scorers, gates)
    ids = [s.id for s in chosen]
    checks = check_thresholds(thresholds, ids)
    check_concurrency("run_evals", concurrency)
    check_arguments(data=data, target=target, batch_id=batch_id, max_failures=max_failures,
                    max_failure_rate=max_failure_rate, resume=resume, store=store)
    if store is not None and batch_id is not None:
        await check_batch(store, batch_id, resume=resume)
    rt = runtime or DEFAULT_RUNTIME
    meter = batch_meter(rt, cache=cache, pricing=pricing, budget=budget, trials=trials,
                        max_output_tokens=max_output_tokens)
    check_economics(trials=trials, cache=cache, pricing=pricing, budget=budget, meter=meter,
                    scorers=chosen)
    batch_id = batch_id or rt.new_id()
    started = rt.clock()
    done: Mapping[tuple[str, str], CompletedScore] = {}
    if resume and store is not None:
        done = await store.completed(batch_id)
    fold = ReportFold(ids, thresholds=checks, gates=gate_ids, max_failures=max_failures,
                      max_failure_rate=max_failure_rate, keep_results=keep_results)
    score: ItemScorer | TrialScorer = per_trial(
        lambda trial_rt, trial_batch: ItemScorer(
            scorers=chosen, target=target, runtime=trial_rt, batch_id=trial_batch, done=done,
        ),
        runtime=rt, meter=meter, batch_id=batch_id, trials=trials,
    )
    economics = EconomicsFold(scorer_ids=ids, meter=meter, trials=trials, thresholds=checks)
    trust = TrustFold()
    hook = trust.hook(economics.hook(on_item_complete))
    work = _Work.of(_Source(data), score, trials)
    async with anyio.create_task_group() as group:
        stop = _Stop(group.cancel_scope)
        finish = _Finish(fold=fold, hook=hook)
        if store is not None:
            # A bounded queue: workers run ahead of the store by at most this many items, and
            # the writer builds, finishes and commits whatever is queued in one go.
            send, receive = anyio.create_memory_object_stream[_Queued](
                max(concurrency, _QUEUED_ITEMS)
            )
            rows = ItemRows(batch_id=batch_id, scorers=chosen, target=target)
            # A store taking records is handed them, built as they are written: no row is made
            # only for the store to take it apart (most of a stored row's cost was that).
            writer = (_Writer(build=rows.records, finish=finish, save=store.save_records)
                      if isinstance(store, RecordStore)
                      else _Writer(build=rows.rows, finish=finish, save=store.save))
            group.start_soon(writer.run, receive, stop)
            async with send, anyio.create_task_group() as workers:
                for _ in range(concurrency):
                    workers.start_soon(_worker, work, writer.queue(send), stop)
        else:
            for _ in range(concurrency):
                group.start_soon(_worker, work, finish, stop)
    if stop.error is not None:
        raise stop.error
    return trust.finish(
        economics.finish(fold.report(batch_id=batch_id, duration=rt.clock() - started)))
