"""Whole scorers against a real loopback HTTP server, with retries in virtual time."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from scorecore import (
    JudgeConfig,
    JudgeFailed,
    JudgeModel,
    PromptStep,
    Runtime,
    ScorePromptStep,
    create_scorer,
)
from scorecore_adapters import allow_model_requests
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import OpenAIChatModel
from scorecore_adapters.retry import StreamErrorRetryProcessor
from scorecore_adapters.testing import VirtualClock
from tests.adapters.http.loopback import Drop, Error, LoopbackServer, Reply, serve

CLAIMS = {
    "type": "object",
    "properties": {
        "claims": {"type": "array", "items": {"type": "string"}},
        "note": {"type": "string"},
    },
    "required": ["claims"],
}


def _model(kind: str, server: LoopbackServer, client: httpx.AsyncClient) -> JudgeModel:
    if kind == "openai":
        return OpenAIChatModel(
            "gpt-4o", base_url=server.url + "/v1", api_key="sk-test", client=client
        )
    return AnthropicModel("claude-test", base_url=server.url, api_key="ak-test", client=client)


def _scorer(model: JudgeModel, *, retries: int) -> Any:
    return (
        create_scorer(
            id="quality",
            description="claims, score, reason",
            judge=JudgeConfig(
                model=model,
                instructions="Be strict.",
                error_processors=[StreamErrorRetryProcessor(max_retries=retries)],
                max_processor_retries=retries,
            ),
        )
        .analyze(
            PromptStep(
                description="claims",
                output_schema=CLAIMS,
                create_prompt=lambda ctx: f"claims in {ctx.run.output}",
            )
        )
        .generate_score(ScorePromptStep(description="score", create_prompt=lambda ctx: "score it"))
        .generate_reason(
            PromptStep(description="why", create_prompt=lambda ctx: f"why {ctx.score}")
        )
    )


async def _scored(kind: str, server: LoopbackServer, *, retries: int) -> tuple[Any, VirtualClock]:
    """The scorer's run on ``kind``'s model served by ``server``, and the virtual clock it
    waited on."""
    async with httpx.AsyncClient() as client:
        scorer = _scorer(_model(kind, server, client), retries=retries)
        clock = VirtualClock()
        result = await scorer.run(
            input="q", output="a", runtime=Runtime(clock=clock, sleep=clock.sleep)
        )
    return result, clock


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_retries_429_and_reset_then_scores(kind: str) -> None:
    """A 429 with Retry-After and a dropped connection are retried; waits follow the header."""
    with serve() as server, allow_model_requests():
        server.enqueue(
            Error(429, headers={"retry-after": "2"}),
            Drop(),
            Reply({"claims": ["x"], "note": None}),
            Reply({"score": 0.5}),
            Reply("because it is half right"),
        )
        result, clock = await _scored(kind, server, retries=3)
        outcome = result.unwrap()
        assert outcome.score == 0.5
        assert outcome.reason == "because it is half right"
        assert outcome.analyze_step_result == {"claims": ["x"]}
        assert tuple(clock.sleeps) == (2.0, 0.0)
        assert outcome.judge["analyze"][0].model_call_count == 3
        assert len(server.requests) == 5


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_503_forever_stops_at_the_budget(kind: str) -> None:
    """With a budget of 2, a server that keeps failing gets exactly 3 calls, then a Failure."""
    with serve() as server, allow_model_requests():
        server.enqueue(*[Error(503) for _ in range(5)])
        result, _ = await _scored(kind, server, retries=2)
        error = result.failure()
        assert error.failed_step == "analyze"
        assert isinstance(error.cause, JudgeFailed)
        assert error.cause.model_calls == 3
        assert error.cause.error.status == 503
        assert len(server.requests) == 3
        assert "sk-test" not in str(error)
        assert "ak-test" not in repr(error.partial)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_auth_error_is_not_retried(kind: str) -> None:
    """A 401 fails after one call even with a retry processor."""
    with serve() as server, allow_model_requests():
        server.enqueue(Error(401), Reply({"claims": []}))
        result, _ = await _scored(kind, server, retries=5)
        error = result.failure()
        assert isinstance(error.cause, JudgeFailed)
        assert error.cause.error.kind == "auth"
        assert error.cause.stop_reason == "not_retryable"
        assert len(server.requests) == 1
