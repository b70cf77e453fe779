"""A hard budget queues a call that fits once the calls in flight settle, refuses only what
cannot fit with nothing in flight, and so spends and refuses the same at any concurrency."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from scorecore import (
    BudgetExhausted,
    ModelSettings,
    Runtime,
)
from scorecore.evals import EvalReport, run_evals
from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import Budget, JudgeMeter, Pricing
from scorecore_adapters.testing import VirtualClock, judge_error, virtual_runtime
from tests.judged_scorers import output_graded

# One call's worst case: its prompt (~60 tokens) and its 1,024-token cap at $1/$10 per million,
# about $0.0103; what it spends: 20 input and 10 output tokens, $0.00012.
PRICING = Pricing.from_mapping({"m": {"input": 1.0, "output": 10.0}})
SETTINGS = ModelSettings(max_output_tokens=1_024)
ONE_CALL = (20 * 1.0 + 10 * 10.0) / 1e6


class _SlowJudge:
    """Answers every call after ``latencies[n % len]`` virtual seconds with fixed usage (or
    fails the calls numbered in ``failing``); records when each call started."""

    model_id = "m"
    provider = "test"
    supports_structured_output = False

    def __init__(self, clock: VirtualClock, latencies: list[float], *, output_tokens: int = 10,
                 failing: frozenset[int] = frozenset()) -> None:
        self.clock = clock
        self.latencies = latencies
        self.output_tokens = output_tokens
        self.failing = failing
        self.starts: list[float] = []

    async def generate(self, request: JudgeRequest, /) -> Any:
        del request
        number = len(self.starts)
        self.starts.append(self.clock())
        await self.clock.sleep(self.latencies[number % len(self.latencies)])
        if number in self.failing:
            error: JudgeError = judge_error(400, message="bad request")
            return Failure(error)
        return Success(JudgeResponse(text='{"score": 1}', usage=JudgeUsage(
            input_tokens=20, output_tokens=self.output_tokens)))


def _scorer(judge: Any, settings: ModelSettings = SETTINGS) -> Any:
    return output_graded(judge, settings)


def _items(n: int, pad: int = 0) -> list[dict[str, Any]]:
    return [{"id": f"q{i}", "input": "q", "output": f"a{i:03d}" + "." * pad} for i in range(n)]


async def _run(n: int, budget: Budget, concurrency: int, latencies: list[float], *,
               cap: int = 1_024, pad: int = 0,
               **judge: Any) -> tuple[EvalReport, _SlowJudge, VirtualClock]:
    runtime, clock = virtual_runtime()
    slow = _SlowJudge(clock, latencies, **judge)
    scorer = _scorer(slow, ModelSettings(max_output_tokens=cap))
    report = await run_evals(_items(n, pad), [scorer], pricing=PRICING, runtime=runtime,
                             budget=budget, concurrency=concurrency, keep_results=True)
    return report, slow, clock


def _totals(report: EvalReport) -> tuple[float, int, int]:
    economics = report.economics
    assert economics is not None
    return round(economics.spent_usd, 12), economics.budget_refused, report.summary("s").scored


@pytest.mark.anyio
async def test_calls_wait_for_the_calls_in_flight_instead_of_being_refused(
    anyio_backend: str,
) -> None:
    """16 calls at concurrency 8 under a budget holding three worst cases at once but all 16
    actual spends: none is refused (eight reservations at once used to refuse 13)."""
    budget = Budget(max_cost_usd=0.035)
    report, judge, _ = await _run(16, budget, 8, [1.0])
    assert _totals(report) == (pytest.approx(16 * ONE_CALL), 0, 16)
    assert len(judge.starts) == 16
    sequential, _, _ = await _run(16, budget, 1, [1.0])
    assert _totals(sequential) == _totals(report)


@pytest.mark.anyio
async def test_concurrency_one_and_eight_spend_and_refuse_the_same(anyio_backend: str) -> None:
    """Each call spends $0.0051 of a $0.05 budget (worst case $0.0103): eight fit, the ninth
    and later are refused, at concurrency 1 and 8 alike."""
    budget = Budget(max_cost_usd=0.05)
    one, _, _ = await _run(16, budget, 1, [1.0, 3.0, 2.0], output_tokens=500)
    eight, _, _ = await _run(16, budget, 8, [1.0, 3.0, 2.0], output_tokens=500)
    assert _totals(one) == _totals(eight)
    assert _totals(eight)[1:] == (8, 8)


@pytest.mark.anyio
async def test_a_call_that_can_never_fit_is_refused_at_once(anyio_backend: str) -> None:
    """A budget below one call's worst case refuses every call at virtual time 0, while
    nothing is in flight and without waiting."""
    report, judge, clock = await _run(8, Budget(max_cost_usd=0.005), 8, [5.0])
    assert _totals(report) == (0.0, 8, 0)
    assert judge.starts == []
    assert clock() == 0.0


@pytest.mark.anyio
async def test_a_call_that_cannot_fit_after_what_was_spent_is_refused_while_others_run(
    anyio_backend: str,
) -> None:
    """Once the spend leaves less than one worst case, a waiting call is refused when the
    spend shows it, not after the calls still in flight end."""
    budget = Budget(max_cost_usd=0.0125)  # one worst case, and 0.002 more
    report, judge, _ = await _run(4, budget, 4, [1.0, 50.0], output_tokens=200)
    causes = [o.run_error.cause for r in report.results or () for o in r.outcomes
              if o.run_error is not None]
    assert len(judge.starts) + len(causes) == 4
    assert all(isinstance(c, BudgetExhausted) for c in causes)


@pytest.mark.anyio
async def test_a_failed_call_in_flight_releases_the_calls_waiting_for_it(
    anyio_backend: str,
) -> None:
    """The call in flight fails (a judge error): its reservation is released and the waiting
    calls go on; nothing deadlocks."""
    budget = Budget(max_cost_usd=0.015)  # one worst case at a time
    report, judge, _ = await _run(4, budget, 4, [2.0], failing=frozenset({0}))
    assert len(judge.starts) == 4
    assert report.summary("s").scored == 3
    assert _totals(report)[1] == 0


class _GatedJudge:
    """Answers once ``gate`` is set; counts its calls."""

    model_id = "m"
    provider = "test"
    supports_structured_output = False

    def __init__(self) -> None:
        self.gate = anyio.Event()
        self.calls = 0

    async def generate(self, request: JudgeRequest, /) -> Any:
        del request
        self.calls += 1
        await self.gate.wait()
        return Success(JudgeResponse(text='{"score": 1}', usage=JudgeUsage(
            input_tokens=20, output_tokens=10)))


@pytest.mark.anyio
async def test_a_cancelled_waiting_call_leaves_the_queue(anyio_backend: str) -> None:
    """Runs cancelled while their calls wait for the budget leave no turn behind: once the
    call in flight answers, a later call of the same meter is admitted."""
    meter = JudgeMeter(pricing=PRICING, budget=Budget(max_cost_usd=0.015))  # one at a time
    judge = _GatedJudge()
    scorer = _scorer(judge)

    async def run(output: str) -> Any:
        return await scorer.run(input="q", output=output, runtime=Runtime(meter=meter))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as outer:
            outer.start_soon(run, "first")
            await anyio.wait_all_tasks_blocked()
            async with anyio.create_task_group() as waiting:
                waiting.start_soon(run, "second")
                waiting.start_soon(run, "third")
                await anyio.wait_all_tasks_blocked()
                assert judge.calls == 1  # the others wait for the budget
                waiting.cancel_scope.cancel()
            judge.gate.set()
        later = await run("later")
    assert later.unwrap().score == 1
    assert judge.calls == 2
    assert meter.ledger.refused == 0


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=12),
    concurrency=st.integers(min_value=2, max_value=8),
    limit=st.floats(min_value=0.0, max_value=0.08),
    cap=st.integers(min_value=1, max_value=4_096),
    pad=st.integers(min_value=0, max_value=2_000),
    spend=st.floats(min_value=0.0, max_value=1.0),
    latencies=st.lists(st.floats(min_value=0.0, max_value=20.0), min_size=1, max_size=5),
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_any_concurrency_spends_and_refuses_as_one_call_at_a_time(
    *, n: int, concurrency: int, limit: float, cap: int, pad: int, spend: float,
    latencies: list[float], backend: str,
) -> None:
    """Law: with calls of one size (prompt and output cap, drawn per example) spending a
    drawn share of their cap, a hard budget's spend, refusals and scored runs at any
    concurrency and latencies equal those of concurrency 1."""
    budget = Budget(max_cost_usd=limit)
    size = {"cap": cap, "pad": pad, "output_tokens": round(spend * cap)}

    async def both() -> tuple[tuple[float, int, int], tuple[float, int, int]]:
        one, _, _ = await _run(n, budget, 1, latencies, **size)
        many, _, _ = await _run(n, budget, concurrency, latencies, **size)
        return _totals(one), _totals(many)

    one, many = anyio.run(both, backend=backend)
    assert many == one
