"""A batch's judge economics and trials: the meter ``run_evals`` runs with, and the report parts.

``run_evals(..., cache=, pricing=, budget=, trials=)`` builds one
:class:`~scorecore.judge.economics.JudgeMeter` for the batch (:func:`batch_meter`); each trial runs
with its copy (same ledger, its own trial index, so the cache keeps the trials apart) and run ids
``f"{batch_id}/trial-{t}:{item}"`` for trials after the first. :class:`EconomicsFold` watches every
finished item and gives the report its :class:`EconomicsSummary` (cost per scorer and in total,
savings, cache hits, spend against the budget) and, with trials, its :class:`TrialsSummary` (per
scorer: the mean over every trial, the per-item spread, and the items whose verdict changed between
trials).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, final

import attrs

from scorecore._core._budget import Budget
from scorecore._core._cache import JudgeCache
from scorecore._core._causes import BudgetExhausted
from scorecore._core._meter import JudgeMeter
from scorecore._core._pricing import Pricing
from scorecore._core._reprs import short_repr
from scorecore._core._runtime import Runtime
from scorecore._core._values import JudgeExecution, ScorerRunError
from scorecore.evals._checks import FIXED_BITS, fixed
from scorecore.evals._economics._values import (
    EconomicsSummary,
    ScorerCost,
    TrialSpread,
    TrialsSummary,
)
from scorecore.evals._report._values import EvalReport, ItemResult, ScorerOutcome, Threshold
from scorecore.evals._run._items import ItemFailure
from scorecore.evals._run._options import EvalConfigError
from scorecore.evals._run._scoring import ClaimedItem, ItemScorer
from scorecore.validators import is_int

__all__ = ["EconomicsFold"]

_CHANGED_IDS_KEPT = 100


def trial_batch_id(batch_id: str, trial: int) -> str:
    """The run-id prefix of a trial: the batch id for the first, ``…/trial-N`` after."""
    return batch_id if trial == 0 else f"{batch_id}/trial-{trial}"


def judge_models(scorers: Iterable[object]) -> set[str]:
    """The model ids of every judge the scorers' prompt steps ask."""
    found: set[str] = set()
    for scorer in scorers:
        for info in getattr(scorer, "steps", ()):
            judge = getattr(info, "judge", None)
            if judge is not None:
                found.add(judge.model.model_id)
    return found


def batch_meter(
    runtime: Runtime,
    *,
    cache: JudgeCache | None,
    pricing: Pricing | None,
    budget: Budget | None,
    trials: int,
    max_output_tokens: int | None = None,
) -> JudgeMeter | None:
    """The batch's meter: the arguments over the runtime's own meter, if any."""
    if max_output_tokens is not None and not (
        is_int(max_output_tokens) and max_output_tokens >= 1
    ):
        raise EvalConfigError(
            f"run_evals: max_output_tokens must be an int >= 1 or None, got "
            f"{short_repr(max_output_tokens)}", field="max_output_tokens", value=max_output_tokens,
        )
    own = runtime.meter
    if own is None and cache is None and pricing is None and budget is None and trials == 1 \
            and max_output_tokens is None:
        return None
    base = own or JudgeMeter()
    changes: dict[str, Any] = {}
    if max_output_tokens is not None:
        changes["max_output_tokens"] = max_output_tokens
    if cache is not None:
        changes["cache"] = cache
    if pricing is not None:
        changes["pricing"] = pricing
    if budget is not None:
        changes["budget"] = budget
    return attrs.evolve(base, **changes) if changes else base


def missing_prices(meter: JudgeMeter | None, scorers: Iterable[object]) -> list[str]:
    """Judge models a cost budget cannot price (the batch refuses to start with any)."""
    if meter is None or meter.budget is None or meter.budget.max_cost_usd is None:
        return []
    pricing = meter.pricing
    return sorted(m for m in judge_models(scorers) if pricing is None or pricing.price(m) is None)


@attrs.define
class _Costs:
    cost: float = 0.0
    cost_known: bool = True
    saved: float = 0.0
    hits: int = 0
    misses: int = 0
    calls: int = 0
    stopped: int = 0


def _executions(outcome: ScorerOutcome) -> Iterable[JudgeExecution]:
    result = outcome.result
    if result is None and isinstance(outcome.run_error, ScorerRunError):
        result = outcome.run_error.partial
    if result is None:
        return ()
    return [e for executions in result.judge.values() for e in executions]


def pair_costs(outcome: ScorerOutcome) -> dict[str, float | int | bool]:
    """One pair's judge costs and cache counts, as :meth:`EconomicsFold.add` counts them (a
    failed run's partial result included): the cost columns of a result row."""
    executions = list(_executions(outcome))
    error = outcome.run_error
    return {
        "cost_usd": math.fsum(e.cost_usd or 0.0 for e in executions),
        "cost_known": all(e.cost_usd is not None or not (e.model_call_count or e.cache_hits)
                          for e in executions),
        "saved_usd": math.fsum(e.saved_usd or 0.0 for e in executions),
        "cache_hits": sum(e.cache_hits for e in executions),
        "cache_misses": sum(e.cache_misses for e in executions),
        "model_calls": sum(e.model_call_count for e in executions),
        "budget_stopped": isinstance(error, ScorerRunError)
        and isinstance(error.cause, BudgetExhausted),
    }


@final
class _ItemTrials:
    """One item's runs of one scorer so far, over its trials: counts and exact sums only."""

    __slots__ = ("name", "runs", "squares", "total", "values", "verdicts")

    def __init__(self, name: str) -> None:
        self.name = name
        self.runs = 0
        self.values = 0  # runs scored (pass or fail)
        self.total = 0  # their scores' sum, fixed-point (exact)
        self.squares = 0  # the sum of their squares, fixed-point squared (exact)
        self.verdicts: set[str] = set()

    def add(self, verdict: str, score: float | None) -> None:
        self.runs += 1
        self.verdicts.add(verdict)
        if score is not None and verdict in ("pass", "fail"):
            value = fixed(score)
            self.values += 1
            self.total += value
            self.squares += value * value

    def std_dev(self) -> float:
        """The population standard deviation of the scores (at least two), from exact sums."""
        n = self.values
        return math.sqrt((n * self.squares - self.total * self.total)
                         / (n * n << (2 * FIXED_BITS)))


@final
class _Spread:
    """One scorer's spread over the items whose trials are all in."""

    __slots__ = ("changed", "changed_ids", "dev_max", "dev_total", "devs", "total", "values")

    def __init__(self) -> None:
        self.values = 0
        self.total = 0
        self.devs = 0
        self.dev_total = 0
        self.dev_max: float | None = None
        self.changed = 0
        self.changed_ids: list[str] = []

    def add(self, item: _ItemTrials) -> None:
        self.values += item.values
        self.total += item.total
        if item.values >= 2:
            dev = item.std_dev()
            self.devs += 1
            self.dev_total += fixed(dev)
            self.dev_max = dev if self.dev_max is None else max(self.dev_max, dev)
        if len(item.verdicts) > 1:
            self.changed += 1
            if len(self.changed_ids) < _CHANGED_IDS_KEPT:
                self.changed_ids.append(item.name)

    def summary(self, scorer_id: str) -> TrialSpread:
        return TrialSpread(
            scorer_id=scorer_id,
            mean=self.total / (self.values << FIXED_BITS) if self.values else None,
            mean_std_dev=self.dev_total / (self.devs << FIXED_BITS) if self.devs else None,
            max_std_dev=self.dev_max, changed_items=self.changed,
            changed_item_ids=tuple(self.changed_ids),
        )


@final
class EconomicsFold:
    """Folds finished items, in any order, into the report's ``economics`` and ``trials`` parts.

    In one process, give it the batch's meter: the spend, the budget and the refused calls come
    from the meter's ledger, and :meth:`add` counts each item's judge executions. A runner
    whose items ran on workers, each with a meter of its own, gives ``metered=True`` and no
    meter, and folds the result rows the workers sent back with :meth:`add_row` (their costs,
    and what each worker's meter spent).

    Args:
        scorer_ids: the scorers, in the report's order.
        meter: the batch's meter, if any.
        trials: how many trials each item runs (> 1: the report gets ``trials``).
        thresholds: scorer id → threshold; its ``min`` is the pass mark of trials' verdicts.
        metered: whether the report gets ``economics`` (default: when a meter is given).

    >>> from scorecore.evals import ItemResult
    >>> from scorecore.evals.engine import EconomicsFold, ReportFold, result_rows
    >>> from scorecore.evals.results import ScorerOutcome
    >>> result = ItemResult(index=0, item_id=None, run_id="b:#0", item=None,
    ...                     outcomes=(ScorerOutcome(scorer_id="s", status="scored", score=1.0),))
    >>> fold = EconomicsFold(scorer_ids=["s"], metered=True)
    >>> for row in result_rows([result], spent=(0.25, 120)):
    ...     fold.add_row(row)
    >>> report = ReportFold(["s"]).report(batch_id="b", duration=0.0)
    >>> economics = fold.finish(report).economics
    >>> economics.spent_usd, economics.spent_tokens, economics.cost_usd
    (0.25, 120, 0.0)
    """

    __slots__ = ("_costs", "_marks", "_meter", "_metered", "_open", "_spent_tokens",
                 "_spent_usd", "_spreads", "_trials")

    def __init__(
        self,
        *,
        scorer_ids: Sequence[str],
        meter: JudgeMeter | None = None,
        trials: int = 1,
        thresholds: Mapping[str, Threshold] | None = None,
        metered: bool | None = None,
    ) -> None:
        self._meter = meter
        self._metered = meter is not None if metered is None else metered
        self._trials = trials
        self._costs = {sid: _Costs() for sid in scorer_ids}
        self._marks = {
            sid: (t.min if t.min is not None else 0.5) for sid, t in (thresholds or {}).items()
        }
        # (item index, scorer) → its trials so far, until all are in (memory: the items open)
        self._open: dict[tuple[int, str], _ItemTrials] = {}
        self._spreads = {sid: _Spread() for sid in scorer_ids}
        # What workers' meters spent (add_row), when there is no batch meter to ask.
        self._spent_usd: list[float] = []
        self._spent_tokens = 0

    def hook(
        self, then: Callable[[ItemResult], object] | None
    ) -> Callable[[ItemResult], object]:
        """An ``on_item_complete`` hook that observes the item, then calls ``then``."""
        def observe(result: ItemResult) -> object:
            self.add(result)
            return None if then is None else then(result)

        return observe

    def add(self, result: ItemResult) -> None:
        """Count one finished item (of one trial)."""
        for outcome in result.outcomes:
            costs = self._costs.get(outcome.scorer_id)
            if costs is None:
                continue
            for execution in _executions(outcome):
                if execution.cost_usd is None:
                    # A cache hit costs nothing only when priced: unpriced, its cost (and what
                    # it saved) is unknown, as a call's is.
                    if execution.model_call_count or execution.cache_hits:
                        costs.cost_known = False
                else:
                    costs.cost += execution.cost_usd
                costs.saved += execution.saved_usd or 0.0
                costs.hits += execution.cache_hits
                costs.misses += execution.cache_misses
                costs.calls += execution.model_call_count
            error = outcome.run_error
            if isinstance(error, ScorerRunError) and isinstance(error.cause, BudgetExhausted):
                costs.stopped += 1
            if self._trials > 1:
                mark = self._marks.get(outcome.scorer_id, 0.5)
                verdict: str = outcome.status
                if outcome.status == "scored" and outcome.score is not None:
                    verdict = "pass" if outcome.score >= mark else "fail"
                key = (result.index, outcome.scorer_id)
                item = self._open.get(key)
                if item is None:
                    item = self._open[key] = _ItemTrials(result.item_id or f"#{result.index}")
                item.add(verdict, outcome.score)
                if item.runs == self._trials:  # every trial is in: fold it, forget it
                    self._spreads[outcome.scorer_id].add(self._open.pop(key))

    def add_row(self, row: Mapping[str, Any]) -> None:
        """Count one result row (see :func:`~scorecore.evals.engine.result_rows`): its pair's
        costs and cache counts, and the spend of the worker call it was the first row of."""
        if row["spent_usd"]:
            self._spent_usd.append(row["spent_usd"])
        self._spent_tokens += row["spent_tokens"]
        costs = self._costs.get(row["scorer_id"])
        if costs is None:
            return
        costs.cost += row["cost_usd"]
        costs.cost_known = costs.cost_known and row["cost_known"]
        costs.saved += row["saved_usd"]
        costs.hits += row["cache_hits"]
        costs.misses += row["cache_misses"]
        costs.calls += row["model_calls"]
        costs.stopped += bool(row["budget_stopped"])

    def finish(self, report: EvalReport) -> EvalReport:
        """The report with its ``economics`` and ``trials`` parts."""
        economics = None
        meter = self._meter
        if self._metered:
            costs = [
                ScorerCost(
                    scorer_id=sid, cost_usd=round(c.cost, 12) if c.cost_known else None,
                    saved_usd=round(c.saved, 12), cache_hits=c.hits, cache_misses=c.misses,
                    model_calls=c.calls, budget_stopped=c.stopped,
                )
                for sid, c in self._costs.items()
            ]
            known = all(c.cost_usd is not None for c in costs)
            spend: dict[str, Any] = {
                "spent_usd": round(math.fsum(self._spent_usd), 12),
                "spent_tokens": self._spent_tokens,
            }
            if meter is not None:  # the batch's own ledger: spend, budget, refusals
                ledger = meter.ledger
                spend = {"spent_usd": round(ledger.spent_usd, 12),
                         "spent_tokens": ledger.spent_tokens, "budget": meter.budget,
                         "budget_refused": ledger.refused, "usage_errors": ledger.usage_errors}
            economics = EconomicsSummary(
                scorers=tuple(costs),
                cost_usd=round(math.fsum(c.cost_usd or 0.0 for c in costs), 12) if known
                else None,
                saved_usd=round(math.fsum(c.saved_usd for c in costs), 12),
                cache_hits=sum(c.cache_hits for c in costs),
                cache_misses=sum(c.cache_misses for c in costs),
                **spend,
            )
        trials = self._trials_summary() if self._trials > 1 else None
        return attrs.evolve(report, economics=economics, trials=trials)

    def _trials_summary(self) -> TrialsSummary:
        for (_, scorer_id), item in sorted(self._open.items(), key=lambda kv: kv[0]):
            self._spreads[scorer_id].add(item)  # items some trials of which never came in
        self._open.clear()
        return TrialsSummary(trials=self._trials, scorers=tuple(
            spread.summary(sid) for sid, spread in self._spreads.items()
        ))


@final
@attrs.frozen
class TrialUnit:
    """One trial of a claimed item: the unit of work of a batch with trials."""

    claimed: ItemResult | ClaimedItem
    trial: int


@final
class TrialScorer:
    """Scores one trial of an item at a time: a trial is a unit of work, like an item.

    The item's run id is claimed once (:meth:`prepare`, the first trial's ids); each trial
    then runs with its own run ids (``f"{batch_id}/trial-{t}:…"`` after the first) and a copy
    of the batch's meter with its trial index, so the cache keeps the trials apart. Nothing
    is built per trial ahead of its turn: memory stays flat in the number of trials.
    """

    __slots__ = ("_batch_id", "_meter", "_runtime", "_scorer")

    def __init__(
        self, scorer: ItemScorer, *, batch_id: str, runtime: Runtime, meter: JudgeMeter | None
    ) -> None:
        self._scorer = scorer
        self._batch_id = batch_id
        self._runtime = runtime
        self._meter = meter

    def prepare(self, index: int, raw: object) -> ItemResult | ClaimedItem:
        """Read the entry and claim its run id for every trial (no await)."""
        return self._scorer.prepare(index, raw)

    async def __call__(self, index: int, unit: TrialUnit) -> ItemResult:
        """The item's result in ``unit.trial``."""
        claimed, trial = unit.claimed, unit.trial
        if isinstance(claimed, ItemResult):
            return self._in_trial(claimed, trial)
        runtime = self._runtime
        if self._meter is not None:
            runtime = attrs.evolve(runtime, meter=self._meter.for_trial(trial))
        if trial:
            claimed = attrs.evolve(claimed, run_id=self._run_id(claimed.run_id, trial))
        result = await self._scorer.run(claimed, runtime=runtime)
        return attrs.evolve(result, trial=trial) if trial else result

    def failed(self, index: int, unit: TrialUnit, failure: ItemFailure) -> ItemResult:
        """The trial failed as a whole (every scorer failed with ``failure``)."""
        return self._in_trial(self._scorer.failed(index, failure), unit.trial)

    def _run_id(self, run_id: str, trial: int) -> str:
        # The first trial's run id is f"{batch_id}:{item}": only the prefix changes.
        return trial_batch_id(self._batch_id, trial) + run_id[len(self._batch_id):]

    def _in_trial(self, result: ItemResult, trial: int) -> ItemResult:
        if not trial:
            return result
        return attrs.evolve(result, run_id=self._run_id(result.run_id, trial), trial=trial)


def check_economics(
    *, trials: object, cache: object, pricing: object, budget: object,
    meter: JudgeMeter | None, scorers: Iterable[object],
) -> None:
    """Refuse a bad ``trials``, ``pricing`` or ``budget``, or a cost budget it cannot price."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise EvalConfigError(f"run_evals: trials must be an int >= 1, got {short_repr(trials)}",
                              field="trials", value=trials)
    if pricing is not None and not isinstance(pricing, Pricing):
        raise EvalConfigError(f"run_evals: pricing must be a Pricing, got {short_repr(pricing)}",
                              field="pricing", value=pricing)
    if budget is not None and not isinstance(budget, Budget):
        raise EvalConfigError(f"run_evals: budget must be a Budget, got {short_repr(budget)}",
                              field="budget", value=budget)
    if cache is not None and not (callable(getattr(cache, "get", None))
                                  and callable(getattr(cache, "put", None))):
        raise EvalConfigError(
            f"run_evals: cache must be a JudgeCache (async get and put), got {short_repr(cache)}",
            field="cache", value=cache,
        )
    unpriced = missing_prices(meter, scorers)
    if unpriced:
        raise EvalConfigError(
            f"run_evals: budget.max_cost_usd needs a price for every judge model; "
            f"pricing has none for {', '.join(map(repr, unpriced))}",
            field="pricing", value=unpriced,
        )


def per_trial(
    make: Callable[[Runtime, str], ItemScorer],
    *,
    runtime: Runtime,
    meter: JudgeMeter | None,
    batch_id: str,
    trials: int,
) -> ItemScorer | TrialScorer:
    """The batch's scorer: ``make(runtime, batch_id)``, by trial when ``trials > 1``."""
    first = runtime if meter is None else attrs.evolve(runtime, meter=meter.for_trial(0))
    scorer = make(first, batch_id)
    if trials == 1:
        return scorer
    return TrialScorer(scorer, batch_id=batch_id, runtime=runtime, meter=meter)
