"""Batch evaluation: ``run_evals``, its items and report, comparing and calibrating batches.

The names a user of batch evaluation imports. The values a report is made of (per-scorer
summaries, outcomes, costs, comparisons, calibration estimates, panel agreement) are in
:mod:`scorecore.evals.results`; what a score store implements is in
:mod:`scorecore.evals.store`; the parts a runner is built from (``run_evals``'s own, which
``scorecore_adapters.ray`` drives) are in :mod:`scorecore.evals.engine`.

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

from scorecore.evals._calibrate._compute import calibrate
from scorecore.evals._calibrate._values import Calibration, CalibrationKind, LabelValue
from scorecore.evals._compare._compute import compare
from scorecore.evals._compare._power import items_needed, minimum_detectable_effect
from scorecore.evals._compare._values import Comparison
from scorecore.evals._persistence._port import StoreError
from scorecore.evals._persistence._sink import store_sink
from scorecore.evals._report._values import EvalReport, ItemResult, Threshold
from scorecore.evals._rows._row import ScoreRow
from scorecore.evals._run._evals import run_evals
from scorecore.evals._run._items import EvalItem, InvalidItem, ItemLike
from scorecore.evals._run._options import EvalConfigError
from scorecore.evals._run._sync import run_evals_sync
from scorecore.evals._stats._bootstrap import MeanResampler
from scorecore.evals._trust._fold import (
    cascade_summaries,
    pairwise_summaries,
    panel_agreements,
)

__all__ = [
    "Calibration",
    "CalibrationKind",
    "Comparison",
    "EvalConfigError",
    "EvalItem",
    "EvalReport",
    "InvalidItem",
    "ItemLike",
    "ItemResult",
    "LabelValue",
    "MeanResampler",
    "ScoreRow",
    "StoreError",
    "Threshold",
    "calibrate",
    "cascade_summaries",
    "compare",
    "items_needed",
    "minimum_detectable_effect",
    "pairwise_summaries",
    "panel_agreements",
    "run_evals",
    "run_evals_sync",
    "store_sink",
]
