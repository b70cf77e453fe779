"""One output cap per judge call: what the adapters send is what the budget reserves.

Judge replies get a default cap of 1,024 output tokens unless the step (or the run) sets one;
an explicit ``max_tokens`` / ``max_completion_tokens`` in ``ModelSettings.extra`` replaces it
both in the request body and in the budget's reservation.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from returns.result import Success

from scorecore import (
    BudgetExhausted,
    ModelSettings,
    Runtime,
)
from scorecore.evals import EvalConfigError, run_evals
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.judge.economics import Budget, JudgeMeter, Pricing
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.openai import OpenAIChatModel
from tests.judged_scorers import numbered_items, output_graded

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("allow_requests")]


class _Server:
    """A provider that answers as many output tokens as the request allowed."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        allowed = max(body.get(k, 0) for k in ("max_tokens", "max_completion_tokens"))
        if self.protocol == "anthropic":
            return httpx.Response(200, json={
                "type": "message", "model": body["model"], "stop_reason": "max_tokens",
                "content": [{"type": "text", "text": '{"score": 1}'}],
                "usage": {"input_tokens": 50, "output_tokens": allowed},
            })
        return httpx.Response(200, json={
            "model": body["model"], "choices": [{
                "message": {"role": "assistant", "content": '{"score": 1}'},
                "finish_reason": "length",
            }],
            "usage": {"prompt_tokens": 50, "completion_tokens": allowed},
        })


PRICING = Pricing.from_mapping({
    "gpt-4o-mini": {"input": 1.0, "output": 10.0},
    "llama": {"input": 1.0, "output": 10.0},
    "claude-x": {"input": 1.0, "output": 10.0},
})


@pytest.mark.parametrize("extra", [
    {"max_tokens": 50_000}, {"max_completion_tokens": 50_000},
    {"max_tokens": 50_000, "max_completion_tokens": 10},
])
async def test_a_cap_in_extra_is_what_the_budget_reserves(
    anyio_backend: str, extra: dict[str, int],
) -> None:
    """extra's cap replaces max_output_tokens in the body and in the reservation: the batch
    never spends past its budget (it was 21x over it when the reservation used 100)."""
    server = _Server("openai")
    settings = ModelSettings(max_output_tokens=100, extra=extra)
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        model = OpenAIChatModel("llama", base_url="http://vllm.local/v1", client=client)
        report = await run_evals(numbered_items(10), [output_graded(model, settings)],
                                 pricing=PRICING, budget=Budget(max_cost_usd=0.05), concurrency=1,
                                 keep_results=True)
    economics = report.economics
    assert economics is not None
    assert economics.spent_usd <= 0.05
    # One reply of 50,000 output tokens costs $0.50: no call may start.
    assert server.bodies == []
    (result, *_) = report.results or ()
    cause = result.outcomes[0].run_error.cause
    assert isinstance(cause, BudgetExhausted)
    assert cause.needed is not None
    assert cause.needed >= 50_000 * 10.0 / 1e6


@pytest.mark.parametrize(("base_url", "field"), [
    ("https://api.openai.com/v1", "max_completion_tokens"),
    ("http://localhost:11434/v1", "max_tokens"),
])
async def test_openai_sends_the_default_cap_and_the_budget_reserves_it(
    anyio_backend: str, base_url: str, field: str,
) -> None:
    """A step without a cap: 1,024 output tokens are sent, and reserved (not 4,096)."""
    server = _Server("openai")
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        model = OpenAIChatModel("gpt-4o-mini", base_url=base_url, api_key="k", client=client)
        result = await output_graded(model).run(input="q", output="a")
        assert result.unwrap().score == 1
        assert server.bodies[-1][field] == 1024
        # The worst case of a call is its input and 1,024 output tokens at $10 per million:
        # just over $0.01 admits it, just under refuses it.
        meter = JudgeMeter(pricing=PRICING, budget=Budget(max_cost_usd=0.0104))
        ok = await output_graded(model).run(input="q", output="a", runtime=Runtime(meter=meter))
        assert ok.unwrap().score == 1
        meter = JudgeMeter(pricing=PRICING, budget=Budget(max_cost_usd=0.0102))
        refused = await output_graded(model).run(input="q", output="a",
                                                 runtime=Runtime(meter=meter))
    cause = refused.failure().cause
    assert isinstance(cause, BudgetExhausted)
    assert cause.needed is not None
    assert 1024 * 10.0 / 1e6 < cause.needed < 0.0104


async def test_anthropic_sends_its_cap_and_the_budget_reserves_it(anyio_backend: str) -> None:
    """AnthropicModel(max_tokens=...) is the cap of steps that set none; reserved as sent."""
    server = _Server("anthropic")
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        default = AnthropicModel("claude-x", api_key="k", client=client)
        await output_graded(default).run(input="q", output="a")
        assert server.bodies[-1]["max_tokens"] == 1024
        larger = AnthropicModel("claude-x", api_key="k", client=client, max_tokens=4000)
        meter = JudgeMeter(pricing=PRICING, budget=Budget(max_cost_usd=0.05))
        await output_graded(larger).run(input="q", output="a", runtime=Runtime(meter=meter))
        assert server.bodies[-1]["max_tokens"] == 4000
        meter = JudgeMeter(pricing=PRICING, budget=Budget(max_cost_usd=0.039))
        refused = await output_graded(larger).run(input="q", output="a",
                                                  runtime=Runtime(meter=meter))
    cause = refused.failure().cause
    assert isinstance(cause, BudgetExhausted)
    assert cause.needed is not None
    assert cause.needed > 4000 * 10.0 / 1e6
    assert len(server.bodies) == 2


class _CapJudge:
    """Records the cap each request carries; answers within it."""

    model_id = "cap-judge"
    provider = "test"
    supports_structured_output = False

    def __init__(self) -> None:
        self.caps: list[int | None] = []

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.caps.append(request.settings.max_output_tokens)
        return Success(JudgeResponse(text='{"score": 1}',
                                     usage=JudgeUsage(input_tokens=5, output_tokens=5)))


async def test_the_default_cap_takes_part_in_the_cache_key(anyio_backend: str) -> None:
    """What is sent changes the reply: a step without a cap shares entries with an explicit
    1,024, never with another cap; the run's max_output_tokens is a cap of its own."""
    judge = _CapJudge()
    cache = MemoryJudgeCache()
    await run_evals(numbered_items(2), [output_graded(judge)], cache=cache)
    assert judge.caps == [1024, 1024]
    await run_evals(numbered_items(2),
                    [output_graded(judge, ModelSettings(max_output_tokens=1024))], cache=cache)
    assert len(judge.caps) == 2  # read back
    await run_evals(numbered_items(2),
                    [output_graded(judge, ModelSettings(max_output_tokens=2048))], cache=cache)
    assert judge.caps[2:] == [2048, 2048]
    report = await run_evals(numbered_items(2), [output_graded(judge)], cache=cache,
                             max_output_tokens=300)
    assert judge.caps[4:] == [300, 300]
    assert report.economics is not None
    assert report.economics.cache_misses == 2
    # A step's own cap wins over the run's.
    await run_evals(numbered_items(2),
                    [output_graded(judge, ModelSettings(max_output_tokens=2048))],
                    cache=cache, max_output_tokens=300)
    assert len(judge.caps) == 6


def test_output_cap_reads_extra_first_then_the_setting_then_the_default() -> None:
    """ModelSettings.output_cap: the one place adapters and the budget read the cap from."""
    assert ModelSettings().output_cap == 1024
    assert ModelSettings(max_output_tokens=64).output_cap == 64
    assert ModelSettings(max_output_tokens=64, extra={"max_tokens": 9000}).output_cap == 9000
    both = ModelSettings(extra={"max_tokens": 10, "max_completion_tokens": 700})
    assert both.output_cap == 700
    # A cap the provider reads in its own way (text, a fraction, a bool): unknown.
    for odd in ("500", 1.5, True, 0, -3):
        assert ModelSettings(extra={"max_tokens": odd}).output_cap is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "512"])
async def test_a_bad_run_cap_is_refused_before_anything_runs(
    anyio_backend: str, bad: object,
) -> None:
    """run_evals(max_output_tokens=...) names the argument and the value."""
    judge = _CapJudge()
    with pytest.raises(EvalConfigError, match=r"max_output_tokens must be an int >= 1"):
        await run_evals(numbered_items(1), [output_graded(judge)], max_output_tokens=bad)  # type: ignore[arg-type]
    assert judge.caps == []


def test_a_step_s_capped_settings_are_made_once_and_follow_its_extra() -> None:
    """The capped copy is kept per settings value (every run of a step reuses it); a cap put
    into ``extra`` afterwards still wins, as the request body sends it."""
    from scorecore._core._judge import with_default_cap  # noqa: PLC0415 - internal helper

    extra: dict[str, Any] = {"top_k": 3}
    settings = ModelSettings(temperature=0.0, extra=extra)
    capped = with_default_cap(settings, 512)
    assert capped == ModelSettings(temperature=0.0, max_output_tokens=512, extra=extra)
    assert with_default_cap(settings, 512) is capped
    assert with_default_cap(settings, 256).max_output_tokens == 256
    extra["max_tokens"] = 64
    assert with_default_cap(settings, 512) is settings
