"""Judged scorers, a step-counting judge and items shared by the economics tests."""

from __future__ import annotations

from collections import Counter
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from scorecore import (
    JudgeConfig,
    ModelSettings,
    PromptStep,
    ScorePromptStep,
    Scorer,
    create_scorer,
)
from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse, JudgeUsage

ANALYZE_SCHEMA = {
    "type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["claims"],
}


@attrs.define(eq=False)
class StepJudge:
    """Answers by step (analyze → claims, score → a score, reason → text) and counts calls.

    ``usage`` gives every reply that token usage; ``fail`` maps a step to an error or to
    ``"invalid"`` (a reply that fails the schema); ``pause`` is awaited before answering.
    """

    model_id: str = "step-judge"
    provider: str = "test"
    supports_structured_output: bool = False
    usage: JudgeUsage = attrs.field(factory=lambda: JudgeUsage(input_tokens=100,
                                                                output_tokens=10))
    fail: dict[str, Any] = attrs.field(factory=dict)
    pause: Any = None
    calls: Counter[str] = attrs.field(factory=Counter)
    requests: list[JudgeRequest] = attrs.field(factory=list)

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        self.calls[request.step] += 1
        self.requests.append(request)
        if self.pause is not None:
            await self.pause()
        failure = self.fail.get(request.step)
        if isinstance(failure, JudgeError):
            return Failure(failure)
        prompt = request.messages[-1].content
        if failure == "invalid":
            text = "not json"
        elif request.step == "analyze":
            text = '{"claims": ["c1"]}'
        elif request.step == "generate_score":
            text = '{"score": 0.75}'
        else:
            text = f"because {prompt[:20]}"
        return Success(JudgeResponse(text=text, usage=self.usage, model_id=self.model_id))


def judged_scorer(
    judge: Any,
    *,
    reason_prompt: str = "Explain the score {score} of {output}.",
    scorer_id: str = "judged",
) -> Scorer[Any, Any, Any, Any]:
    """analyze (judge) → generate_score (judge) → generate_reason (judge)."""
    return (
        create_scorer(
            id=scorer_id, description="A fully judged scorer",
            judge=JudgeConfig(model=judge, instructions="You are a careful grader."),
        )
        .analyze(PromptStep(description="claims", output_schema=ANALYZE_SCHEMA,
                            create_prompt=lambda ctx: f"Claims in: {ctx.run.output}"))
        .generate_score(ScorePromptStep(description="score",
                                        create_prompt=lambda ctx: f"Score: {ctx.run.output}"))
        .generate_reason(PromptStep(
            description="reason",
            create_prompt=lambda ctx: reason_prompt.format(score=ctx.score,
                                                           output=ctx.run.output),
        ))
    )


def output_graded(model: Any, settings: ModelSettings | None = None) -> Scorer[Any, Any]:
    """A scorer of one judged step: ``model`` grades the run's output (``{"score": …}``)."""
    return create_scorer(id="s", description="d", judge=JudgeConfig(
        model=model, instructions="Grade.", model_settings=settings,
    )).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: str(c.run.output)))


def numbered_items(n: int) -> list[dict[str, Any]]:
    """``n`` items: ids ``q0``, ``q1``, …, input ``"q"``, outputs ``a0``, ``a1``, …"""
    return [{"id": f"q{i}", "input": "q", "output": f"a{i}"} for i in range(n)]
