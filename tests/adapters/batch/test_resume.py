"""Batch judges under run_evals: killed at any point and started again, every request is
answered exactly once and none is submitted twice; cached requests are never submitted."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import JudgeConfig, PromptStep, ScorePromptStep, Scorer, create_scorer
from scorecore.evals import EvalReport, run_evals
from scorecore.judge.economics import Budget, Pricing
from scorecore_adapters._guard import allow_model_requests
from scorecore_adapters.batch import AnthropicBatchModel, BatchJournal, OpenAIBatchModel
from scorecore_adapters.batch.fakes import (
    FakeAnthropicBatchAPI,
    FakeOpenAIBatchAPI,
    FakeReply,
    SimulatedKill,
)
from scorecore_adapters.cache import SqliteJudgeCache
from scorecore_adapters.testing import VirtualClock

CLAIMS = {"type": "object", "properties": {"claims": {"type": "array",
                                                      "items": {"type": "string"}}},
          "required": ["claims"]}


def answer(body: Mapping[str, Any]) -> FakeReply:
    """Claims for the analyze step; the item's number / 100 for the score step."""
    text = json.dumps(body["messages"], ensure_ascii=False)
    n = int(text.split("answer ")[1].split('"')[0].split("\\")[0])
    if "Claims in" in text:
        return json.dumps({"claims": [f"c{n}"]})
    return json.dumps({"score": n / 100})


def item_asked(body: Mapping[str, Any]) -> tuple[str, int]:
    text = json.dumps(body["messages"], ensure_ascii=False)
    n = int(text.split("answer ")[1].split('"')[0].split("\\")[0])
    return ("analyze" if "Claims in" in text else "score"), n


def scorer(judge: Any) -> Scorer[Any, Any, Any, Any]:
    return (
        create_scorer(id="judged", description="d",
                      judge=JudgeConfig(model=judge, instructions="Grade."))
        .analyze(PromptStep(description="claims", output_schema=CLAIMS,
                            create_prompt=lambda c: f"Claims in: {c.run.output}"))
        .generate_score(ScorePromptStep(description="score",
                                        create_prompt=lambda c: f"Score: {c.run.output}"))
    )


# Every journal a test opens (one per simulated process), closed when the test ends: a judge
# a test abandons stands for a killed process, whose connection the OS would close.
_JOURNALS: list[BatchJournal] = []


@pytest.fixture(autouse=True)
def _close_journals() -> Any:
    yield
    while _JOURNALS:
        _JOURNALS.pop().close()


class Provider:
    """A fake provider and the clock it shares with every process's judge."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name = name
        self.clock = VirtualClock()
        self.path = folder / "cache.db"
        fake_cls = FakeOpenAIBatchAPI if name == "openai" else FakeAnthropicBatchAPI
        self.fake = fake_cls(answer, clock=self.clock, processing_seconds=300.0)
        self.ids = 0

    def judge(self, max_batch_size: int) -> OpenAIBatchModel | AnthropicBatchModel:
        def new_id() -> str:
            self.ids += 1
            return f"{self.ids:04d}"
        cls = OpenAIBatchModel if self.name == "openai" else AnthropicBatchModel
        _JOURNALS.append(BatchJournal(self.path))
        return cls("judge-model", journal=_JOURNALS[-1], client=self.fake.client(),
                   api_key="sk-test-secret-key", clock=self.clock, sleep=self.clock.sleep,
                   new_id=new_id, max_batch_size=max_batch_size, max_wait=20.0,
                   poll_interval=60.0)

    async def run(self, items: int, max_batch_size: int) -> EvalReport:
        data = [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(items)]
        judge = self.judge(max_batch_size)
        async with SqliteJudgeCache(self.path) as cache:
            return await run_evals(data, [scorer(judge)], cache=cache, concurrency=items,
                                   keep_results=True)


def scores_of(report: EvalReport) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for result in report.results or ():
        outcome = result.outcomes[0]
        out[str(result.item.id)] = None if outcome.result is None else outcome.result.score
    return out


def check_exactly_once(provider: Provider, items: int, report: EvalReport) -> None:
    assert scores_of(report) == {f"q{i}": i / 100 for i in range(items)}
    assert provider.fake.duplicates() == []
    asked = Counter(item_asked(body) for batch in provider.fake.batches.values()
                    for _, body in batch.lines)
    # Every (step, item) request went to the provider exactly once, over every process.
    assert asked == Counter({(step, i): 1 for i in range(items) for step in ("analyze", "score")})


@st.composite
def kill_cases(draw: st.DrawFn) -> dict[str, Any]:
    """A provider, a backend, a batch shape and where (and how often) the process dies."""
    return {
        "name": draw(st.sampled_from(["openai", "anthropic"])),
        "backend": draw(st.sampled_from(["asyncio", "trio"])),
        "items": draw(st.integers(min_value=1, max_value=5)),
        "max_batch_size": draw(st.integers(min_value=1, max_value=6)),
        "kill_at": draw(st.integers(min_value=1, max_value=14)),
        "after_processing": draw(st.booleans()),
        "kills": draw(st.integers(min_value=1, max_value=2)),
    }


async def run_killed(provider: Provider, case: dict[str, Any]) -> EvalReport | None:
    """One process: the report, or ``None`` when it was killed."""
    killed = False
    try:
        report = await provider.run(case["items"], case["max_batch_size"])
    except* SimulatedKill:
        killed = True
    provider.fake.restart()
    return None if killed else report


@settings(max_examples=40, deadline=None)
@given(case=kill_cases())
def test_killed_at_any_http_call_and_resumed_every_request_is_answered_exactly_once(
    case: dict[str, Any],
) -> None:
    """Kill the process at its n-th exchange with the provider (before or after the provider
    acted on it), abandon every object, start again on the same file: the batch completes,
    each request was submitted once, and no custom_id was sent twice."""
    with tempfile.TemporaryDirectory() as folder, allow_model_requests():
        provider = Provider(case["name"], Path(folder))

        async def main() -> None:
            report = None
            for _ in range(case["kills"]):
                provider.fake.kill_at = len(provider.fake.calls) + case["kill_at"]
                provider.fake.kill_after_processing = case["after_processing"]
                report = await run_killed(provider, case)
                if report is not None:
                    break
            if report is None:  # killed every time: one more, untouched, run
                report = await provider.run(case["items"], case["max_batch_size"])
            check_exactly_once(provider, case["items"], report)

        anyio.run(main, backend=case["backend"])


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_a_cached_request_is_never_submitted(name: str, tmp_path: Path) -> None:
    """A second run over the same items reads every reply from the cache: nothing submitted."""
    with allow_model_requests():
        provider = Provider(name, tmp_path)
        first = await provider.run(4, 8)
        submitted = list(provider.fake.submitted)
        assert len(submitted) == 8
        second = await provider.run(4, 8)
    assert scores_of(second) == scores_of(first)
    assert provider.fake.submitted == submitted


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_duplicate_items_share_one_submitted_request(name: str, tmp_path: Path) -> None:
    """Two items asking the same question: the cache's single flight submits it once."""
    with allow_model_requests():
        provider = Provider(name, tmp_path)
        judge = provider.judge(8)
        data = [{"id": f"dup{i}", "input": "q", "output": "answer 7"} for i in range(3)]
        async with SqliteJudgeCache(provider.path) as cache:
            report = await run_evals(data, [scorer(judge)], cache=cache, concurrency=3,
                                     keep_results=True)
    assert set(scores_of(report).values()) == {0.07}
    assert len(provider.fake.submitted) == 2  # analyze and score, once each


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_a_batch_run_costs_half_the_direct_price(name: str, tmp_path: Path) -> None:
    """Through either fake, the report's cost is the batch price and saved_usd the rest."""
    pricing = Pricing.from_mapping({"judge-model": {"input": 2.0, "output": 8.0}})
    with allow_model_requests():
        provider = Provider(name, tmp_path)
        judge = provider.judge(8)
        data = [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(4)]
        report = await run_evals(data, [scorer(judge)], pricing=pricing, concurrency=4,
                                 keep_results=True)
    executions = [e for r in report.results or () for o in r.outcomes if o.result
                  for runs in o.result.judge.values() for e in runs]
    usage = [e.usage for e in executions if e.usage is not None]
    direct = sum(pricing.cost("judge-model", u) or 0.0 for u in usage)
    assert len(usage) == 8
    assert report.economics is not None
    assert report.economics.cost_usd == pytest.approx(direct / 2)
    assert report.economics.saved_usd == pytest.approx(direct / 2)


@pytest.mark.anyio
@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_a_result_file_lying_about_usage_is_charged_at_most_each_reply_s_reserve(
    name: str, tmp_path: Path
) -> None:
    """Every reply of one provider batch claims 999 million output tokens: each is a usage
    error charged at its reserve (its prompt and output cap), so a hard budget that admitted
    the batch is not passed, and no call starts after the batch came back."""
    pricing = Pricing.from_mapping({"judge-model": {"input": 2.0, "output": 8.0}})
    budget = Budget(max_cost_usd=0.2)
    with allow_model_requests():
        provider = Provider(name, tmp_path)
        provider.fake.reported_output_tokens = 999_000_000
        judge = provider.judge(8)
        data = [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(8)]
        report = await run_evals(data, [scorer(judge)], pricing=pricing, budget=budget,
                                 concurrency=8, keep_results=True)
    economics = report.economics
    assert economics is not None
    assert len(provider.fake.batches) == 1  # the analyze steps' batch; nothing after it
    assert economics.usage_errors == 8
    assert economics.spent_usd <= budget.max_cost_usd
    assert economics.budget_refused == 8  # the score steps: the overrun stopped the budget
