"""run_evals with a cache, prices, a budget and trials: the batch-level laws."""

from __future__ import annotations

import math
import statistics
import warnings
from collections import Counter
from typing import Any

import anyio
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Success

from scorecore import BudgetExhausted, JudgeConfig, ScorePromptStep, create_scorer
from scorecore.evals import EvalConfigError, run_evals
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import Budget, BudgetWarning, Pricing, format_usd
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.testing import InMemoryScoreStore, VirtualClock, virtual_runtime
from tests.judged_scorers import StepJudge, judged_scorer

pytestmark = pytest.mark.anyio
PRICING = Pricing.from_mapping({"step-judge": {"input": 1.0, "output": 4.0}})


def _items(n: int) -> list[dict[str, Any]]:
    return [{"id": f"q{i}", "input": f"question {i}", "output": f"answer {i}"} for i in range(n)]


async def test_a_cached_rerun_makes_no_calls_and_reports_savings() -> None:
    """Second batch: every execution a hit, cost 0, savings equal the first batch's cost."""
    cache = MemoryJudgeCache()
    judge = StepJudge()
    first = await run_evals(_items(6), [judged_scorer(judge)], cache=cache, pricing=PRICING)
    assert judge.calls == {"analyze": 6, "generate_score": 6, "generate_reason": 6}
    judge.calls.clear()
    second = await run_evals(_items(6), [judged_scorer(judge)], cache=cache, pricing=PRICING)
    assert judge.calls == {}
    assert first.economics is not None
    assert second.economics is not None
    one = (100 * 1.0 + 10 * 4.0) / 1e6
    assert first.economics.cost_usd == pytest.approx(18 * one)
    assert first.economics.scorers[0].model_calls == 18
    assert (second.economics.cache_hits, second.economics.cache_misses) == (18, 0)
    assert second.economics.cost_usd == 0.0
    assert second.economics.saved_usd == pytest.approx(first.economics.cost_usd)
    assert second.to_json()["economics"]["savedUsd"] == pytest.approx(18 * one)


async def test_rows_carry_the_scorer_fingerprint() -> None:
    """Every stored row records the fingerprint (scorer JSON and metadata)."""
    store = InMemoryScoreStore()
    scorer = judged_scorer(StepJudge())
    await run_evals(_items(3), [scorer], store=store, batch_id="b")
    rows = list(store.rows.values())
    assert len(rows) == 3
    for row in rows:
        assert row.scorer["fingerprint"] == scorer.fingerprint
        assert row.metadata is not None
        assert row.metadata["fingerprint"] == scorer.fingerprint


class _TrialJudge:
    """Scores each prompt from a per-prompt script: the k-th ask of a prompt gets script[k]."""

    model_id = "trial-judge"
    provider = "test"
    supports_structured_output = False

    def __init__(self, scripts: dict[str, list[float]]) -> None:
        self.scripts = scripts
        self.asked: Counter[str] = Counter()

    async def generate(self, request: JudgeRequest, /) -> Any:
        prompt = request.messages[-1].content
        k = self.asked[prompt]
        self.asked[prompt] += 1
        score = self.scripts[prompt.removeprefix("Score: ").split("\n")[0]][k]
        return Success(JudgeResponse(text=f'{{"score": {score}}}'))


def _score_only(judge: Any) -> Any:
    return create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="Grade.",
    )).generate_score(ScorePromptStep(description="s",
                                      create_prompt=lambda ctx: f"Score: {ctx.run.output}"))


@given(st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=3, max_size=3),
                min_size=1, max_size=6))
@settings(max_examples=30)
def test_trials_ask_n_times_and_report_the_spread(scripts: list[list[float]]) -> None:
    """N trials: N calls per item; mean, per-item std dev and verdict flips match an oracle."""
    items = [{"id": f"i{k}", "input": "q", "output": f"o{k}"} for k in range(len(scripts))]
    judge = _TrialJudge({f"o{k}": s for k, s in enumerate(scripts)})
    cache = MemoryJudgeCache()

    async def main() -> Any:
        return await run_evals(items, [_score_only(judge)], trials=3, cache=cache,
                               thresholds={"s": 0.6}, concurrency=3)

    report = anyio.run(main)
    assert set(judge.asked.values()) == {3}
    assert report.trials is not None
    (spread,) = report.trials.scorers
    flat = [x for s in scripts for x in s]
    assert spread.mean == pytest.approx(sum(flat) / len(flat))
    devs = [statistics.pstdev(s) for s in scripts]
    assert spread.mean_std_dev == pytest.approx(sum(devs) / len(devs))
    assert spread.max_std_dev == pytest.approx(max(devs))
    flipped = [k for k, s in enumerate(scripts) if len({x >= 0.6 for x in s}) > 1]
    assert spread.changed_items == len(flipped)
    assert sorted(spread.changed_item_ids) == sorted(f"i{k}" for k in flipped)
    assert report.summary("s").scored == 3 * len(scripts)
    # trials again: all from the cache, per trial
    judge.asked.clear()
    anyio.run(main)
    assert sum(judge.asked.values()) == 0


async def test_trials_store_one_row_per_item_and_trial() -> None:
    """Trial t > 0 runs under run ids '<batch>/trial-t:<item>'."""
    store = InMemoryScoreStore()
    await run_evals(_items(2), [judged_scorer(StepJudge())], trials=3, store=store,
                    batch_id="b")
    run_ids = sorted(row.run_id for row in store.rows.values())
    assert run_ids == ["b/trial-1:q0", "b/trial-1:q1", "b/trial-2:q0", "b/trial-2:q1",
                       "b:q0", "b:q1"]


@attrs.define
class _PricedJudge:
    """Answers a score after a virtual latency, with usage within (or past) the worst case."""

    clock: VirtualClock
    latency: float
    output_tokens: int
    model_id: str = "priced"
    provider: str = "test"
    supports_structured_output: bool = False
    costs: list[float] = attrs.field(factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await self.clock.sleep(self.latency)
        self.in_flight -= 1
        tokens = sum(len(m.content.encode()) for m in request.messages)
        return Success(JudgeResponse(
            text='{"score": 1}',
            usage=JudgeUsage(input_tokens=tokens, output_tokens=self.output_tokens),
        ))


@given(
    price_in=st.floats(0.01, 50), price_out=st.floats(0.01, 50),
    limit=st.floats(0.0, 0.5), concurrency=st.integers(1, 8), items=st.integers(1, 30),
    latency=st.floats(0.0, 3.0), overrun=st.booleans(), max_out=st.integers(1, 2000),
)
@settings(max_examples=60, deadline=None)
def test_a_hard_budget_never_passes_its_limit_beyond_calls_in_flight(
    *,
    price_in: float, price_out: float, limit: float, concurrency: int, items: int,
    latency: float, overrun: bool, max_out: int,
) -> None:
    """Spend ≤ limit when replies keep to the worst case; else ≤ limit + in-flight replies.

    Stopped runs fail with BudgetExhausted and have no score; the rest are scored.
    """
    runtime, clock = virtual_runtime()
    # A judge that answers more than max_output_tokens overruns its worst case.
    judge = _PricedJudge(clock=clock, latency=latency,
                         output_tokens=max_out * 3 if overrun else max_out)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="Grade.",
        model_settings=__import__("scorecore").ModelSettings(max_output_tokens=max_out),
    )).generate_score(ScorePromptStep(description="s",
                                      create_prompt=lambda ctx: f"Score {ctx.run.output}"))
    pricing = Pricing.from_mapping({"priced": {"input": price_in, "output": price_out}})

    async def main() -> Any:
        return await run_evals(_items(items), [scorer], runtime=runtime, pricing=pricing,
                               budget=Budget(max_cost_usd=limit), concurrency=concurrency,
                               keep_results=True)

    report = anyio.run(main)
    economics = report.economics
    assert economics is not None
    spent = economics.spent_usd
    call_cost = (100 * price_in + judge.output_tokens * price_out) / 1e6  # inputs < 100 bytes
    if overrun:
        assert spent <= limit + judge.max_in_flight * call_cost + 1e-9
    else:
        assert spent <= limit + 1e-9
    assert economics.cost_usd == pytest.approx(spent)
    for result in report.results or ():
        (outcome,) = result.outcomes
        if outcome.status == "failed":
            assert isinstance(outcome.run_error.cause, BudgetExhausted)
            assert outcome.score is None
        else:
            assert outcome.status == "scored"
    stopped = economics.scorers[0].budget_stopped
    assert stopped == economics.budget_refused == report.summary("s").failed
    assert report.summary("s").scored + stopped == items


async def test_a_budget_stopped_batch_resumes_to_completion_from_the_cache() -> None:
    """Resume with a larger budget: every item done, no request answered before asked again."""
    store = InMemoryScoreStore()
    cache = MemoryJudgeCache()
    judge = StepJudge()
    items = _items(10)
    one_call = (100 * 1.0 + 10 * 4.0) / 1e6
    # Worst case of a call (its 200-token cap) is far above its real cost: the budget stops
    # the batch early. The resume keeps the cap: a reply to another cap is another request.
    first = await run_evals(items, [judged_scorer(judge)], store=store, batch_id="b",
                            cache=cache, pricing=PRICING, concurrency=2,
                            budget=Budget(max_cost_usd=0.002), max_output_tokens=200)
    assert first.economics is not None
    assert first.economics.budget_refused > 0
    assert 0 < first.summary("judged").scored < 10
    asked_first = {(r.step, r.messages[-1].content) for r in judge.requests}
    judge.requests.clear()
    second = await run_evals(items, [judged_scorer(judge)], store=store, batch_id="b",
                             resume=True, cache=cache, pricing=PRICING, concurrency=2,
                             budget=Budget(max_cost_usd=10.0), max_output_tokens=200)
    assert second.summary("judged").scored == 10
    asked_again = {(r.step, r.messages[-1].content) for r in judge.requests}
    assert not asked_first & asked_again
    assert second.economics is not None
    assert second.economics.cache_hits > 0
    assert second.economics.spent_usd == pytest.approx(len(asked_again) * one_call)
    line = second.economics.budget_line()
    assert line is not None
    assert line.startswith("spent $")
    assert "of $10.0000 (hard)" in line


async def test_a_soft_budget_warns_once_and_goes_on() -> None:
    """Soft mode: one BudgetWarning for the batch, every item scored."""
    judge = StepJudge()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = await run_evals(_items(5), [judged_scorer(judge)], pricing=PRICING,
                                 budget=Budget(max_tokens=10, mode="soft"))
    budget_warnings = [w for w in caught if issubclass(w.category, BudgetWarning)]
    assert len(budget_warnings) == 1
    assert "max_tokens=10" in str(budget_warnings[0].message)
    assert report.summary("judged").scored == 5
    assert report.economics is not None
    assert report.economics.spent_tokens == 15 * 110


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"trials": 0}, "trials must be an int >= 1, got 0"),
    ({"trials": True}, "trials must be an int >= 1, got True"),
    ({"budget": 5}, "budget must be a Budget, got 5"),
    ({"pricing": {"m": 1}}, "pricing must be a Pricing"),
    ({"cache": "sqlite:x.db"}, "cache must be a JudgeCache"),
    ({"budget": Budget(max_cost_usd=1.0)}, "pricing has none for 'step-judge'"),
])
async def test_bad_economics_arguments_are_refused_before_anything_runs(
    kwargs: dict[str, Any], match: str,
) -> None:
    """Each error names the argument and the value; no judge call is made."""
    judge = StepJudge()
    with pytest.raises(EvalConfigError, match=match):
        await run_evals(_items(2), [judged_scorer(judge)], **kwargs)
    assert judge.calls == {}


def test_budget_and_pricing_values_refuse_bad_numbers() -> None:
    """Negative, infinite, bool limits and prices; unknown or missing price fields."""
    for bad in (-1.0, math.inf, True, "1"):
        with pytest.raises(ValueError, match="max_cost_usd"):
            Budget(max_cost_usd=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mode"):
        Budget(mode="strict")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"pricing.models\['m'\]: missing \['output'\]"):
        Pricing.from_mapping({"m": {"input": 1}})
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['inptu'\]"):
        Pricing.from_mapping({"m": {"inptu": 1, "input": 1, "output": 2}})
    with pytest.raises(ValueError, match=r"pricing.models\['m'\]: ModelPrice.output must be"):
        Pricing.from_mapping({"models": {"m": {"input": 1, "output": -2}}})
    price = Pricing.from_mapping({"models": {"m": {"input": 2, "output": 8, "cached_input": 1}}})
    usage = JudgeUsage(input_tokens=1_000, output_tokens=500, cached_input_tokens=400)
    assert price.cost("m", usage) == pytest.approx((600 * 2 + 400 * 1 + 500 * 8) / 1e6)
    assert price.cost("m", JudgeUsage(output_tokens=5)) is None


def test_the_budget_line_shows_a_tiny_limit_and_spend() -> None:
    """A $0.000001 limit is not printed as $0.0000: tiny amounts keep two significant digits."""
    from scorecore.evals.results import EconomicsSummary  # noqa: PLC0415

    summary = EconomicsSummary(scorers=(), cost_usd=0.0000004, saved_usd=0.0, cache_hits=0,
                               cache_misses=0, spent_usd=0.0000004, spent_tokens=0,
                               budget=Budget(max_cost_usd=0.000001))
    assert summary.budget_line() == "spent $0.0000004 of $0.000001 (hard)"


@pytest.mark.parametrize(("value", "shown"), [
    (0.0, "$0.0000"), (1.0, "$1.0000"), (0.42, "$0.4200"), (0.00123, "$0.0012"),
    (0.00042, "$0.00042"), (0.000001, "$0.000001"), (0.0000015, "$0.0000015"),
    (1234.5, "$1234.5000"),
])
def test_format_usd_examples(value: float, shown: str) -> None:
    """Four decimals, and two significant digits for amounts below a tenth of a cent."""
    assert format_usd(value) == shown


@given(st.floats(min_value=1e-10, max_value=1e6))
def test_format_usd_keeps_two_significant_digits(value: float) -> None:
    """What is printed reads back within 5 % of the amount (never $0.0000 for a real one)."""
    shown = format_usd(value)
    assert shown.startswith("$")
    assert float(shown[1:]) == pytest.approx(value, rel=0.05, abs=0.00005)
    assert float(shown[1:]) > 0
