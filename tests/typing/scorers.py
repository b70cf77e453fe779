"""Checked by ``mypy --strict``, never executed: the types of the built-in scorers."""

from __future__ import annotations

from typing import Any, assert_type

from scorecore import AgentInput, AgentOutput, JudgeConfig, Scorer
from scorecore.agent import Trajectory, TrajectoryExpectation
from scorecore.scorers import (
    AGENT,
    TEXT,
    RubricCriterion,
    RunShape,
    TrajectoryWeights,
    answer_relevancy,
    answer_similarity,
    bias,
    checks,
    completeness,
    content_similarity,
    context_precision,
    context_recall,
    context_relevance,
    faithfulness,
    hallucination,
    keyword_coverage,
    llm_tool_call_accuracy,
    llm_trajectory_accuracy,
    multi_turn_judge,
    noise_sensitivity,
    pairwise,
    prompt_alignment,
    rubric,
    summarization,
    textual_difference,
    tone,
    tool_call_accuracy,
    toxicity,
    trajectory,
    trajectory_accuracy,
)
from scorecore_adapters.testing import ScriptedJudge

# --- agent runs by default, plain strings with shape=TEXT (a typed token, no overloads) -------

assert_type(completeness(), Scorer[AgentInput, AgentOutput])
assert_type(completeness(shape=TEXT), Scorer[str, str])
assert_type(content_similarity(ignore_case=False), Scorer[AgentInput, AgentOutput])
assert_type(content_similarity(shape=TEXT), Scorer[str, str])
assert_type(textual_difference(), Scorer[AgentInput, AgentOutput])
assert_type(textual_difference(shape=TEXT), Scorer[str, str])
assert_type(keyword_coverage(shape=AGENT), Scorer[AgentInput, AgentOutput])
assert_type(keyword_coverage(shape=TEXT), Scorer[str, str])
assert_type(tone(reference_tone="calm"), Scorer[AgentInput, AgentOutput])
assert_type(tone(shape=TEXT), Scorer[str, str])
assert_type(tool_call_accuracy(expected_tool="search"), Scorer[AgentInput, AgentOutput])

assert_type(checks.includes("x"), Scorer[AgentInput, AgentOutput])
assert_type(checks.includes("x", shape=TEXT), Scorer[str, str])
assert_type(checks.excludes("x", shape=TEXT), Scorer[str, str])
assert_type(checks.equals("x", shape=TEXT), Scorer[str, str])
assert_type(checks.matches(r"\d+", exact=True, shape=TEXT), Scorer[str, str])
assert_type(checks.similarity("x", threshold=0.5, shape=TEXT), Scorer[str, str])
assert_type(checks.called_tool("search", times=2), Scorer[AgentInput, AgentOutput])
assert_type(checks.did_not_call("delete"), Scorer[AgentInput, AgentOutput])
assert_type(checks.tool_order(["a", "b"]), Scorer[AgentInput, AgentOutput])
assert_type(checks.max_tool_calls(3), Scorer[AgentInput, AgentOutput])
assert_type(checks.used_no_tools(), Scorer[AgentInput, AgentOutput])
assert_type(checks.no_tool_errors(), Scorer[AgentInput, AgentOutput])

# --- LLM-judged: a judge model or a JudgeConfig, agent runs ----------------------------------

judge = ScriptedJudge([])
config = JudgeConfig(model=judge, instructions="x")
assert_type(answer_relevancy(judge), Scorer[AgentInput, AgentOutput])
assert_type(answer_relevancy(config, uncertainty_weight=0.5, scale=10),
            Scorer[AgentInput, AgentOutput])
assert_type(faithfulness(judge, context=["c"]), Scorer[AgentInput, AgentOutput])
assert_type(hallucination(judge, get_context=lambda ctx: ["c"]), Scorer[AgentInput, AgentOutput])
assert_type(bias(judge), Scorer[AgentInput, AgentOutput])
assert_type(toxicity(judge, scale=2), Scorer[AgentInput, AgentOutput])
assert_type(answer_similarity(judge, contradiction_penalty=0.3), Scorer[AgentInput, AgentOutput])
assert_type(context_precision(judge, context_extractor=lambda i, o: [o[0].text()]),
            Scorer[AgentInput, AgentOutput])
assert_type(context_recall(judge, context=["c"]), Scorer[AgentInput, AgentOutput])
assert_type(context_relevance(judge, context=["c"]), Scorer[AgentInput, AgentOutput])
assert_type(noise_sensitivity(judge, baseline_response="a", noisy_query="q"),
            Scorer[AgentInput, AgentOutput])
assert_type(prompt_alignment(judge, evaluation_mode="system"), Scorer[AgentInput, AgentOutput])
assert_type(llm_tool_call_accuracy(judge, available_tools={"a": "b"}),
            Scorer[AgentInput, AgentOutput])
assert_type(multi_turn_judge(judge, criterion="polite"), Scorer[AgentInput, AgentOutput])
assert_type(rubric(judge, criteria=[RubricCriterion(description="d"), "e"]),
            Scorer[AgentInput, AgentOutput])
assert_type(summarization(judge, source_extractor=lambda i, o: "s"),
            Scorer[AgentInput, AgentOutput])

# --- the shape is a typed token: shape=TEXT types the scorer, no overloads -------------------

assert_type(faithfulness(judge, context=["c"], shape=TEXT), Scorer[str, str])
assert_type(faithfulness(judge, context=["c"], shape=AGENT), Scorer[AgentInput, AgentOutput])
assert_type(answer_relevancy(judge, shape=TEXT), Scorer[str, str])
assert_type(answer_similarity(judge, shape=TEXT), Scorer[str, str])
assert_type(context_precision(judge, context=["c"], shape=TEXT), Scorer[str, str])
assert_type(context_recall(judge, context=["c"], shape=TEXT), Scorer[str, str])
assert_type(context_relevance(judge, context=["c"], shape=TEXT), Scorer[str, str])
assert_type(hallucination(judge, context=["c"], shape=TEXT), Scorer[str, str])
assert_type(noise_sensitivity(judge, baseline_response="a", noisy_query="q", shape=TEXT),
            Scorer[str, str])
assert_type(prompt_alignment(judge, shape=TEXT), Scorer[str, str])
assert_type(multi_turn_judge(judge, criterion="polite", shape=TEXT), Scorer[str, str])
assert_type(rubric(judge, criteria="- x", shape=TEXT), Scorer[str, str])
assert_type(summarization(judge, shape=TEXT), Scorer[str, str])
assert_type(pairwise(judge, criteria="c", shape=TEXT), Scorer[str, str])
assert_type(pairwise(judge, criteria="c"), Scorer[AgentInput, AgentOutput])
llm_text_scorers: list[Scorer[str, str]] = [bias(judge, shape=TEXT), toxicity(judge, shape=TEXT)]
assert_type(TEXT, RunShape[str, str])
assert_type(AGENT, RunShape[AgentInput, AgentOutput])


def with_shape(shape: RunShape[str, str]) -> Scorer[str, str]:
    """A function generic in nothing: the token's type flows through a variable."""
    return bias(judge, shape=shape)


# The removed spelling type="agent" | "text" is refused: shape= is the one way to say it.
faithfulness(judge, context=["c"], type="text")  # type: ignore[call-arg]
completeness(type="text")  # type: ignore[call-arg]

# A shape=TEXT scorer is a Scorer[str, str]: a run of another type is an error, and so is
# keeping it where a scorer of other runs is expected.
keyword_coverage(shape=TEXT).run_sync(input="q", output=3)  # type: ignore[arg-type]
keyword_coverage(shape=TEXT).run_sync(input=3, output="a")  # type: ignore[arg-type]
keyword_coverage(shape=TEXT).run_sync(input="q", output=["a"])  # type: ignore[list-item]
bias(judge, shape=TEXT).run_sync(input="q", output=("a", "b"))  # type: ignore[arg-type]
faithfulness(judge, context=["c"], shape=TEXT).run_sync(
    input="q", output=3.5)  # type: ignore[arg-type]
numbers_scorer: Scorer[int, str] = keyword_coverage(shape=TEXT)  # type: ignore[arg-type]
bytes_scorer: Scorer[str, bytes] = bias(judge, shape=TEXT)  # type: ignore[arg-type]

# --- trajectories: the output is a Trajectory ---------------------------------------------------

assert_type(llm_trajectory_accuracy(judge), Scorer[AgentInput, Trajectory])
assert_type(trajectory_accuracy(["a", "b"], ordering="strict"), Scorer[AgentInput, Trajectory])
assert_type(trajectory(TrajectoryExpectation(max_steps=3), weights=TrajectoryWeights()),
            Scorer[AgentInput, Trajectory])
trajectory_scorers: list[Scorer[AgentInput, Trajectory]] = [trajectory(), trajectory_accuracy()]


async def run_trajectory() -> float | None:
    result = await trajectory_accuracy(["a"]).run(input={}, output=Trajectory())
    return result.unwrap().score


# --- assignable where users keep scorers -------------------------------------------------------

text_scorers: list[Scorer[str, str]] = [completeness(shape=TEXT), keyword_coverage(shape=TEXT)]
agent_scorers: list[Scorer[AgentInput, AgentOutput]] = [
    completeness(), tone(), checks.no_tool_errors(), tool_call_accuracy(expected_tool="x"),
]
any_scorers: list[Scorer[Any, Any]] = [completeness(), checks.includes("x", shape=TEXT)]


async def run_text() -> float | None:
    result = await textual_difference(shape=TEXT).run(input="kitten", output="sitting")
    return result.unwrap().score


# --- rejected: the wrong shape, the wrong options ----------------------------------------------

# (With no shape argument an annotation picks the type parameters; see on_trajectory below.)
wrong_shape: Scorer[str, str] = completeness(shape=AGENT)  # type: ignore[arg-type]
tool_scorer_on_text: Scorer[str, str] = checks.called_tool("x")  # type: ignore[assignment]
tone(type="json")  # type: ignore[call-arg]
checks.includes(3)  # type: ignore[arg-type]
checks.matches(b"x")  # type: ignore[arg-type]
checks.tool_order("search", id=1)  # type: ignore[arg-type]
tool_call_accuracy(expected_tool=["a"])  # type: ignore[arg-type]
faithfulness("gpt-4o")  # type: ignore[arg-type]
prompt_alignment(judge, evaluation_mode="all")  # type: ignore[arg-type]
bias(judge, type="json")  # type: ignore[call-arg]
bias(judge, shape="text")  # type: ignore[arg-type]
text_scorer_typed_as_agent: Scorer[AgentInput, AgentOutput] = bias(
    judge, shape=TEXT)  # type: ignore[arg-type]
trajectory_accuracy(["a"], ordering="sorted")  # type: ignore[arg-type]
noise_sensitivity(judge)  # type: ignore[call-arg]
on_messages: Scorer[AgentInput, AgentOutput] = trajectory()  # type: ignore[assignment]
# With no shape argument, an annotation picks the type parameters (PEP 696 defaults apply only
# to parameters nothing solves), so the rejection is checked with the token spelled out.
on_trajectory: Scorer[AgentInput, Trajectory] = bias(judge, shape=AGENT)  # type: ignore[arg-type]
llm_tool_call_accuracy(judge, available_tools={}, type="text")  # type: ignore[call-arg]


async def run_wrong_output() -> None:
    await content_similarity(shape=TEXT).run(input="a", output=42)  # type: ignore[arg-type]
