"""What :func:`~scorecore.evals.compare` reports: per scorer, its change between two batches."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, final

import attrs

if TYPE_CHECKING:
    from scorecore.evals._report._values import OutcomeStatus

__all__ = ["Comparison", "ItemDelta", "ItemMatch", "ScorerComparison"]

DEFAULT_PASS_MIN: Final = 0.5
"""Without a threshold for a scorer, an item passes when it is scored at least 0.5."""

DEFAULT_MIN_PAIRED: Final = 10
"""Fewer paired items than this give no verdict (see the module docstring for why 10)."""

Verdict: TypeAlias = Literal["regressed", "improved", "unchanged", "not_enough_pairs"]
ComparisonVerdict: TypeAlias = Literal["regressed", "not_enough_pairs", "no_regression"]


def _change(base: float | None, new: float | None) -> float | None:
    """``new - base``, or ``None`` when either batch has no figure."""
    if base is None or new is None:
        return None
    return new - base


@final
@attrs.frozen(kw_only=True)
class ItemDelta:
    """One item's row in both batches (the score is ``None`` when it was not scored)."""

    item_id: str
    base_status: OutcomeStatus
    new_status: OutcomeStatus
    base_score: float | None
    new_score: float | None

    @property
    def delta(self) -> float | None:
        """``new_score - base_score`` when both were scored."""
        return _change(self.base_score, self.new_score)


@final
@attrs.frozen(kw_only=True)
class ItemMatch:
    """Two batches' items matched by id and content (equal content digests).

    Only the ``same`` items are compared; the others are listed, never paired: an item whose
    content changed under the same id is another item.

    Attributes:
        same: ids with the same content in both batches.
        changed: ids in both whose content differs.
        removed: ids in the base batch's data only.
        added: ids in the new batch's data only.

    >>> ItemMatch(same=("a",), changed=("b",), removed=(), added=()).differ
    True
    """

    same: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    added: tuple[str, ...]

    @property
    def differ(self) -> bool:
        """Whether the batches ran on different data (any item added, removed or changed)."""
        return bool(self.changed or self.removed or self.added)

    def describe(self) -> str:
        """The difference in one line: ``"2 changed, 1 removed, 0 added; 40 compared"``."""
        return (f"{len(self.changed)} changed, {len(self.removed)} removed, "
                f"{len(self.added)} added; {len(self.same)} compared")

    def to_json(self) -> dict[str, Any]:
        """The match as JSON-ready data."""
        return {"same": len(self.same), "changed": list(self.changed),
                "removed": list(self.removed), "added": list(self.added)}


@final
@attrs.frozen(kw_only=True)
class ScorerComparison:
    """One scorer's change from the base batch to the new one.

    Attributes:
        scorer_id: the scorer.
        paired: items with a row of this scorer in both batches.
        scored_pairs: items scored in both (the mean delta is over these).
        base_mean: the base batch's mean over ``scored_pairs``.
        new_mean: the new batch's mean over ``scored_pairs``.
        mean_delta: ``new_mean - base_mean``.
        ci_low: the lower end of the bootstrap interval of ``mean_delta``.
        ci_high: its upper end.
        confidence: the interval's confidence (0.95 for one scorer; see the module docstring).
        pass_rule: when an item passes (e.g. ``">= 0.5"``); not scored never passes.
        base_pass_rate: the share of ``paired`` items passing in the base batch.
        new_pass_rate: the same in the new batch.
        newly_passing: items failing in the base batch and passing in the new one.
        newly_failing: items passing in the base batch and failing in the new one.
        mcnemar_p: the exact two-sided McNemar p-value of those two counts.
        improved: scored pairs whose score rose.
        regressed: scored pairs whose score fell.
        unchanged: scored pairs whose score stayed.
        status_changes: counts of pairs whose status changed, keyed ``"scored->failed"`` …
        most_regressed: the items that lost most (scores that disappeared first).
        significant_regression: the gate (see the module docstring).
        significant_improvement: the same test the other way.
        enough_pairs: whether ``paired`` reached the comparison's ``min_paired``; when not,
            neither test ran and the verdict is ``"not_enough_pairs"``.
        definition_changed: the scorer's recorded fingerprints differ between the batches
            (its code, prompt or judge changed): it is compared all the same, and its delta
            measures the scorer's change as well as the agent's.
        mde: the minimum detectable effect of the mean test: the smallest true mean change
            it detects with 80 % power at this many scored pairs and this scorer's level,
            from the paired differences' spread (``None`` below two scored pairs). The gate,
            which ignores drops up to the tolerance, catches a drop of ``tolerance + mde``
            4 times in 5 (:func:`~scorecore.evals.minimum_detectable_effect`).
        pass_rate_mde: the same for the pass-rate test, from the items' pass/fail changes.
        spread: the standard deviation (over n) of the paired score differences: what
            :func:`~scorecore.evals.items_needed` plans the next comparison from.
        uninformative: no significant change, but neither test could have detected a change
            of the comparison's ``effect`` (both MDEs above it): "no regression" here says
            little.
    """

    scorer_id: str
    paired: int
    scored_pairs: int
    base_mean: float | None
    new_mean: float | None
    mean_delta: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    pass_rule: str
    base_pass_rate: float | None
    new_pass_rate: float | None
    newly_passing: int
    newly_failing: int
    mcnemar_p: float
    improved: int
    regressed: int
    unchanged: int
    status_changes: Mapping[str, int]
    most_regressed: tuple[ItemDelta, ...]
    significant_regression: bool
    significant_improvement: bool
    enough_pairs: bool = True
    definition_changed: bool = False
    mde: float | None = None
    pass_rate_mde: float | None = None
    uninformative: bool = False
    spread: float | None = None

    def blind_to(self, effect: float) -> bool:
        """Whether this "no significant change" could not have detected a change of ``effect``
        (neither test's MDE is at most ``effect``); ``False`` for any other verdict."""
        return self.verdict == "unchanged" and all(
            m is None or m > effect for m in (self.mde, self.pass_rate_mde))

    @property
    def pass_rate_delta(self) -> float | None:
        """``new_pass_rate - base_pass_rate``."""
        return _change(self.base_pass_rate, self.new_pass_rate)

    @property
    def verdict(self) -> Verdict:
        """``"regressed"``, ``"improved"``, ``"unchanged"`` (no significant change) or
        ``"not_enough_pairs"`` (too few paired items to say)."""
        if not self.enough_pairs:
            return "not_enough_pairs"
        if self.significant_regression:
            return "regressed"
        return "improved" if self.significant_improvement else "unchanged"


@final
@attrs.frozen(kw_only=True)
class Comparison:
    """Two batches compared scorer by scorer (see :func:`compare`).

    Attributes:
        base_batch: the baseline batch id.
        new_batch: the batch judged against it.
        tolerance: regressions up to this size (score units, and pass-rate points) are ignored.
        seed: the bootstrap's seed.
        resamples: the bootstrap's resample count.
        scorers: one comparison per scorer present in both batches, by scorer id.
        only_in_base: item ids with rows in the base batch only (listed, not compared).
        only_in_new: item ids with rows in the new batch only.
        scorers_only_in_base: scorer ids the new batch lacks.
        scorers_only_in_new: scorer ids the base batch lacks.
        changed_scorers: scorers whose recorded fingerprints differ between the batches;
            they are compared too, each marked ``definition_changed``.
        min_paired: the fewest paired items a scorer needs for a verdict.
        items: the items matched by content when both batches' item digests were given
            (only ``items.same`` were compared), else ``None`` (items paired by id alone).
        effect: the change a "no regression" must have been able to detect to say
            something (the tolerance unless given): a scorer whose MDEs are above it is
            ``uninformative``.
    """

    base_batch: str
    new_batch: str
    tolerance: float
    seed: int
    resamples: int
    scorers: tuple[ScorerComparison, ...]
    only_in_base: tuple[str, ...]
    only_in_new: tuple[str, ...]
    scorers_only_in_base: tuple[str, ...]
    scorers_only_in_new: tuple[str, ...]
    changed_scorers: tuple[str, ...]
    min_paired: int = DEFAULT_MIN_PAIRED
    items: ItemMatch | None = None
    effect: float = 0.0

    def with_effect(self, effect: float) -> Comparison:
        """The comparison judged against ``effect``: each scorer's ``uninformative`` mark set
        by :meth:`ScorerComparison.blind_to`, however its pairs were gathered.

        Raises:
            ValueError: ``effect`` is negative or not finite.
        """
        if not 0 <= effect < math.inf:
            raise ValueError(f"effect must be a finite number >= 0, got {effect!r}")
        scorers = tuple(attrs.evolve(s, uninformative=s.blind_to(effect)) for s in self.scorers)
        return attrs.evolve(self, scorers=scorers, effect=effect)

    @property
    def datasets_differ(self) -> bool:
        """Whether the batches ran on different data (known only when item digests were
        given: see :attr:`items`)."""
        return self.items is not None and self.items.differ

    @property
    def uninformative(self) -> tuple[str, ...]:
        """The scorers whose "no significant change" could not have detected ``effect``."""
        return tuple(s.scorer_id for s in self.scorers if s.uninformative)

    @property
    def regressed(self) -> bool:
        """Whether any scorer's regression beyond the tolerance is significant (the CI gate)."""
        return any(s.significant_regression for s in self.scorers)

    @property
    def verdict(self) -> ComparisonVerdict:
        """``"regressed"`` when a scorer regressed significantly; else ``"not_enough_pairs"``
        when a scorer had fewer than ``min_paired`` paired items (or no scorer is in both
        batches): no verdict, never a pass; else ``"no_regression"``."""
        if self.regressed:
            return "regressed"
        if not self.scorers or any(not s.enough_pairs for s in self.scorers):
            return "not_enough_pairs"
        return "no_regression"

    @property
    def verdict_reason(self) -> str | None:
        """Why there is no verdict or which scorers regressed, in one line (``None`` for
        ``"no_regression"``).

        ``"not enough paired items: n=1 for s (at least 10 needed)"``
        """
        verdict = self.verdict
        if verdict == "regressed":
            names = ", ".join(s.scorer_id for s in self.scorers if s.significant_regression)
            return f"significant regression in {names}"
        if verdict == "no_regression":
            return None
        if not self.scorers:
            return "not enough paired items: n=0 (no scorer in both batches)"
        counts = ", ".join(f"n={s.paired} for {s.scorer_id}"
                           for s in self.scorers if not s.enough_pairs)
        return f"not enough paired items: {counts} (at least {self.min_paired} needed)"

    @property
    def scorers_differ(self) -> bool:
        """Whether the batches ran different scorers (ids or fingerprints)."""
        return bool(self.scorers_only_in_base or self.scorers_only_in_new
                    or self.changed_scorers)

    def scorer_differences(self) -> str:
        """How the batches' scorers differ, in one line (``""`` when they do not).

        ``"only in base: length; definition changed: quality"``
        """
        parts = []
        if self.scorers_only_in_base:
            parts.append(f"only in {self.base_batch}: {', '.join(self.scorers_only_in_base)}")
        if self.scorers_only_in_new:
            parts.append(f"only in {self.new_batch}: {', '.join(self.scorers_only_in_new)}")
        if self.changed_scorers:
            parts.append(f"definition changed: {', '.join(self.changed_scorers)}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON-ready data (camelCase keys, like the eval report)."""
        return {
            "baseBatch": self.base_batch,
            "newBatch": self.new_batch,
            "tolerance": self.tolerance,
            "seed": self.seed,
            "resamples": self.resamples,
            "regressed": self.regressed,
            "verdict": self.verdict,
            "verdictReason": self.verdict_reason,
            "minPaired": self.min_paired,
            "onlyInBase": list(self.only_in_base),
            "onlyInNew": list(self.only_in_new),
            "scorersOnlyInBase": list(self.scorers_only_in_base),
            "scorersOnlyInNew": list(self.scorers_only_in_new),
            "changedScorers": list(self.changed_scorers),
            "effect": self.effect,
            "datasetsDiffer": self.datasets_differ,
            "items": self.items.to_json() if self.items is not None else None,
            "uninformative": list(self.uninformative),
            "scorers": [_scorer_json(s) for s in self.scorers],
        }


def _item_json(item: ItemDelta) -> dict[str, Any]:
    return {"itemId": item.item_id, "baseStatus": item.base_status,
            "newStatus": item.new_status, "baseScore": item.base_score,
            "newScore": item.new_score, "delta": item.delta}


def _scorer_json(s: ScorerComparison) -> dict[str, Any]:
    return {
        "id": s.scorer_id, "verdict": s.verdict, "paired": s.paired,
        "scoredPairs": s.scored_pairs, "baseMean": s.base_mean, "newMean": s.new_mean,
        "meanDelta": s.mean_delta, "ciLow": s.ci_low, "ciHigh": s.ci_high,
        "confidence": s.confidence, "passRule": s.pass_rule,
        "basePassRate": s.base_pass_rate, "newPassRate": s.new_pass_rate,
        "passRateDelta": s.pass_rate_delta, "newlyPassing": s.newly_passing,
        "newlyFailing": s.newly_failing, "mcnemarP": s.mcnemar_p, "improved": s.improved,
        "regressed": s.regressed, "unchanged": s.unchanged,
        "statusChanges": dict(s.status_changes),
        "mostRegressed": [_item_json(i) for i in s.most_regressed],
        "significantRegression": s.significant_regression,
        "significantImprovement": s.significant_improvement,
        "enoughPairs": s.enough_pairs,
        "definitionChanged": s.definition_changed,
        "mde": s.mde, "passRateMde": s.pass_rate_mde, "uninformative": s.uninformative,
        "spread": s.spread,
    }
