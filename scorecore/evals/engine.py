"""The runner SPI: the parts ``run_evals`` is made of, for runners that spread a batch out.

``scorecore_adapters.ray`` drives these parts on a Ray Data actor pool and gives the same
rows and report as :func:`~scorecore.evals.run_evals`: :func:`check_scorers` and
:func:`check_thresholds` check the arguments; :func:`item_key` and :class:`RunIds` claim each
item's run id (a repeat is an :class:`ItemFailure`); :func:`read_item` and
:func:`item_from_mapping` read an item; :class:`ItemScorer` turns one into its
:class:`~scorecore.evals.ItemResult`; :class:`ItemRows` gives the rows a store keeps for it
(:func:`failure_kind` is how a failed run's cause is stored); :class:`ReportFold`,
:class:`TrustFold` and :class:`EconomicsFold` fold results, in any order, into the
:class:`~scorecore.evals.EvalReport`. A runner that scores items in other processes carries
their results as flat rows (:func:`result_rows`, columns :data:`RESULT_COLUMNS`), regroups
them (:func:`item_results`) and folds the report from them (:func:`fold_result_rows`).

>>> from scorecore.evals.engine import RunIds, item_key
>>> ids = RunIds("nightly")
>>> item_key({"id": "q1", "input": "?"}, 0)
('q1', None)
>>> ids.claim(0, "q1", None), ids.of(0, "q1")
(<Success: None>, 'nightly:q1')
>>> ids.claim(1, "q1", None).failure().error
"duplicate id 'q1', first seen at item #0"
"""

from scorecore._core._causes import failure_kind
from scorecore.evals._economics._batch import EconomicsFold
from scorecore.evals._report._fold import ReportFold
from scorecore.evals._rows._flat import (
    RESULT_COLUMNS,
    fold_result_rows,
    item_results,
    result_rows,
)
from scorecore.evals._rows._per_item import ItemRows
from scorecore.evals._run._ids import RunIds
from scorecore.evals._run._items import ItemFailure, item_from_mapping, item_key, read_item
from scorecore.evals._run._options import check_scorers, check_thresholds
from scorecore.evals._run._scoring import ItemScorer
from scorecore.evals._trust._fold import TrustFold

__all__ = [
    "RESULT_COLUMNS",
    "EconomicsFold",
    "ItemFailure",
    "ItemRows",
    "ItemScorer",
    "ReportFold",
    "RunIds",
    "TrustFold",
    "check_scorers",
    "check_thresholds",
    "failure_kind",
    "fold_result_rows",
    "item_from_mapping",
    "item_key",
    "item_results",
    "read_item",
    "result_rows",
]
