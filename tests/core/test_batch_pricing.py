"""Batch API prices: a per-model discount (50 % by default) in cost, savings and budget."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from returns.result import Result

from scorecore import Runtime
from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import Budget, JudgeMeter, ModelPrice, Pricing
from tests.judged_scorers import StepJudge, judged_scorer

pytestmark = pytest.mark.anyio

PRICES = Pricing.from_mapping({"step-judge": {"input": 2.0, "output": 8.0}})


@attrs.define(eq=False)
class BatchStepJudge:
    """StepJudge's answers through a "batch API" (``batch_api`` is true)."""

    inner: StepJudge = attrs.field(factory=StepJudge)
    model_id: str = "step-judge"
    provider: str = "test"
    supports_structured_output: bool = False
    batch_api: bool = True

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        return await self.inner.generate(request)


def test_the_default_batch_discount_is_half_and_a_file_may_change_it() -> None:
    """ModelPrice.batch_discount defaults to 0.5; pricing files set it per model."""
    usage = JudgeUsage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert PRICES.cost("step-judge", usage) == 10.0
    assert PRICES.cost("step-judge", usage, batch=True) == 5.0
    custom = Pricing.from_mapping({"m": {"input": 1.0, "output": 1.0, "batch_discount": 0.25}})
    assert custom.cost("m", usage, batch=True) == 1.5


@pytest.mark.parametrize("bad", [-0.1, 1.5, True, "half"])
def test_a_bad_discount_names_the_field_and_value(bad: Any) -> None:
    """A discount outside 0..1 (or not a number) is refused, naming the field and the value."""
    with pytest.raises(ValueError, match=r"batch_discount.*must be a number from 0 to 1"):
        ModelPrice(input=1.0, output=1.0, batch_discount=bad)


async def _costs(judge: Any) -> tuple[float, float, float]:
    meter = JudgeMeter(pricing=PRICES)
    result = (await judged_scorer(judge).run(
        input="q", output="a", runtime=Runtime(meter=meter))).unwrap()
    executions = [e for runs in result.judge.values() for e in runs]
    cost = sum(e.cost_usd or 0.0 for e in executions)
    saved = sum(e.saved_usd or 0.0 for e in executions)
    return cost, saved, meter.ledger.batch_saved_usd


async def test_a_batch_judge_costs_half_and_reports_the_other_half_as_saved() -> None:
    """The same calls cost half through a batch judge; saved_usd carries the difference."""
    direct_cost, direct_saved, _ = await _costs(StepJudge())
    batch_cost, batch_saved, ledger_saved = await _costs(BatchStepJudge())
    assert direct_cost > 0
    assert direct_saved == 0
    assert batch_cost == pytest.approx(direct_cost / 2)
    assert batch_saved == pytest.approx(direct_cost / 2)
    assert ledger_saved == pytest.approx(direct_cost / 2)


async def test_a_budget_reserves_batch_calls_at_the_batch_price() -> None:
    """A budget too small for one call's worst case at the direct price admits it at half."""
    # A call's worst case holds its 1,024 output tokens at 8 $/M (and its prompt at 2 $/M).
    worst_output = 1024 * 8.0 / 1_000_000
    limit = worst_output * 0.75  # below a direct call's worst case, above a batch call's
    outcomes = {}
    for name, judge in (("direct", StepJudge()), ("batch", BatchStepJudge())):
        meter = JudgeMeter(pricing=PRICES, budget=Budget(max_cost_usd=limit))
        ran = await judged_scorer(judge).run(input="q", output="a", runtime=Runtime(meter=meter))
        outcomes[name] = meter.ledger.model_calls, ran
    assert outcomes["direct"][0] == 0
    assert outcomes["batch"][0] >= 1
