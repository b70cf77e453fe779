"""Checked by ``mypy --strict``, never executed: the types of cascades and confidence."""

from __future__ import annotations

from typing import assert_type

from scorecore import AgentInput, AgentOutput, ScorePromptStep, Scorer, create_scorer
from scorecore.scorers import CascadeResult, cascade

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
