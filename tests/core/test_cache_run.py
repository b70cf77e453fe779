"""The judge cache in runs: reuse per step, only valid replies kept, one call per flight."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import BudgetExhausted, JudgeOutputInvalid, Runtime
from scorecore.judge import JudgeResponse
from scorecore.judge.economics import Budget, JudgeMeter, Pricing
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import judge_error, virtual_runtime
from tests.judged_scorers import StepJudge, judged_scorer

pytestmark = pytest.mark.anyio


def _runtime(meter: JudgeMeter) -> Runtime:
    runtime, _clock = virtual_runtime()
    return Runtime(clock=runtime.clock, sleep=runtime.sleep, new_id=runtime.new_id, meter=meter)


async def test_editing_only_the_reason_re_judges_only_reasons() -> None:
    """The law: after an edit of generate_reason, earlier steps make zero judge calls."""
    cache = MemoryJudgeCache()
    judge = StepJudge()
    outputs = [f"answer {i}" for i in range(5)]
    for output in outputs:
        result = await judged_scorer(judge).run(
            input="q", output=output, runtime=_runtime(JudgeMeter(cache=cache)))
        assert result.unwrap().score == 0.75
    assert judge.calls == {"analyze": 5, "generate_score": 5, "generate_reason": 5}

    edited = judged_scorer(judge, reason_prompt="Why {score} for {output}? Be brief.")
    judge.calls.clear()
    for output in outputs:
        result = await edited.run(input="q", output=output,
                                  runtime=_runtime(JudgeMeter(cache=cache)))
        execs = result.unwrap().judge
        assert execs["analyze"][0].cache_hits == 1
        assert execs["analyze"][0].model_call_count == 0
        assert execs["generate_reason"][0].cache_misses == 1
    assert judge.calls == {"generate_reason": 5}


async def test_unchanged_rerun_makes_no_call_and_reports_hits() -> None:
    """Every execution of a repeated run is a hit: no call, usage spent none."""
    cache = MemoryJudgeCache()
    judge = StepJudge()
    await judged_scorer(judge).run(input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))
    first_calls = sum(judge.calls.values())
    result = (await judged_scorer(judge).run(
        input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))).unwrap()
    assert sum(judge.calls.values()) == first_calls == 3
    for (execution,) in result.judge.values():
        assert (execution.cache_hits, execution.cache_misses) == (1, 0)
        assert execution.usage is not None
        assert execution.usage.total_tokens == 0
    assert result.reason == "because Explain the score 0."


async def test_only_valid_replies_are_stored() -> None:
    """An error and a reply failing the schema are never stored; the valid fallback is."""
    cache = MemoryJudgeCache()
    judge = StepJudge(fail={"generate_score": judge_error(503)})
    result = await judged_scorer(judge).run(
        input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))
    assert result.failure().failed_step == "generate_score"
    assert len(cache) == 1  # only analyze's valid reply

    cache = MemoryJudgeCache()
    judge = StepJudge(fail={"analyze": "invalid"})
    result = await judged_scorer(judge).run(
        input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))
    assert isinstance(result.failure().cause, JudgeOutputInvalid)
    assert len(cache) == 0
    assert cache.puts == 0


class _FirstAnalyzeInvalid(StepJudge):
    """Answers the first analyze request with an invalid reply, every later one validly."""

    async def generate(self, request: Any, /) -> Any:
        self.fail = {"analyze": "invalid"} if self.calls["analyze"] == 0 else {}
        return await super().generate(request)


async def test_the_valid_fallback_reply_is_cached_and_reused() -> None:
    """First attempt invalid, fallback valid: the rerun hits twice over (no call at all)."""
    cache = MemoryJudgeCache()
    judge = _FirstAnalyzeInvalid()
    result = (await judged_scorer(judge).run(
        input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))).unwrap()
    assert result.judge["analyze"][0].attempt_count == 2
    assert judge.calls["analyze"] == 2
    judge.calls.clear()
    again = (await judged_scorer(judge).run(
        input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))).unwrap()
    # The first (invalid) routing is asked again (never stored), the fallback is a hit.
    assert judge.calls["analyze"] == 1
    assert again.judge["analyze"][0].cache_hits == 1


async def test_a_rejected_reply_is_not_stored_when_the_fallback_is_a_hit() -> None:
    """First attempt invalid again on a rerun whose fallback is a hit: the invalid reply is
    never stored, so every later rerun asks the first routing again and gets no bad hit."""
    cache = MemoryJudgeCache()
    judge = _FirstAnalyzeInvalid()
    await judged_scorer(judge).run(
        input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))
    for _ in range(2):
        judge.calls.clear()  # the next first analyze request is answered invalid again
        again = (await judged_scorer(judge).run(
            input="q", output="a", runtime=_runtime(JudgeMeter(cache=cache)))).unwrap()
        assert judge.calls["analyze"] == 1
        assert again.judge["analyze"][0].cache_hits == 1
        assert "not json" not in [response.text for response in cache.entries.values()]


async def test_trials_make_distinct_calls() -> None:
    """N trials ask the judge N times per step; repeating the trials asks nothing."""
    cache = MemoryJudgeCache()
    judge = StepJudge()
    meter = JudgeMeter(cache=cache)
    for _round in range(2):
        for trial in range(3):
            await judged_scorer(judge).run(input="q", output="a",
                                           runtime=_runtime(meter.for_trial(trial)))
    assert judge.calls == {"analyze": 3, "generate_score": 3, "generate_reason": 3}
    assert meter.ledger.cache_hits == 9
    assert meter.ledger.cache_misses == 9


@given(n=st.integers(2, 12))
@settings(max_examples=10)
def test_concurrent_identical_requests_make_one_call(n: int) -> None:
    """Single flight: N identical runs at once make one call per step, the rest share it."""

    async def main() -> StepJudge:
        judge = StepJudge(pause=anyio.lowlevel.checkpoint)
        meter = JudgeMeter(cache=MemoryJudgeCache())
        async with anyio.create_task_group() as tg:
            for _ in range(n):
                tg.start_soon(lambda: judged_scorer(judge).run(
                    input="q", output="same", runtime=_runtime(meter)))
        assert meter.ledger.cache_hits == 3 * (n - 1)
        return judge

    for backend in ("asyncio", "trio"):
        judge = anyio.run(main, backend=backend)
        assert judge.calls == {"analyze": 1, "generate_score": 1, "generate_reason": 1}


async def test_a_failed_leader_lets_the_waiting_call_ask_itself() -> None:
    """Errors are not shared: when the call in flight fails, the waiter calls the judge."""
    outcomes: list[Any] = []
    meter = JudgeMeter(cache=MemoryJudgeCache())

    class FailFirst(StepJudge):
        async def generate(self, request: Any, /) -> Any:
            self.fail = {"analyze": judge_error(400)} if self.calls["analyze"] == 0 else {}
            return await super().generate(request)

    judge = FailFirst(pause=anyio.lowlevel.checkpoint)

    async def one() -> None:
        outcomes.append(await judged_scorer(judge).run(input="q", output="x",
                                                       runtime=_runtime(meter)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(one)
        tg.start_soon(one)
    assert judge.calls["analyze"] == 2
    assert sum(1 for r in outcomes if r.value_or(None) is not None) == 1


async def test_a_raising_cache_is_a_miss_and_the_run_goes_on() -> None:
    """A cache that raises on get and put costs calls, never the run."""

    class Broken:
        async def get(self, key: str, /) -> JudgeResponse | None:
            raise OSError("disk gone")

        async def put(self, key: str, response: JudgeResponse, /) -> None:
            raise OSError("disk gone")

    judge = StepJudge()
    meter = JudgeMeter(cache=Broken())
    for _ in range(2):
        result = await judged_scorer(judge).run(input="q", output="a", runtime=_runtime(meter))
        assert result.unwrap().score == 0.75
    assert judge.calls["analyze"] == 2


async def test_cost_counts_every_paid_reply_and_hits_as_savings() -> None:
    """cost_usd sums the fallback's two replies; a hit costs 0 and its price is saved."""
    pricing = Pricing.from_mapping({"step-judge": {"input": 1.0, "output": 10.0}})
    cache = MemoryJudgeCache()
    judge = _FirstAnalyzeInvalid()
    meter = JudgeMeter(cache=cache, pricing=pricing)
    result = (await judged_scorer(judge).run(input="q", output="a",
                                             runtime=_runtime(meter))).unwrap()
    one_reply = (100 * 1.0 + 10 * 10.0) / 1e6
    assert result.judge["analyze"][0].cost_usd == pytest.approx(2 * one_reply)
    assert result.judge["generate_score"][0].cost_usd == pytest.approx(one_reply)
    assert meter.ledger.spent_usd == pytest.approx(4 * one_reply)
    again = (await judged_scorer(judge).run(input="q", output="a",
                                            runtime=_runtime(meter))).unwrap()
    assert again.judge["generate_score"][0].cost_usd == 0.0
    assert again.judge["generate_score"][0].saved_usd == pytest.approx(one_reply)
    # analyze's first routing was never stored: it is paid again, the fallback is saved
    assert again.judge["analyze"][0].cost_usd == pytest.approx(one_reply)


async def test_no_price_means_no_cost() -> None:
    """Without a price for the judge model, cost_usd is None (not a silent 0)."""
    judge = StepJudge(model_id="unpriced")
    meter = JudgeMeter(pricing=Pricing.from_mapping({"other": {"input": 1, "output": 1}}))
    result = (await judged_scorer(judge).run(input="q", output="a",
                                             runtime=_runtime(meter))).unwrap()
    assert result.judge["analyze"][0].cost_usd is None


async def test_a_hard_budget_stops_the_run_with_budget_exhausted() -> None:
    """A refused call ends the run with cause BudgetExhausted, never a score."""
    pricing = Pricing.from_mapping({"step-judge": {"input": 1.0, "output": 1.0}})
    meter = JudgeMeter(pricing=pricing, budget=Budget(max_tokens=1))
    judge = StepJudge()
    result = await judged_scorer(judge).run(input="q", output="a", runtime=_runtime(meter))
    cause = result.failure().cause
    assert isinstance(cause, BudgetExhausted)
    assert cause.limit == "max_tokens"
    assert "max_tokens=1" in cause.describe()
    assert result.failure().partial.score is None
    assert judge.calls == {}


async def test_a_soft_budget_never_makes_a_run_raise_even_with_warnings_as_errors() -> None:
    """With warnings turned into errors, passing a soft budget still returns the run's Result;
    the ledger keeps the warning's line (soft_limit_passed)."""
    judge = StepJudge()
    meter = JudgeMeter(budget=Budget(max_tokens=10, mode="soft"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for output in ("a", "b"):
            result = await judged_scorer(judge).run(
                input="q", output=output, runtime=_runtime(meter))
            assert result.unwrap().score == 0.75
    line = meter.ledger.soft_limit_passed
    assert line is not None
    assert "max_tokens=10" in line
    assert line.endswith("the budget is soft, so the batch goes on")
