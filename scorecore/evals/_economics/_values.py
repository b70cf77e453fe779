"""What a batch's judge calls cost, and how scores spread across trials (report values)."""

from __future__ import annotations

from typing import Any, final

import attrs

from scorecore._core._budget import Budget
from scorecore._core._pricing import format_usd

__all__ = ["EconomicsSummary", "ScorerCost", "TrialSpread", "TrialsSummary"]


@final
@attrs.frozen(kw_only=True)
class ScorerCost:
    """One scorer's judge spending in a batch.

    Attributes:
        scorer_id: the scorer.
        cost_usd: what its judge calls cost (retries and format fallbacks included, cache hits
            free); ``None`` when some call could not be priced.
        saved_usd: what its cache hits would have cost, plus batch API savings.
        cache_hits: judge replies read from the cache (or shared with an identical call).
        cache_misses: cache lookups that asked the judge.
        model_calls: calls made to the judge model, retries included.
        budget_stopped: runs a hard budget stopped (cause ``BudgetExhausted``).
    """

    scorer_id: str
    cost_usd: float | None = 0.0
    saved_usd: float = 0.0
    cache_hits: int = 0
    cache_misses: int = 0
    model_calls: int = 0
    budget_stopped: int = 0


@final
@attrs.frozen(kw_only=True)
class EconomicsSummary:
    """A batch's judge spending: per scorer, in total, and against its budget.

    Attributes:
        scorers: per-scorer costs, in the scorers' order.
        cost_usd: the total (``None`` when some call could not be priced).
        saved_usd: what the cache hits would have cost, plus batch API savings.
        cache_hits: replies read from the cache, over the batch.
        cache_misses: cache lookups that asked the judge.
        spent_usd: the spend the budget counted (unknown token counts at their worst case).
        spent_tokens: input plus output tokens the budget counted.
        budget: the budget, if any.
        budget_refused: judge calls the hard budget refused.
        usage_errors: judge replies (or cache entries) whose token counts were negative, not
            whole numbers or absurd; each was charged at its worst case, none credited.
    """

    scorers: tuple[ScorerCost, ...]
    cost_usd: float | None
    saved_usd: float
    cache_hits: int
    cache_misses: int
    spent_usd: float
    spent_tokens: int
    budget: Budget | None = None
    budget_refused: int = 0
    usage_errors: int = 0

    def budget_line(self) -> str | None:
        """``"spent $0.42 of $1.00 (hard)"`` and/or tokens; ``None`` without a budget."""
        budget = self.budget
        if budget is None:
            return None
        parts = []
        if budget.max_cost_usd is not None:
            parts.append(f"{format_usd(self.spent_usd)} of {format_usd(budget.max_cost_usd)}")
        if budget.max_tokens is not None:
            parts.append(f"{self.spent_tokens:,} of {budget.max_tokens:,} tokens")
        stopped = f", {self.budget_refused} call(s) refused" if self.budget_refused else ""
        return f"spent {' and '.join(parts)} ({budget.mode}){stopped}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys, like the rest of the report)."""
        budget = self.budget
        return {
            "costUsd": self.cost_usd, "savedUsd": self.saved_usd,
            "cacheHits": self.cache_hits, "cacheMisses": self.cache_misses,
            "spentUsd": self.spent_usd, "spentTokens": self.spent_tokens,
            "usageErrors": self.usage_errors,
            "budget": None if budget is None else {
                "maxCostUsd": budget.max_cost_usd, "maxTokens": budget.max_tokens,
                "mode": budget.mode, "refusedCalls": self.budget_refused,
            },
            "scorers": [{
                "scorerId": s.scorer_id, "costUsd": s.cost_usd, "savedUsd": s.saved_usd,
                "cacheHits": s.cache_hits, "cacheMisses": s.cache_misses,
                "modelCalls": s.model_calls, "budgetStopped": s.budget_stopped,
            } for s in self.scorers],
        }


@final
@attrs.frozen(kw_only=True)
class TrialSpread:
    """How one scorer varied across trials.

    Attributes:
        scorer_id: the scorer.
        mean: the mean score over every scored (item, trial).
        mean_std_dev: the mean over items of each item's score standard deviation across its
            trials (population; items scored in fewer than two trials are left out).
        max_std_dev: the largest per-item standard deviation.
        changed_items: items whose verdict differed between trials (scored vs not scored vs
            failed, or on either side of the pass mark: the scorer's threshold ``min``, else
            0.5).
        changed_item_ids: the first 100 of them (item id, or ``#index``).
    """

    scorer_id: str
    mean: float | None
    mean_std_dev: float | None
    max_std_dev: float | None
    changed_items: int
    changed_item_ids: tuple[str, ...] = ()


@final
@attrs.frozen(kw_only=True)
class TrialsSummary:
    """Per-scorer spread across a batch's trials (``run_evals(..., trials=N)``)."""

    trials: int
    scorers: tuple[TrialSpread, ...]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (camelCase keys)."""
        return {"trials": self.trials, "scorers": [{
            "scorerId": s.scorer_id, "mean": s.mean, "meanStdDev": s.mean_std_dev,
            "maxStdDev": s.max_std_dev, "changedItems": s.changed_items,
            "changedItemIds": list(s.changed_item_ids),
        } for s in self.scorers]}
