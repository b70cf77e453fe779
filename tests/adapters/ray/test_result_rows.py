"""The law behind score_dataset's exact report: results → Arrow result rows → results folds equal.

The actors turn each item's result into the engine's result rows (an Arrow table, as Ray Data
carries them); the driver regroups them and folds the report. For any results — any finite
scores (subnormal, huge, negative zero), any text (lone surrogates included), failed items,
repeats — the report is the one the original results fold to, to the last bit. No Ray runtime
needed.
"""

from __future__ import annotations

from typing import Any

import anyio
import pyarrow as pa
from hypothesis import given

from scorecore.evals import ItemResult, run_evals
from scorecore.evals.engine import ItemRows, result_rows
from scorecore.evals.engine import item_results as regroup
from scorecore_adapters.ray._items import result_schema
from scorecore_adapters.report import cause_of_outcome
from tests.adapters.report.test_causes import failing_scorers
from tests.evals.rows.test_result_rows import report_of, what_rows_keep
from tests.strategies import item_result_lists


@given(item_result_lists())
def test_the_report_survives_the_result_rows_exactly(results: list[ItemResult]) -> None:
    """Folding the regrouped Arrow rows gives the report the results themselves give."""
    table = pa.Table.from_pylist(result_rows(results), schema=result_schema())
    regrouped = list(regroup(table.to_pylist()))
    assert report_of(regrouped) == report_of(results)
    assert what_rows_keep(regrouped) == what_rows_keep(results)


def test_failure_causes_survive_the_result_rows() -> None:
    """Each failed pair's structured cause and an item's failure kind cross the result rows, so
    ``scorecore eval --engine ray`` groups failures as the local engine does (kind, step,
    message), reading no message."""
    scorers = failing_scorers("s", "boom")
    results: list[ItemResult] = []

    def target(item: Any) -> Any:
        if item.input == "raise":
            raise ConnectionError("down")
        return "a"

    items = [{"id": "1", "input": "q"}, {"id": "2", "input": "raise"}]
    anyio.run(lambda: run_evals(items, scorers, target=target, on_item_complete=results.append,
                                max_failures=None))
    builder = ItemRows(batch_id="b", scorers=scorers, target=target)
    stored = [row for r in results for row in builder.rows(r)[1]]
    table = pa.Table.from_pylist(result_rows(results, stored=stored), schema=result_schema())

    def causes(of: list[ItemResult]) -> list[Any]:
        return [cause_of_outcome(o, item_error=r.error, item_error_kind=r.error_kind)
                for r in of for o in r.outcomes]

    local = causes(results)
    assert {c.kind for c in local} >= {"raised LookupError", "judge server", "target raised"}
    assert causes(list(regroup(table.to_pylist()))) == local
