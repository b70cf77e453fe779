"""A cascade in the report: per tier, the share of runs it decided, its cost, its agreement."""

from __future__ import annotations

import math
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.evals import cascade_summaries, run_evals
from scorecore.evals.engine import ReportFold, fold_result_rows, result_rows
from scorecore.evals.results import CascadeSummary
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import Pricing
from scorecore.scorers import cascade
from scorecore_adapters.testing import FunctionJudge, InMemoryScoreStore, verdict_reply

pytestmark = pytest.mark.anyio

# Tier 0 is cheap, tier 1 ten times dearer: 100 input tokens and 10 output tokens a call.
PRICING = Pricing.from_mapping({"cheap": {"input": 1.0, "output": 4.0},
                                "strong": {"input": 10.0, "output": 40.0}})
CALL = {"cheap": (100 * 1.0 + 10 * 4.0) / 1e6, "strong": (100 * 10.0 + 10 * 40.0) / 1e6}


def tier(scorer_id: str, of: dict[str, tuple[int, float]]) -> Any:
    """A tier that, for each run output, votes 1 or 0 with the confidence given."""

    def answer(request: JudgeRequest) -> JudgeResponse:
        output = request.messages[-1].content.removeprefix("Pass? ").split("\n")[0]
        vote, p = of[output]
        other = "0" if vote else "1"
        reply = verdict_reply({"score": vote}, {str(vote): p, other: 1 - p} if p < 1
                              else {str(vote): p}, chosen=str(vote))
        return attrs.evolve(reply, usage=JudgeUsage(input_tokens=100, output_tokens=10))

    judge = JudgeConfig(model=FunctionJudge(answer, model_id=scorer_id), instructions="Judge.")
    return create_scorer(id=scorer_id, description="d", judge=judge).generate_score(
        ScorePromptStep(description="pass", create_prompt=lambda ctx: f"Pass? {ctx.run.output}",
                        score_from="probabilities", verdicts={"1": 1.0, "0": 0.0}))


async def _run(cheap: dict[str, tuple[int, float]], strong: dict[str, tuple[int, float]],
               store: InMemoryScoreStore | None = None) -> Any:
    items = [{"id": out, "input": "q", "output": out} for out in cheap]
    scorer = cascade(tier("cheap", cheap), tier("strong", strong), min_confidence=0.8,
                     id="casc")
    return await run_evals(items, [scorer], pricing=PRICING, store=store, batch_id="b",
                           max_failures=len(items))


async def test_the_report_gives_each_tiers_share_cost_and_the_stored_rows_its_agreement(
    anyio_backend: str,
) -> None:
    """Two of four runs decided by the cheap tier, one by the strong one, one by none; each
    tier's cost counts every run that reached it; labels give each tier's agreement."""
    cheap = {"a": (1, 0.95), "b": (0, 0.9), "c": (1, 0.6), "d": (0, 0.55)}
    strong = {"a": (1, 0.5), "b": (1, 0.5), "c": (0, 0.99), "d": (1, 0.6)}
    store = InMemoryScoreStore()
    report = await _run(cheap, strong, store)
    (summary,) = report.cascades
    assert (summary.runs, summary.decided, summary.low_confidence, summary.failed) == (4, 3, 1, 0)
    first, second = summary.tiers
    assert (first.scorer_id, first.runs, first.decided) == ("cheap", 4, 2)
    assert (second.scorer_id, second.runs, second.decided) == ("strong", 2, 1)
    assert (first.decided_share, second.decided_share) == (pytest.approx(2 / 3),
                                                           pytest.approx(1 / 3))
    assert first.cost_usd == pytest.approx(4 * CALL["cheap"])
    assert second.cost_usd == pytest.approx(2 * CALL["strong"])
    assert first.agreement is None
    assert report.to_json()["cascades"][0]["tiers"][1]["costUsd"] == pytest.approx(
        2 * CALL["strong"])

    rows = await store.list_run("b")
    labels = {"a": True, "b": True, "c": False, "d": True}
    (labelled,) = cascade_summaries(rows, labels=labels)
    assert [t.decided for t in labelled.tiers] == [2, 1]
    # cheap decided a (1, label pass: agrees) and b (0, label pass: disagrees); strong c
    # (0, label fail: agrees).
    assert [(t.labelled, t.agreement) for t in labelled.tiers] == [(2, 0.5), (1, 1.0)]
    assert labelled.agreement == pytest.approx(2 / 3)
    assert labelled.agreement_per_usd == pytest.approx(
        (2 / 3) / (4 * CALL["cheap"] + 2 * CALL["strong"]))


confidences = st.floats(min_value=0.5, max_value=1.0)
votes = st.tuples(st.integers(0, 1), confidences)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(votes, votes), min_size=1, max_size=6))
def test_shares_sum_to_one_and_tier_costs_add_up_to_the_scorers_cost(
    runs: list[tuple[tuple[int, float], tuple[int, float]]],
) -> None:
    """Over any batch: every run is decided, low-confidence or failed; the decided shares sum
    to 1; the tiers' costs sum to the batch's judge cost for the cascade."""
    cheap = {f"o{i}": c for i, (c, _) in enumerate(runs)}
    strong = {f"o{i}": s for i, (_, s) in enumerate(runs)}
    report = anyio.run(lambda: _run(cheap, strong))
    (summary,) = report.cascades
    assert isinstance(summary, CascadeSummary)
    assert summary.decided + summary.low_confidence + summary.failed == summary.runs == len(runs)
    if summary.decided:
        assert math.fsum(t.decided_share or 0.0 for t in summary.tiers) == pytest.approx(1.0)
    (cost,) = report.economics.scorers
    assert cost.cost_usd is not None
    assert math.fsum(t.cost_usd for t in summary.tiers) == pytest.approx(cost.cost_usd)
    assert summary.cost_usd == pytest.approx(cost.cost_usd)
    escalated = sum(1 for c, _ in runs if c[1] < 0.8)
    assert [t.runs for t in summary.tiers][1:] == ([escalated] if escalated else [])


async def test_a_runner_folding_result_rows_gets_run_evals_cascades(anyio_backend: str) -> None:
    """A cascade's part travels in the result rows (``trust``): the report folded from them
    has the cascades ``run_evals`` gives."""
    store = InMemoryScoreStore()
    cheap = {"a": (1, 0.95), "b": (0, 0.6), "c": (1, 0.5)}
    strong = {"a": (1, 0.9), "b": (1, 0.99), "c": (0, 0.6)}
    items = [{"id": out, "input": "q", "output": out} for out in cheap]
    scorer = cascade(tier("cheap", cheap), tier("strong", strong), id="casc")
    report = await run_evals(items, [scorer], pricing=PRICING, store=store, batch_id="b",
                             max_failures=3, keep_results=True)
    assert report.results is not None
    rows = result_rows(report.results, stored=await store.list_run("b"))
    folded = fold_result_rows(rows, ReportFold([scorer.id]), batch_id="b", duration=0.0)
    assert folded.cascades == report.cascades
    assert [t.decided for t in folded.cascades[0].tiers] == [1, 1]
