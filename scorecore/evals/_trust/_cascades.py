"""A batch's cascade runs folded into :class:`~scorecore.evals.results.CascadeSummary`.

Each run counts once, keyed by (item id, run id); pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

import attrs

from scorecore.evals._calibrate._values import LabelValue
from scorecore.evals._trust._values import CascadeSummary, CascadeTier
from scorecore.scorers import CascadeResult

__all__: list[str] = []  # internal: the cascade part of the trust fold (TrustFold uses it)

_PASS: Final = frozenset({"true", "pass", "yes", "1"})
_FAIL: Final = frozenset({"false", "fail", "no", "0"})


@attrs.frozen(kw_only=True)
class CascadeRun:
    """One run of a cascade as the fold keeps it."""

    item_id: str
    run_id: str
    status: str
    score: float | None
    details: CascadeResult


def _passes(label: LabelValue, threshold: float) -> bool | None:
    """A label as pass/fail: a bool, a number from the threshold, or a pass/fail word."""
    if isinstance(label, bool):
        return label
    if isinstance(label, int | float):
        return label >= threshold if math.isfinite(label) else None
    word = label.strip().lower()
    return True if word in _PASS else False if word in _FAIL else None


def _agreement(
    runs: Sequence[CascadeRun], labels: Mapping[str, LabelValue] | None, threshold: float
) -> tuple[int, float | None]:
    """How many of ``runs`` (scored ones) have a label, and the share whose verdict equals it."""
    if labels is None:
        return 0, None
    hits = n = 0
    for run in runs:
        if run.status != "scored" or run.score is None or run.item_id not in labels:
            continue
        label = _passes(labels[run.item_id], threshold)
        if label is None:
            continue
        n += 1
        hits += (run.score >= threshold) == label
    return n, (hits / n if n else None)


def cascade_summary(
    scorer_id: str, runs: Sequence[CascadeRun], *,
    labels: Mapping[str, LabelValue] | None = None, threshold: float = 0.5,
) -> CascadeSummary:
    """One cascade's summary over its runs (see :class:`CascadeSummary`).

    A tier's cost sums its entry of each run's ``CascadeResult.costs``: every run that reached
    the tier paid it, whether the tier decided or sent the run on.
    """
    ids: list[str] = []
    reached: list[int] = []
    costs: list[list[float]] = []
    decided_by: list[list[CascadeRun]] = []
    low = failed = 0
    for run in runs:
        details = run.details
        for index, tier_id in enumerate(details.scorer_ids):
            if index == len(ids):
                ids.append(tier_id)
                reached.append(0)
                costs.append([])
                decided_by.append([])
            reached[index] += 1
            if index < len(details.costs):
                costs[index].append(details.costs[index])
        if run.status == "failed":
            failed += 1
        elif details.tier is None:
            low += 1
        elif details.tier < len(decided_by):
            decided_by[details.tier].append(run)
    decided = sum(len(d) for d in decided_by)
    tiers = []
    for index, tier_id in enumerate(ids):
        labelled, agreement = _agreement(decided_by[index], labels, threshold)
        tiers.append(CascadeTier(
            index=index, scorer_id=tier_id, runs=reached[index],
            decided=len(decided_by[index]),
            decided_share=len(decided_by[index]) / decided if decided else None,
            cost_usd=math.fsum(costs[index]), labelled=labelled, agreement=agreement))
    labelled, agreement = _agreement([r for d in decided_by for r in d], labels, threshold)
    cost = math.fsum(c for tier_costs in costs for c in tier_costs)
    return CascadeSummary(
        scorer_id=scorer_id, runs=len(runs), decided=decided, low_confidence=low,
        failed=failed, tiers=tuple(tiers), cost_usd=cost, labelled=labelled,
        agreement=agreement,
        agreement_per_usd=agreement / cost if agreement is not None and cost > 0 else None,
        threshold=threshold)
