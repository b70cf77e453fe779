"""Batch evaluation: ``run_evals``, its items and report, thresholds and gates.

Also the ``ScoreStore`` port that stores implement, and the row shape (and columns) they store.

>>> import anyio
>>> from scorecore import create_scorer
>>> from scorecore.evals import run_evals
>>> exact = create_scorer(id="exact", description="Exact match").generate_score(
...     lambda ctx: 1.0 if ctx.run.output == ctx.run.ground_truth else 0.0
... )
>>> items = [{"input": "2+2?", "output": "4", "ground_truth": "4"}]
>>> anyio.run(lambda: run_evals(items, [exact])).scorers[0].mean
1.0
"""

from scorecore.evals._agreement import AlphaLevel, bootstrap_interval, krippendorff_alpha
from scorecore.evals._batches import BatchCatalog, BatchSummary
from scorecore.evals._calibrate import calibrate
from scorecore.evals._calibration import (
    Calibration,
    CalibrationKind,
    ConfusionMatrix,
    Estimate,
    FittedThreshold,
    LabelValue,
    ScorerCalibration,
)
from scorecore.evals._compare import (
    Comparison,
    ItemDelta,
    ScorerComparison,
    bootstrap_mean_interval,
    compare,
    mcnemar_p_value,
)
from scorecore.evals._failure_kind import failure_kind
from scorecore.evals._items import (
    EvalItem,
    InvalidItem,
    ItemFailure,
    ItemLike,
    item_from_mapping,
    item_key,
    read_item,
)
from scorecore.evals._options import EvalConfigError, check_scorers, check_thresholds
from scorecore.evals._report import (
    EvalReport,
    GateResult,
    ItemResult,
    OutcomeStatus,
    ReportFold,
    ScorerOutcome,
    ScorerSummary,
    Threshold,
    ThresholdResult,
)
from scorecore.evals._rows import (
    SCORE_COLUMNS,
    ItemRows,
    ScoreColumn,
    ScoreRow,
    row_id,
    row_item_id,
    storable_row,
)
from scorecore.evals._run import run_evals
from scorecore.evals._run_ids import RunIds
from scorecore.evals._run_sync import run_evals_sync
from scorecore.evals._scoring import ItemScorer
from scorecore.evals._spending import (
    EconomicsSummary,
    ScorerCost,
    TrialSpread,
    TrialsSummary,
)
from scorecore.evals._store import CompletedScore, ScoreStore, StoredRowError, StoreError
from scorecore.evals._store_sink import store_sink
from scorecore.evals._stored import decode_row
from scorecore.evals._trust import PairwiseSummary, PanelAgreement, PanelDisagreement
from scorecore.evals._trust_fold import TrustFold, pairwise_summaries, panel_agreements

__all__ = [
    "SCORE_COLUMNS",
    "AlphaLevel",
    "BatchCatalog",
    "BatchSummary",
    "Calibration",
    "CalibrationKind",
    "Comparison",
    "CompletedScore",
    "ConfusionMatrix",
    "EconomicsSummary",
    "Estimate",
    "EvalConfigError",
    "EvalItem",
    "EvalReport",
    "FittedThreshold",
    "GateResult",
    "InvalidItem",
    "ItemDelta",
    "ItemFailure",
    "ItemLike",
    "ItemResult",
    "ItemRows",
    "ItemScorer",
    "LabelValue",
    "OutcomeStatus",
    "PairwiseSummary",
    "PanelAgreement",
    "PanelDisagreement",
    "ReportFold",
    "RunIds",
    "ScoreColumn",
    "ScoreRow",
    "ScoreStore",
    "ScorerCalibration",
    "ScorerComparison",
    "ScorerCost",
    "ScorerOutcome",
    "ScorerSummary",
    "StoreError",
    "StoredRowError",
    "Threshold",
    "ThresholdResult",
    "TrialSpread",
    "TrialsSummary",
    "TrustFold",
    "bootstrap_interval",
    "bootstrap_mean_interval",
    "calibrate",
    "check_scorers",
    "check_thresholds",
    "compare",
    "decode_row",
    "failure_kind",
    "item_from_mapping",
    "item_key",
    "krippendorff_alpha",
    "mcnemar_p_value",
    "pairwise_summaries",
    "panel_agreements",
    "read_item",
    "row_id",
    "row_item_id",
    "run_evals",
    "run_evals_sync",
    "storable_row",
    "store_sink",
]
