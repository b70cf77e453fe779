"""A budget never lies: bad token counts, output caps and replies past their cap."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from scorecore import BudgetExhausted, ModelSettings
from scorecore._core._pricing import MAX_CREDIBLE_TOKENS, usage_problem
from scorecore.evals import run_evals
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import Budget, BudgetWarning, Pricing
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import virtual_runtime
from tests.judged_scorers import numbered_items, output_graded

pytestmark = pytest.mark.anyio

# The worst case of one call below: ~60 input tokens and 1,000 output tokens at $1/$10 per
# million, about $0.01; a $0.05 budget admits a handful of calls, never 40.
PRICING = Pricing.from_mapping({"m": {"input": 1.0, "output": 10.0}})
SETTINGS = ModelSettings(max_output_tokens=1_000)


class _UsageJudge:
    """Answers a score with the given usage; counts the calls it was asked."""

    model_id = "m"
    provider = "test"
    supports_structured_output = False

    def __init__(self, usage: Any) -> None:
        self.usage = usage
        self.calls = 0

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.calls += 1
        return Success(JudgeResponse(text='{"score": 1}', usage=self.usage))


def _scorer(judge: Any, settings: ModelSettings = SETTINGS) -> Any:
    return output_graded(judge, settings)


BAD_USAGES = [
    pytest.param(JudgeUsage(input_tokens=-1_000_000, output_tokens=-10), id="negative"),
    pytest.param(JudgeUsage(input_tokens=10, output_tokens=-10), id="negative-output"),
    pytest.param(JudgeUsage(input_tokens=10, output_tokens=5, cached_input_tokens=-99),
                 id="negative-cached"),
    pytest.param(JudgeUsage(input_tokens=1.5, output_tokens=2), id="non-integer"),  # type: ignore[arg-type]
    pytest.param(JudgeUsage(input_tokens=True, output_tokens=2), id="bool"),
    pytest.param(JudgeUsage(input_tokens=float("nan"), output_tokens=2), id="nan"),  # type: ignore[arg-type]
    pytest.param(JudgeUsage(input_tokens=10, output_tokens=10**30), id="absurd"),
]


@pytest.mark.parametrize("usage", BAD_USAGES)
async def test_bad_token_counts_are_charged_at_the_worst_case_never_credited(
    usage: JudgeUsage,
) -> None:
    """A reply whose usage is negative, not an int or absurd is a usage error: the ledger is
    charged the call's worst case, so a hard budget still stops the batch."""
    judge = _UsageJudge(usage)
    report = await run_evals(numbered_items(40), [_scorer(judge)], pricing=PRICING,
                             budget=Budget(max_cost_usd=0.05), concurrency=1)
    economics = report.economics
    assert economics is not None
    assert judge.calls <= 5
    assert 0 < economics.spent_usd <= 0.05
    assert economics.budget_refused == 40 - judge.calls
    assert economics.usage_errors == judge.calls
    assert economics.cost_usd is None  # the replies' cost is unknown, never negative


@pytest.mark.parametrize("usage", BAD_USAGES)
async def test_cached_replies_with_bad_token_counts_never_credit_the_savings(
    usage: JudgeUsage,
) -> None:
    """An (edited) cache entry with bad counts saves nothing rather than a negative amount."""
    cache = MemoryJudgeCache()
    good = _UsageJudge(JudgeUsage(input_tokens=10, output_tokens=5))
    await run_evals(numbered_items(3), [_scorer(good)], cache=cache)
    for key, response in list(cache.entries.items()):
        cache.entries[key] = JudgeResponse(text=response.text, usage=usage)
    report = await run_evals(numbered_items(3), [_scorer(good)], cache=cache, pricing=PRICING)
    assert good.calls == 3  # every reply read back
    economics = report.economics
    assert economics is not None
    assert economics.cache_hits == 3
    assert economics.saved_usd == 0.0
    assert economics.spent_usd == 0.0
    assert economics.usage_errors == 3


class _OverrunJudge:
    """Answers within its cap, except call number ``overrun_at`` which reports ``reported``
    output tokens; sleeps ``latency`` virtual seconds; records when each call started."""

    model_id = "m"
    provider = "test"
    supports_structured_output = False

    def __init__(self, clock: Any, *, overrun_at: int, reported: int, latency: float) -> None:
        self.clock = clock
        self.overrun_at = overrun_at
        self.reported = reported
        self.latency = latency
        self.starts: list[float] = []
        self.overrun_seen_at: float | None = None

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.starts.append(self.clock())
        number = len(self.starts)
        await self.clock.sleep(self.latency * (1 + number % 3))
        cap = request.settings.output_cap
        assert cap is not None
        output = self.reported if number == self.overrun_at else cap
        if number == self.overrun_at:
            self.overrun_seen_at = self.clock()
        return Success(JudgeResponse(text='{"score": 1}',
                                     usage=JudgeUsage(input_tokens=10, output_tokens=output)))


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_a_reply_past_its_cap_is_charged_in_full_and_stops_the_budget_at_once(
    anyio_backend: str, concurrency: int,
) -> None:
    """No judge call starts after a reply reported more output tokens than its cap allowed;
    that reply is charged what it reports; later runs fail with the reason."""
    runtime, clock = virtual_runtime()
    judge = _OverrunJudge(clock, overrun_at=3, reported=50_000, latency=1.0)
    report = await run_evals(numbered_items(20), [_scorer(judge)], pricing=PRICING, runtime=runtime,
                             budget=Budget(max_cost_usd=100.0), concurrency=concurrency,
                             keep_results=True)
    assert judge.overrun_seen_at is not None
    assert [t for t in judge.starts if t >= judge.overrun_seen_at] == []
    economics = report.economics
    assert economics is not None
    one = (10 * 1.0 + 1_000 * 10.0) / 1e6
    overrun = (10 * 1.0 + 50_000 * 10.0) / 1e6
    assert economics.spent_usd == pytest.approx((len(judge.starts) - 1) * one + overrun)
    assert economics.budget_refused == 20 - len(judge.starts)
    stopped = [o.run_error.cause for r in report.results or () for o in r.outcomes
               if o.status == "failed"]
    assert len(stopped) == 20 - len(judge.starts)
    for cause in stopped:
        assert isinstance(cause, BudgetExhausted)
        assert cause.overrun is not None
        assert "50,000 output tokens" in cause.describe()
        assert "cap of 1,000" in cause.describe()


async def test_a_soft_budget_warns_about_a_reply_past_its_cap_and_goes_on(
    anyio_backend: str,
) -> None:
    """Soft mode: the overrun is the warning's line; every item is still scored."""
    runtime, clock = virtual_runtime()
    judge = _OverrunJudge(clock, overrun_at=2, reported=5_000, latency=0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = await run_evals(numbered_items(5), [_scorer(judge)], pricing=PRICING,
                                 runtime=runtime, budget=Budget(max_cost_usd=100.0, mode="soft"))
    (warned,) = [w for w in caught if issubclass(w.category, BudgetWarning)]
    assert "5,000 output tokens, past its cap of 1,000" in str(warned.message)
    assert report.summary("s").scored == 5
    assert report.economics is not None
    assert report.economics.budget_refused == 0


class _Count(int):
    """A count some client library hands over as its own int type."""


_counts = (st.none() | st.integers(-3, 2 * MAX_CREDIBLE_TOKENS) | st.booleans()
           | st.floats(allow_nan=False, allow_infinity=False) | st.just(MAX_CREDIBLE_TOKENS)
           | st.integers(0, 5).map(_Count))


@given(counts=st.lists(_counts, min_size=5, max_size=5))
def test_a_usage_is_a_usage_error_unless_every_count_is_a_credible_whole_number(
    counts: list[object],
) -> None:
    """Counts are charged when each is unknown or a whole number (no bool) from 0 to a
    billion, an int subclass as much as an int; any other count names the first bad one."""
    names = ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens",
             "cached_input_tokens")
    usage = JudgeUsage(**dict(zip(names, counts, strict=True)))  # type: ignore[arg-type]
    bad = [f"{name}={value!r}" for name, value in zip(names, counts, strict=True)
           if value is not None and not (
               isinstance(value, int) and not isinstance(value, bool)
               and 0 <= value <= MAX_CREDIBLE_TOKENS)]
    assert usage_problem(usage) == (bad[0] if bad else None)
