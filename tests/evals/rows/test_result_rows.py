"""The engine's ItemResult ⇄ result-row codec: a runner folding result rows gets run_evals' report.

A runner that scores items in other processes (``scorecore_adapters.ray``) sends each item's
result back as flat rows (:func:`result_rows`), regroups them (:func:`item_results`) and folds
the report from them (:func:`fold_result_rows`, :class:`EconomicsFold`). These laws hold for
any results, with no Ray runtime: the rows give back the results' ids, statuses and scores,
and the report (counts, means, verdict, economics) is the one ``run_evals`` gives.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given

from scorecore.evals import EvalReport, ItemResult, ScoreRow, Threshold, run_evals
from scorecore.evals.engine import (
    RESULT_COLUMNS,
    EconomicsFold,
    ReportFold,
    fold_result_rows,
    item_results,
    result_rows,
)
from scorecore.evals.results import ScorerOutcome
from scorecore.evals.store import row_id
from scorecore_adapters.cache import MemoryJudgeCache
from tests.evals.economics.test_evals_economics import PRICING
from tests.judged_scorers import StepJudge, judged_scorer
from tests.strategies import REPORT_SCORERS, item_result_lists


def _fold() -> ReportFold:
    return ReportFold(REPORT_SCORERS, thresholds={"a": Threshold(min=0.5)}, gates=["b"],
                      max_failures=3)


def report_of(results: Iterable[ItemResult]) -> EvalReport:
    """The report ``results`` fold to (batch ``b``, a threshold, a gate and a failure limit)."""
    fold = _fold()
    for result in results:
        fold.add(result)
    return fold.report(batch_id="b", duration=0.0)


def what_rows_keep(results: Iterable[ItemResult]) -> list[tuple[Any, ...]]:
    """What result rows carry of each result: its index, run id and repeat, and per scorer the
    id, status, score and whether it was resumed."""
    return [(r.index, r.run_id, r.duplicate_of,
             [(o.scorer_id, o.status, o.score, o.resumed) for o in r.outcomes]) for r in results]


@given(item_result_lists())
def test_result_rows_fold_to_the_results_report(results: list[ItemResult]) -> None:
    """Folding the result rows gives, to the last bit, the report the results fold to."""
    rows = result_rows(results)
    assert all(list(row) == [name for name, _ in RESULT_COLUMNS] for row in rows)
    assert fold_result_rows(rows, _fold(), batch_id="b", duration=0.0) == report_of(results)
    regrouped = list(item_results(rows))
    assert what_rows_keep(regrouped) == what_rows_keep(results)


def test_a_row_value_is_a_plain_value_of_its_column_type() -> None:
    """Every value is None or of its column's type, and text is valid UTF-8 (a lone surrogate
    in a reason is replaced, so a columnar format never refuses the batch)."""
    result = ItemResult(index=0, item_id="q\ud800", run_id="b:q", item=None, outcomes=(
        ScorerOutcome(scorer_id="a", status="scored", score=0.5, reason="r\udfff"),))
    [row] = result_rows([result])
    for name, kind in RESULT_COLUMNS:
        assert row[name] is None or type(row[name]) is kind, (name, row[name])
    assert row["reason"] == "r?"
    assert row["item_id"] == "q?"


@pytest.mark.anyio
async def test_a_runner_folding_result_rows_gets_run_evals_economics() -> None:
    """Costs, savings and cache counts folded from result rows (with each worker call's spend on
    its first row) are ``run_evals``' economics for the same items."""
    items = [{"id": f"q{i}", "input": f"question {i}", "output": f"answer {i}"}
             for i in range(5)]
    cache = MemoryJudgeCache()
    scorer = judged_scorer(StepJudge())
    await run_evals(items[:2], [scorer], cache=cache, pricing=PRICING)  # some hits next time
    report = await run_evals(items, [scorer], cache=cache, pricing=PRICING, keep_results=True,
                             batch_id="b")
    assert report.economics is not None
    assert report.economics.cache_hits > 0
    spent = (report.economics.spent_usd, report.economics.spent_tokens)
    # Two worker calls: the first spent everything, the second nothing.
    rows = result_rows(report.results[:3], spent=spent) + result_rows(report.results[3:])
    fold = ReportFold([scorer.id])
    economics = EconomicsFold(scorer_ids=[scorer.id], metered=True)
    folded = fold_result_rows(rows, fold, batch_id="b", duration=report.duration,
                              economics=economics)
    assert folded.economics == report.economics


def test_without_a_meter_or_metered_the_report_has_no_economics() -> None:
    """An unmetered fold leaves ``economics`` out, as ``run_evals`` without a cache or prices."""
    result = ItemResult(index=0, item_id=None, run_id="b:#0", item=None,
                        outcomes=(ScorerOutcome(scorer_id="a", status="scored", score=1.0),))
    report = ReportFold(["a"]).report(batch_id="b", duration=0.0)
    fold = EconomicsFold(scorer_ids=["a"])
    fold.add(result)
    assert fold.finish(report).economics is None


def test_trust_travels_from_the_stored_rows() -> None:
    """A pair's panel or pairwise part is its stored row's (JSON text); resumed pairs have none."""
    result = ItemResult(index=0, item_id=None, run_id="b:#0", item=None, outcomes=(
        ScorerOutcome(scorer_id="p", status="scored", score=1.0),
        ScorerOutcome(scorer_id="q", status="scored", score=1.0, resumed=True),
    ))
    stored = [ScoreRow(id=row_id("b:#0", sid), scorer_id=sid, run_id="b:#0",
                         batch_id="b", status="scored", score=1.0,
                         metadata={"panel": {"x": 1}, "other": 2})
              for sid in ("p", "q")]
    first, second = result_rows([result], stored=stored)
    assert json.loads(first["trust"]) == {"panel": {"x": 1}}
    assert second["trust"] is None
