"""Trust in judges over a batch, as the report gives it: panels' agreement, pairwise win rates.

:class:`PanelAgreement` (per panel: Krippendorff's alpha between members, interval for scores
and nominal for pass/fail votes, with seeded bootstrap intervals over items, and the items where
members disagree most) and :class:`PairwiseSummary` (per pairwise scorer: the win rate with a
bootstrap interval and the share of position-biased items). :mod:`scorecore.evals._trust._fold`
computes them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, final

import attrs

__all__ = ["CascadeSummary", "CascadeTier", "PairwiseSummary", "PanelAgreement",
           "PanelDisagreement"]

@final
@attrs.frozen(kw_only=True)
class PanelDisagreement:
    """One run on which a panel's members disagreed.

    Attributes:
        item_id: the item (its id, or ``#index``).
        run_id: the run (several per item with trials).
        spread: the highest counted score minus the lowest (``inf`` when that exceeds the
            largest float, as for scores of ±1e308; ``null`` in the JSON).
        scores: the counted members' scores, by member id.
        votes: the counted members' votes, by member id (with a threshold).
    """

    item_id: str
    run_id: str
    spread: float
    scores: Mapping[str, float]
    votes: Mapping[str, bool] = attrs.field(factory=dict)


@final
@attrs.frozen(kw_only=True)
class PanelAgreement:
    """How much a panel's members agreed over a batch.

    Alpha is Krippendorff's, items as units and members as coders (replacements are coders of
    their own); it is ``None`` when undefined (fewer than two scores on every item, or every
    score equal). Intervals are percentile bootstraps over items, seeded.

    Attributes:
        scorer_id: the panel.
        runs: runs with a panel result (scored, not scorable or failed).
        units: runs on which two or more members scored (what alpha is computed on).
        members: every member id seen, in the order first seen.
        alpha_interval: alpha of the scores (interval metric).
        alpha_interval_ci: its interval.
        alpha_nominal: alpha of the pass/fail votes (nominal metric), with a threshold.
        alpha_nominal_ci: its interval.
        agreed: runs on which the members agreed (see ``PanelResult.agreed``).
        ties: runs whose majority vote was a tie.
        member_failures: member runs that failed (replaced ones included).
        most_disagreed: the runs whose members' scores differed, widest spread first (at
            most 10).
        confidence: the intervals' confidence.
        resamples: bootstrap resamples.
        seed: the bootstrap's seed.
    """

    scorer_id: str
    runs: int
    units: int
    members: tuple[str, ...]
    alpha_interval: float | None
    alpha_interval_ci: tuple[float, float] | None
    alpha_nominal: float | None
    alpha_nominal_ci: tuple[float, float] | None
    agreed: int
    ties: int
    member_failures: int
    most_disagreed: tuple[PanelDisagreement, ...]
    confidence: float
    resamples: int
    seed: int

    def to_json(self) -> dict[str, Any]:
        """The agreement as JSON-ready data."""
        return {
            "scorerId": self.scorer_id, "runs": self.runs, "units": self.units,
            "members": list(self.members), "alphaInterval": self.alpha_interval,
            "alphaIntervalCi": _pair(self.alpha_interval_ci),
            "alphaNominal": self.alpha_nominal, "alphaNominalCi": _pair(self.alpha_nominal_ci),
            "agreed": self.agreed, "ties": self.ties, "memberFailures": self.member_failures,
            "mostDisagreed": [
                {"itemId": d.item_id, "runId": d.run_id,
                 "spread": d.spread if math.isfinite(d.spread) else None,
                 "scores": dict(d.scores), "votes": dict(d.votes)}
                for d in self.most_disagreed
            ],
            "confidence": self.confidence, "resamples": self.resamples, "seed": self.seed,
        }


@final
@attrs.frozen(kw_only=True)
class PairwiseSummary:
    """A pairwise scorer's verdicts over a batch: the win rate and how often position decided.

    ``win_rate`` counts a win as 1, a tie as 1/2 and a position-biased item as a tie. The
    interval is honest about position bias: its lower bound is the bootstrap low with every
    position-biased item counted as a loss, its upper bound the bootstrap high with every one
    counted as a win — a judge that only follows position gives ``[0, 1]``: it told nothing.

    Attributes:
        scorer_id: the pairwise scorer.
        items: runs judged (with both verdicts).
        wins: runs ``output`` won.
        losses: runs it lost.
        ties: consistent ties.
        position_bias: runs whose verdict followed the order of the answers.
        win_rate: ``(wins + (ties + position_bias) / 2) / items``; ``None`` without items.
        ci_low: the interval's lower bound.
        ci_high: its upper bound.
        confidence: the interval's confidence.
    """

    scorer_id: str
    items: int
    wins: int
    losses: int
    ties: int
    position_bias: int
    win_rate: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float

    @property
    def position_bias_rate(self) -> float | None:
        """The share of items whose verdict followed position (``None`` without items)."""
        return self.position_bias / self.items if self.items else None

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""
        return {
            "scorerId": self.scorer_id, "items": self.items, "wins": self.wins,
            "losses": self.losses, "ties": self.ties, "positionBias": self.position_bias,
            "positionBiasRate": self.position_bias_rate, "winRate": self.win_rate,
            "ciLow": self.ci_low, "ciHigh": self.ci_high, "confidence": self.confidence,
        }


def _pair(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else list(value)



@final
@attrs.frozen(kw_only=True)
class CascadeTier:
    """One tier of a cascade over a batch: what it decided and what it cost.

    Attributes:
        index: the tier's 0-based position.
        scorer_id: the tier's scorer.
        runs: runs that reached the tier (every run for tier 0).
        decided: runs whose result this tier gave.
        decided_share: ``decided`` over the runs some tier decided (``None`` when none did);
            the tiers' shares sum to 1.
        cost_usd: the judge cost of this tier's own executions on every run that reached it,
            decided there or escalated past it (an unpriced execution counts 0).
        labelled: runs this tier decided and scored whose item has a label.
        agreement: the share of those on which the tier's verdict (score ≥ the threshold)
            equals the label; ``None`` without labels.
    """

    index: int
    scorer_id: str
    runs: int
    decided: int
    decided_share: float | None
    cost_usd: float
    labelled: int = 0
    agreement: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The tier as JSON-ready data."""
        return {"index": self.index, "scorerId": self.scorer_id, "runs": self.runs,
                "decided": self.decided, "decidedShare": self.decided_share,
                "costUsd": self.cost_usd, "labelled": self.labelled,
                "agreement": self.agreement}


@final
@attrs.frozen(kw_only=True)
class CascadeSummary:
    """A cascade over a batch: per tier, the share of runs it decided, its cost and, given
    labels, its agreement with them; and the whole cascade's agreement per dollar.

    Attributes:
        scorer_id: the cascade.
        runs: runs with a cascade result (scored, not scorable or failed).
        decided: runs some tier decided.
        low_confidence: runs no tier was sure enough of (not scorable, ``low_confidence``).
        failed: runs a tier failed.
        tiers: each tier, in order (the tiers seen in the rows).
        cost_usd: the cascade's judge cost over the batch (the tiers' costs summed).
        labelled: decided and scored runs whose item has a label.
        agreement: the share of those on which the cascade's verdict equals the label.
        agreement_per_usd: ``agreement / cost_usd`` (``None`` without labels or cost). To
            compare with the last tier alone, run that tier as a second scorer in the same
            batch: ``calibrate`` gives its agreement and the economics its cost.
        threshold: the score from which a verdict passes (labels are pass/fail).
    """

    scorer_id: str
    runs: int
    decided: int
    low_confidence: int
    failed: int
    tiers: tuple[CascadeTier, ...]
    cost_usd: float
    labelled: int = 0
    agreement: float | None = None
    agreement_per_usd: float | None = None
    threshold: float = 0.5

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON-ready data."""
        return {"scorerId": self.scorer_id, "runs": self.runs, "decided": self.decided,
                "lowConfidence": self.low_confidence, "failed": self.failed,
                "tiers": [t.to_json() for t in self.tiers], "costUsd": self.cost_usd,
                "labelled": self.labelled, "agreement": self.agreement,
                "agreementPerUsd": self.agreement_per_usd, "threshold": self.threshold}
