"""Folding a batch's panel and pairwise results into the report's trust values.

:class:`TrustFold` folds, in any order, the panel and pairwise results of a batch's runs —
from :func:`run_evals`' item results or from stored rows — into
:class:`~scorecore.evals.results.PanelAgreement` and
:class:`~scorecore.evals.results.PairwiseSummary`.
Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, final

import attrs

from scorecore._core._values import ScorerRunError
from scorecore.evals._calibrate._values import LabelValue
from scorecore.evals._rows._row import ScoreRow, row_item_id
from scorecore.evals._stats._alpha import AlphaLevel, krippendorff_alpha
from scorecore.evals._stats._bootstrap import bootstrap_interval, bootstrap_mean_interval
from scorecore.evals._trust._cascades import CascadeRun, cascade_summary
from scorecore.evals._trust._values import (
    CascadeSummary,
    PairwiseSummary,
    PanelAgreement,
    PanelDisagreement,
)
from scorecore.scorers import CascadeResult, PairwiseResult, PanelResult

if TYPE_CHECKING:
    from scorecore.evals._report._values import EvalReport, ItemResult

__all__ = ["TrustFold", "cascade_summaries", "pairwise_summaries", "panel_agreements"]

_KEPT: Final = 10  # the most-disagreeing items kept per panel


@final
class TrustFold:
    """Folds the panel, pairwise and cascade results of a batch's runs, in any order.

    Items are keyed by (item id, run id), so the same results give the same summaries however
    they arrived.

    >>> from scorecore.scorers import PairwiseResult
    >>> fold = TrustFold()
    >>> fold.add_pairwise("pw", "1", "b:1", PairwiseResult(outcome="win", forward="output",
    ...                                                       swapped="output"))
    >>> fold.pairwise()[0].win_rate
    1.0
    """

    __slots__ = ("_cascades", "_confidence", "_pairs", "_panels", "_resamples", "_seed")

    def __init__(self, *, confidence: float = 0.95, resamples: int = 1000, seed: int = 0) -> None:
        self._confidence = confidence
        self._resamples = resamples
        self._seed = seed
        self._panels: dict[str, list[tuple[str, str, PanelResult]]] = {}
        self._pairs: dict[str, list[tuple[str, str, str]]] = {}
        self._cascades: dict[str, dict[tuple[str, str], CascadeRun]] = {}

    def add_panel(self, scorer_id: str, item_id: str, run_id: str, panel: PanelResult) -> None:
        """Count one panel run."""
        self._panels.setdefault(scorer_id, []).append((item_id, run_id, panel))

    def add_pairwise(
        self, scorer_id: str, item_id: str, run_id: str, pair: PairwiseResult
    ) -> None:
        """Count one pairwise run."""
        self._pairs.setdefault(scorer_id, []).append((item_id, run_id, pair.outcome))

    def add_cascade(self, scorer_id: str, run: CascadeRun) -> None:
        """Count one cascade run (a run counted twice counts once)."""
        self._cascades.setdefault(scorer_id, {})[(run.item_id, run.run_id)] = run

    def add_item(self, result: ItemResult) -> None:
        """Count the panel and pairwise results of one finished item (of one trial)."""
        item_id = result.item_id if result.item_id is not None else f"#{result.index}"
        for outcome in result.outcomes:
            scored = outcome.result
            if scored is None and isinstance(outcome.run_error, ScorerRunError):
                scored = outcome.run_error.partial
            if scored is None:
                continue
            details = scored.details
            if details is None:  # a plain scorer's result: none of the abstract checks below
                continue
            if isinstance(details, PanelResult):
                self.add_panel(outcome.scorer_id, item_id, result.run_id, details)
            elif isinstance(details, PairwiseResult):
                self.add_pairwise(outcome.scorer_id, item_id, result.run_id, details)
            elif isinstance(details, CascadeResult):
                self.add_cascade(outcome.scorer_id, CascadeRun(
                    item_id=item_id, run_id=result.run_id, status=outcome.status,
                    score=outcome.score, details=details))

    def add_row(self, row: ScoreRow) -> None:
        """Count the panel or pairwise result a stored row keeps (others are ignored)."""
        metadata = row.metadata or {}
        item_id = row_item_id(row)
        try:
            if isinstance(data := metadata.get(PanelResult.kind), Mapping):
                self.add_panel(row.scorer_id, item_id, row.run_id, PanelResult.from_json(data))
            if isinstance(data := metadata.get(PairwiseResult.kind), Mapping):
                self.add_pairwise(row.scorer_id, item_id, row.run_id,
                                  PairwiseResult.from_json(data))
            if isinstance(data := metadata.get(CascadeResult.kind), Mapping):
                self.add_cascade(row.scorer_id, CascadeRun(
                    item_id=item_id, run_id=row.run_id, status=row.status, score=row.score,
                    details=CascadeResult.from_json(data)))
        # A row written by another version, or edited: it is left out, not fatal.
        except (KeyError, TypeError, ValueError, AttributeError):
            return

    def hook(self, then: Callable[[ItemResult], object]) -> Callable[[ItemResult], object]:
        """An ``on_item_complete`` hook that counts the item, then calls ``then``."""
        def observe(result: ItemResult) -> object:
            self.add_item(result)
            return then(result)

        return observe

    def panels(self) -> tuple[PanelAgreement, ...]:
        """Each panel's agreement, by scorer id."""
        return tuple(self._agreement(sid, sorted(runs, key=lambda r: (r[0], r[1])))
                     for sid, runs in sorted(self._panels.items()))

    def pairwise(self) -> tuple[PairwiseSummary, ...]:
        """Each pairwise scorer's summary, by scorer id."""
        return tuple(self._pairwise(sid, sorted(runs)) for sid, runs in sorted(self._pairs.items()))

    def cascades(
        self, labels: Mapping[str, LabelValue] | None = None, *, threshold: float = 0.5
    ) -> tuple[CascadeSummary, ...]:
        """Each cascade's tiers, by scorer id; with ``labels`` (item id → pass/fail label:
        a bool, a number read from ``threshold``, or ``"pass"``/``"fail"``), their agreement."""
        return tuple(
            cascade_summary(sid, sorted(runs.values(), key=lambda r: (r.item_id, r.run_id)),
                            labels=labels, threshold=threshold)
            for sid, runs in sorted(self._cascades.items()))

    def finish(self, report: EvalReport) -> EvalReport:
        """``report`` with the panels' agreement, the pairwise and cascade summaries added."""
        panels, pairs, cascades = self.panels(), self.pairwise(), self.cascades()
        if not panels and not pairs and not cascades:
            return report
        return attrs.evolve(report, panels=panels, pairwise=pairs, cascades=cascades)

    def _agreement(
        self, scorer_id: str, runs: Sequence[tuple[str, str, PanelResult]]
    ) -> PanelAgreement:
        members: dict[str, None] = {}
        scores: list[list[float]] = []
        votes: list[list[bool]] = []
        spreads: list[PanelDisagreement] = []
        agreed = ties = failures = 0
        for item_id, run_id, panel in runs:
            for member in panel.members:
                members.setdefault(member.scorer_id)
                failures += member.status == "failed"
            counted = panel.counted
            agreed += panel.agreed is True
            ties += panel.tie
            scores.append([m.score for m in counted if m.score is not None])
            votes.append([m.vote for m in counted if m.vote is not None])
            if panel.max is not None and panel.min is not None and (
                    panel.max > panel.min or panel.agreed is False):
                spreads.append(PanelDisagreement(
                    item_id=item_id, run_id=run_id, spread=panel.max - panel.min,
                    scores={m.scorer_id: m.score for m in counted if m.score is not None},
                    votes={m.scorer_id: m.vote for m in counted if m.vote is not None},
                ))
        spreads.sort(key=lambda d: (-d.spread, d.item_id, d.run_id))
        interval = self._alpha(scores, "interval", scorer_id)
        nominal = self._alpha(votes, "nominal", scorer_id)
        return PanelAgreement(
            scorer_id=scorer_id, runs=len(runs), units=sum(len(s) >= 2 for s in scores),
            members=tuple(members), alpha_interval=interval[0], alpha_interval_ci=interval[1],
            alpha_nominal=nominal[0], alpha_nominal_ci=nominal[1], agreed=agreed, ties=ties,
            member_failures=failures, most_disagreed=tuple(spreads[:_KEPT]),
            confidence=self._confidence, resamples=self._resamples, seed=self._seed,
        )

    def _alpha(
        self, units: Sequence[Sequence[float | bool | str | None]], level: AlphaLevel,
        scorer_id: str,
    ) -> tuple[float | None, tuple[float, float] | None]:
        pairable = [u for u in units if len(u) >= 2]
        alpha = krippendorff_alpha(pairable, level=level)
        if alpha is None:
            return None, None
        ci = bootstrap_interval(
            lambda idx: krippendorff_alpha([pairable[i] for i in idx], level=level),
            len(pairable), confidence=self._confidence, resamples=self._resamples,
            seed=self._seed, stream=f"{scorer_id}:alpha-{level}",
        )
        if ci.low is None or ci.high is None:
            return alpha, None
        return alpha, (ci.low, ci.high)

    def _pairwise(self, scorer_id: str, runs: Sequence[tuple[str, str, str]]) -> PairwiseSummary:
        outcomes = [outcome for _, _, outcome in runs]
        wins, losses = outcomes.count("win"), outcomes.count("loss")
        ties, biased = outcomes.count("tie"), outcomes.count("position_bias")
        n = len(outcomes)
        win_rate = (wins + (ties + biased) / 2) / n if n else None
        low = high = None
        if n:
            value = {"win": 1.0, "loss": 0.0, "tie": 0.5}
            stream = f"{scorer_id}:win-rate"
            low = bootstrap_mean_interval(
                [value.get(o, 0.0) for o in outcomes], confidence=self._confidence,
                resamples=self._resamples, seed=self._seed, stream=stream)[0]
            high = bootstrap_mean_interval(
                [value.get(o, 1.0) for o in outcomes], confidence=self._confidence,
                resamples=self._resamples, seed=self._seed, stream=stream)[1]
        return PairwiseSummary(
            scorer_id=scorer_id, items=n, wins=wins, losses=losses, ties=ties,
            position_bias=biased, win_rate=win_rate, ci_low=low, ci_high=high,
            confidence=self._confidence,
        )


def panel_agreements(
    rows: Iterable[ScoreRow], *, confidence: float = 0.95, resamples: int = 1000, seed: int = 0
) -> tuple[PanelAgreement, ...]:
    """Each panel's agreement over a batch's stored rows (see :class:`PanelAgreement`).

    >>> from scorecore.scorers import PanelMember, PanelResult
    >>> def row(item, a, b):
    ...     members = tuple(PanelMember(scorer_id=m, status="scored", score=s)
    ...                     for m, s in (("a", a), ("b", b)))
    ...     panel = PanelResult(aggregate="mean", members=members, min_successful=2,
    ...                         min=min(a, b), max=max(a, b), agreed=a == b)
    ...     data = panel.to_json()
    ...     return ScoreRow(id=item, scorer_id="jury", run_id=f"b:{item}", batch_id="b",
    ...                     status="scored", metadata={"panel": data})
    >>> rows = [row("1", 0.1, 0.2), row("2", 0.9, 0.8), row("3", 0.5, 0.5)]
    >>> (agreement,) = panel_agreements(rows)
    >>> round(agreement.alpha_interval, 3), agreement.most_disagreed[0].item_id
    (0.967, '1')
    """
    fold = TrustFold(confidence=confidence, resamples=resamples, seed=seed)
    for row in rows:
        fold.add_row(row)
    return fold.panels()


def pairwise_summaries(
    rows: Iterable[ScoreRow], *, confidence: float = 0.95, resamples: int = 1000, seed: int = 0
) -> tuple[PairwiseSummary, ...]:
    """Each pairwise scorer's win rate and position bias over a batch's stored rows.

    >>> rows = [ScoreRow(id=str(i), scorer_id="pw", run_id=f"b:{i}", batch_id="b",
    ...                  status="scored", metadata={"pairwise": {"outcome": outcome,
    ...                  "forward": "output", "swapped": "baseline"}})
    ...         for i, outcome in enumerate(["position_bias"] * 4)]
    >>> (summary,) = pairwise_summaries(rows)
    >>> summary.win_rate, summary.position_bias_rate, (summary.ci_low, summary.ci_high)
    (0.5, 1.0, (0.0, 1.0))
    """
    fold = TrustFold(confidence=confidence, resamples=resamples, seed=seed)
    for row in rows:
        fold.add_row(row)
    return fold.pairwise()



def cascade_summaries(
    rows: Iterable[ScoreRow], *, labels: Mapping[str, LabelValue] | None = None,
    threshold: float = 0.5,
) -> tuple[CascadeSummary, ...]:
    """Each cascade's tiers over a batch's stored rows: the share of runs each decided, its
    cost and, with ``labels`` (item id → pass/fail label), its agreement on the runs it
    decided (see :class:`~scorecore.evals.results.CascadeSummary`).

    >>> def row(item, tier, score, costs):
    ...     data = {"tier": tier, "scorerIds": ["cheap", "strong"][: len(costs)],
    ...             "scores": [score] * len(costs), "confidences": [0.9] * len(costs),
    ...             "minConfidence": 0.8, "costs": costs}
    ...     return ScoreRow(id=item, scorer_id="c", run_id=f"b:{item}", batch_id="b",
    ...                     status="scored", score=score, dataset_item_id=item,
    ...                     metadata={"cascade": data})
    >>> rows = [row("1", 0, 1.0, [0.01]), row("2", 1, 0.0, [0.01, 0.1])]
    >>> (summary,) = cascade_summaries(rows, labels={"1": True, "2": True})
    >>> [(t.scorer_id, t.decided_share, round(t.cost_usd, 2), t.agreement)
    ...  for t in summary.tiers]
    [('cheap', 0.5, 0.02, 1.0), ('strong', 0.5, 0.1, 0.0)]
    >>> summary.agreement, round(summary.agreement_per_usd, 2)
    (0.5, 4.17)
    """
    fold = TrustFold()
    for row in rows:
        fold.add_row(row)
    return fold.cascades(labels, threshold=threshold)
