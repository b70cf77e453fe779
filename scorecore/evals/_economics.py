"""A batch's judge economics and trials: the meter ``run_evals`` runs with, and the report parts.

``run_evals(..., cache=, pricing=, budget=, trials=)`` builds one
:class:`~scorecore.judge.JudgeMeter` for the batch (:func:`batch_meter`); each trial runs with
its copy (same ledger, its own trial index, so the cache keeps the trials apart) and run ids
``f"{batch_id}/trial-{t}:{item}"`` for trials after the first. :class:`EconomicsFold` watches
every finished item and gives the report its :class:`EconomicsSummary` (cost per scorer and in
total, savings, cache hits, spend against the budget) and, with trials, its
:class:`TrialsSummary` (per scorer: the mean over every trial, the per-item spread, and the
items whose verdict changed between trials).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, final

import attrs

from scorecore._cache import JudgeCache
from scorecore._checks import is_int
from scorecore._economics import Budget, BudgetExhausted, JudgeMeter, Pricing
from scorecore._errors import ScorerRunError
from scorecore._reprs import short_repr
from scorecore._runtime import Runtime
from scorecore.evals._options import EvalConfigError
from scorecore.evals._spending import EconomicsSummary, ScorerCost, TrialSpread, TrialsSummary

if TYPE_CHECKING:
    from scorecore.evals._report import EvalReport, ItemResult, Threshold

__all__: list[str] = []  # internal: run_evals' part; the report values are in _spending

_CHANGED_IDS_KEPT = 100


def trial_batch_id(batch_id: str, trial: int) -> str:
    """The run-id prefix of a trial: the batch id for the first, ``…/trial-N`` after."""
    return batch_id if trial == 0 else f"{batch_id}/trial-{trial}"


def judge_models(scorers: Iterable[Any]) -> set[str]:
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


def missing_prices(meter: JudgeMeter | None, scorers: Iterable[Any]) -> list[str]:
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


def _executions(outcome: Any) -> Iterable[Any]:
    result = outcome.result
    if result is None and isinstance(outcome.run_error, ScorerRunError):
        result = outcome.run_error.partial
    if result is None:
        return ()
    return [e for executions in result.judge.values() for e in executions]


@final
class EconomicsFold:
    """Watches finished items; adds the economics and trials parts to the report."""

    __slots__ = ("_costs", "_marks", "_meter", "_names", "_trial_scores", "_trials")

    def __init__(
        self,
        *,
        scorer_ids: Sequence[str],
        meter: JudgeMeter | None,
        trials: int,
        thresholds: Mapping[str, Threshold],
    ) -> None:
        self._meter = meter
        self._trials = trials
        self._costs = {sid: _Costs() for sid in scorer_ids}
        self._marks = {
            sid: (t.min if t.min is not None else 0.5) for sid, t in thresholds.items()
        }
        self._names: dict[int, str] = {}
        # (item index, scorer) → the verdict and score of each trial so far
        self._trial_scores: dict[tuple[int, str], list[tuple[str, float | None]]] = {}

    def hook(
        self, then: Callable[[ItemResult], Any] | None
    ) -> Callable[[ItemResult], Any]:
        """An ``on_item_complete`` hook that observes the item, then calls ``then``."""
        def observe(result: ItemResult) -> Any:
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
                    if execution.model_call_count:
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
                self._trial_scores.setdefault(key, []).append((verdict, outcome.score))
                self._names.setdefault(result.index, result.item_id or f"#{result.index}")

    def finish(self, report: EvalReport) -> EvalReport:
        """The report with its ``economics`` and ``trials`` parts."""
        economics = None
        meter = self._meter
        if meter is not None:
            ledger = meter.ledger
            costs = [
                ScorerCost(
                    scorer_id=sid, cost_usd=round(c.cost, 12) if c.cost_known else None,
                    saved_usd=round(c.saved, 12), cache_hits=c.hits, cache_misses=c.misses,
                    model_calls=c.calls, budget_stopped=c.stopped,
                )
                for sid, c in self._costs.items()
            ]
            known = all(c.cost_usd is not None for c in costs)
            economics = EconomicsSummary(
                scorers=tuple(costs),
                cost_usd=round(math.fsum(c.cost_usd or 0.0 for c in costs), 12) if known
                else None,
                saved_usd=round(math.fsum(c.saved_usd for c in costs), 12),
                cache_hits=sum(c.cache_hits for c in costs),
                cache_misses=sum(c.cache_misses for c in costs),
                spent_usd=round(ledger.spent_usd, 12), spent_tokens=ledger.spent_tokens,
                budget=meter.budget, budget_refused=ledger.refused,
                usage_errors=ledger.usage_errors,
            )
        trials = self._trials_summary() if self._trials > 1 else None
        return attrs.evolve(report, economics=economics, trials=trials)

    def _trials_summary(self) -> TrialsSummary:
        spreads = []
        for sid in self._costs:
            scores: list[float] = []
            devs: list[float] = []
            changed: list[str] = []
            count = 0
            for (index, scorer_id), runs in self._trial_scores.items():
                if scorer_id != sid:
                    continue
                values = [s for v, s in runs if s is not None and v in ("pass", "fail")]
                scores.extend(values)
                if len(values) >= 2:
                    devs.append(statistics.pstdev(values))
                if len({v for v, _ in runs}) > 1:
                    count += 1
                    if len(changed) < _CHANGED_IDS_KEPT:
                        changed.append(self._names[index])
            spreads.append(TrialSpread(
                scorer_id=sid,
                mean=math.fsum(scores) / len(scores) if scores else None,
                mean_std_dev=math.fsum(devs) / len(devs) if devs else None,
                max_std_dev=max(devs) if devs else None,
                changed_items=count, changed_item_ids=tuple(changed),
            ))
        return TrialsSummary(trials=self._trials, scorers=tuple(spreads))


@final
class TrialScorer:
    """Scores an item once per trial, each with its own run ids and trial-indexed meter."""

    __slots__ = ("_scorers",)

    def __init__(self, scorers: Sequence[Any]) -> None:
        self._scorers = scorers

    async def __call__(self, index: int, raw: object) -> tuple[ItemResult, ...]:
        """The item's result in each trial, in trial order."""
        # Every trial claims its run id before any awaits: a later item with a duplicate id
        # cannot take trial t's id while trial t-1 of this item is still running.
        claimed = [scorer.prepare(index, raw) for scorer in self._scorers]
        return tuple([await scorer.run(c) for scorer, c in zip(self._scorers, claimed,
                                                                 strict=True)])

    def failed(self, index: int, failure: Any) -> ItemResult:
        """The item failed as a whole (reported once, under the first trial)."""
        result: ItemResult = self._scorers[0].failed(index, failure)
        return result


def each_result(result: ItemResult | tuple[ItemResult, ...]) -> tuple[ItemResult, ...]:
    """One item's results: one, or one per trial."""
    return result if isinstance(result, tuple) else (result,)


def check_economics(
    *, trials: object, cache: object, pricing: object, budget: object,
    meter: JudgeMeter | None, scorers: Iterable[Any],
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
    make: Callable[[Runtime, str], Any],
    *,
    runtime: Runtime,
    meter: JudgeMeter | None,
    batch_id: str,
    trials: int,
) -> Any:
    """The item scorer: ``make(runtime, run-id prefix)``, once per trial when ``trials > 1``."""
    def runtime_for(trial: int) -> Runtime:
        return runtime if meter is None else attrs.evolve(runtime, meter=meter.for_trial(trial))

    if trials == 1:
        return make(runtime_for(0), batch_id)
    return TrialScorer([make(runtime_for(t), trial_batch_id(batch_id, t)) for t in range(trials)])
