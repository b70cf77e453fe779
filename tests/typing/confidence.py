"""Checked by ``mypy --strict``, never executed: the types of cascades and confidence."""

from __future__ import annotations

from typing import assert_type

from scorecore import AgentInput, AgentOutput, ScorePromptStep, Scorer, create_scorer
from scorecore.scorers import (
    TEXT,
    CascadeResult,
    bias,
    cascade,
    context_precision,
    faithfulness,
)
from scorecore_adapters.testing import ScriptedJudge

agent_tier: Scorer[AgentInput, AgentOutput] = create_scorer(
    id="cheap", description="d", type="agent").generate_score(lambda ctx: 1.0)
other_agent_tier: Scorer[AgentInput, AgentOutput] = create_scorer(
    id="strong", description="d", type="agent").generate_score(lambda ctx: 1.0)
text_tier: Scorer[str, str] = create_scorer(
    id="text", description="d", input_type=str, output_type=str).generate_score(lambda ctx: 1.0)

# --- a cascade of Scorer[AgentInput, AgentOutput] tiers is one ----------------------------------
assert_type(cascade(agent_tier, other_agent_tier), Scorer[AgentInput, AgentOutput])
assert_type(cascade(text_tier, min_confidence=0.9), Scorer[str, str])

# --- tiers of different run types are refused ---------------------------------------------------
cascade(agent_tier, text_tier)  # type: ignore[misc]
cascade(text_tier, min_confidence="high")  # type: ignore[arg-type]


async def read(scorer: Scorer[str, str]) -> None:
    result = (await scorer.run(input="q", output="a")).unwrap()
    assert_type(result.confidence, float | None)
    details = result.details_as(CascadeResult)
    assert_type(details, CascadeResult | None)
    if details is not None:
        assert_type(details.tier, int | None)


ScorePromptStep(description="d", create_prompt=lambda ctx: "p", score_from="reply", samples=3)
ScorePromptStep(description="d", create_prompt=lambda ctx: "p",
                score_from="logits")  # type: ignore[arg-type]
ScorePromptStep(description="d", create_prompt=lambda ctx: "p", score_from="probabilities",
                verdicts={"yes": 1.0, "no": 0.0}, verdict_key="verdict", fallback_samples=3)

# --- the statement scorers take the same options, typed -----------------------------------------
judge = ScriptedJudge([])
assert_type(faithfulness(judge, context=["c"], score_from="probabilities"),
            Scorer[AgentInput, AgentOutput])
assert_type(bias(judge, shape=TEXT, samples=3), Scorer[str, str])
faithfulness(judge, score_from="logits")  # type: ignore[arg-type]
faithfulness(judge, samples="3")  # type: ignore[arg-type]
context_precision(judge, context=["c"], samples=3)
context_precision(judge, context=["c"], score_from="probabilities")  # type: ignore[call-arg]
