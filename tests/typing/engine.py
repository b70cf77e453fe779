"""Checked by ``mypy --strict``, never executed: the runner SPI's codec and folds, StoreUrl."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, assert_type

from scorecore.evals import EvalReport, ItemResult
from scorecore.evals.engine import (
    RESULT_COLUMNS,
    EconomicsFold,
    ReportFold,
    fold_result_rows,
    item_results,
    result_rows,
)
from scorecore.evals.results import EconomicsSummary
from scorecore_adapters.storage import StoreUrl, open_store


def codec(results: list[ItemResult]) -> None:
    rows = result_rows(results, spent=(0.5, 10))
    assert_type(rows, list[dict[str, Any]])
    assert_type(item_results(rows), Iterator[ItemResult])
    assert_type(RESULT_COLUMNS[0], tuple[str, type[object]])
    economics = EconomicsFold(scorer_ids=["a"], metered=True)
    report = fold_result_rows(rows, ReportFold(["a"]), batch_id="b", duration=0.0,
                              economics=economics)
    assert_type(report, EvalReport)
    assert_type(report.economics, EconomicsSummary | None)
    result_rows(results, spent=0.5)  # type: ignore[arg-type]
    EconomicsFold(["a"])  # type: ignore[call-arg]


def urls() -> None:
    parsed = StoreUrl.for_store("sqlite:scores.db")
    assert_type(parsed.path, str | None)
    assert_type(parsed.shared, bool)
    open_store(parsed)
    open_store(StoreUrl.for_cache("memory:"))
    parsed.kind = "postgres"  # type: ignore[misc]
