"""The values a batch's results are made of: read them, never build them.

:class:`~scorecore.evals.EvalReport` holds :class:`ScorerSummary`, :class:`ThresholdResult`,
:class:`GateResult`, :class:`EconomicsSummary` (:class:`ScorerCost`), :class:`TrialsSummary`
(:class:`TrialSpread`), :class:`PanelAgreement` (:class:`PanelDisagreement`),
:class:`PairwiseSummary` and :class:`CascadeSummary` (:class:`CascadeTier`); each
:class:`~scorecore.evals.ItemResult` holds :class:`ScorerOutcome` values;
:class:`~scorecore.evals.Comparison` holds :class:`ScorerComparison` (:class:`ItemDelta`)
and :class:`ItemMatch`; :class:`~scorecore.evals.Calibration` holds
:class:`ScorerCalibration` (:class:`Estimate`, :class:`ConfusionMatrix`,
:class:`FittedThreshold`). Import them from here to annotate code that reads them.

>>> import anyio
>>> from scorecore import create_scorer
>>> from scorecore.evals import run_evals
>>> from scorecore.evals.results import ScorerSummary
>>> exact = create_scorer(id="exact", description="Exact match").generate_score(
...     lambda ctx: 1.0 if ctx.run.output == ctx.run.ground_truth else 0.0
... )
>>> report = anyio.run(lambda: run_evals([{"input": "2+2?", "output": "4"}], [exact]))
>>> summary: ScorerSummary = report.summary("exact")
>>> summary.scored, summary.mean
(1, 0.0)
"""

from scorecore.evals._calibrate._values import (
    CalibrationStatistic,
    ConfusionMatrix,
    Estimate,
    FittedThreshold,
    ScorerCalibration,
)
from scorecore.evals._compare._values import ItemDelta, ItemMatch, ScorerComparison
from scorecore.evals._economics._values import (
    EconomicsSummary,
    ScorerCost,
    TrialSpread,
    TrialsSummary,
)
from scorecore.evals._report._values import (
    GateResult,
    OutcomeStatus,
    ScorerOutcome,
    ScorerSummary,
    ThresholdResult,
)
from scorecore.evals._trust._values import (
    CascadeSummary,
    CascadeTier,
    PairwiseSummary,
    PanelAgreement,
    PanelDisagreement,
)

__all__ = [
    "CalibrationStatistic",
    "CascadeSummary",
    "CascadeTier",
    "ConfusionMatrix",
    "EconomicsSummary",
    "Estimate",
    "FittedThreshold",
    "GateResult",
    "ItemDelta",
    "ItemMatch",
    "OutcomeStatus",
    "PairwiseSummary",
    "PanelAgreement",
    "PanelDisagreement",
    "ScorerCalibration",
    "ScorerComparison",
    "ScorerCost",
    "ScorerOutcome",
    "ScorerSummary",
    "ThresholdResult",
    "TrialSpread",
    "TrialsSummary",
]
