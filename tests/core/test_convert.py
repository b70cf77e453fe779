"""Tests of the converter: round-trips of every value and Mastra's camelCase JSON shape."""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import given
from hypothesis import strategies as st

from scorecore import (
    AgentInput,
    AgentOutput,
    JudgeConfig,
    JudgeError,
    JudgeExecution,
    PromptStep,
    RunFailureCause,
    ScorePromptStep,
    ScoreResult,
    ScorerRun,
    converter,
    create_scorer,
    from_mastra_json,
    not_scorable,
    to_mastra_json,
)
from scorecore_adapters.testing import ScriptedJudge, virtual_runtime
from tests import strategies as sts


def roundtrip(value: Any, cls: Any) -> Any:
    return converter.structure(converter.unstructure(value, cls), cls)


@given(sts.scorer_runs())
def test_scorer_run_roundtrips(run: ScorerRun[Any, Any]) -> None:
    """A run survives unstructure → structure unchanged."""
    assert roundtrip(run, ScorerRun[Any, Any]) == run


@given(sts.agent_inputs)
def test_agent_input_roundtrips(value: AgentInput) -> None:
    """Agent input with every kind of message part (generic ones included) round-trips."""
    assert roundtrip(value, AgentInput) == value


@given(sts.agent_outputs)
def test_agent_output_roundtrips(value: AgentOutput) -> None:
    """Agent output messages round-trip."""
    assert roundtrip(value, AgentOutput) == value


@given(sts.generic_parts)
def test_generic_part_is_flat_in_json(part: Any) -> None:
    """A generic part unstructures to Mastra's flat ``{"type": ..., **data}`` shape."""
    assert converter.unstructure(part) == {"type": part.type, **part.data}


@given(sts.judge_errors)
def test_judge_error_chains_roundtrip(error: JudgeError) -> None:
    """A judge error and its whole cause chain round-trip."""
    back = roundtrip(error, JudgeError)
    assert back == error
    assert len(back.chain()) == len(error.chain())


@given(sts.run_failure_causes)
def test_every_cause_roundtrips_tagged(cause: RunFailureCause) -> None:
    """Every failure cause round-trips through the tagged union, its tag naming the class."""
    data = converter.unstructure(cause, RunFailureCause)
    assert data["cause"] == type(cause).__name__
    assert converter.structure(data, RunFailureCause) == cause


@given(sts.judge_executions())
def test_judge_execution_roundtrips(execution: JudgeExecution) -> None:
    """A judge execution, with each error cause, round-trips through the converter."""
    assert roundtrip(execution, JudgeExecution) == execution


@given(sts.score_results())
def test_score_result_roundtrips_through_converter(result: ScoreResult[Any, Any]) -> None:
    """A whole result round-trips through ``converter.unstructure``/``structure``."""
    assert roundtrip(result, ScoreResult[Any, Any]) == result


@given(sts.score_results())
def test_score_result_roundtrips_through_mastra_json(result: ScoreResult[Any, Any]) -> None:
    """A whole result round-trips through ``to_mastra_json``/``from_mastra_json``, via JSON text."""
    data = json.loads(json.dumps(to_mastra_json(result)))
    assert from_mastra_json(data) == result


@given(sts.score_results(inputs=sts.agent_inputs, outputs=sts.agent_outputs))
def test_agent_result_roundtrips_through_mastra_json(result: ScoreResult[Any, Any]) -> None:
    """Agent-typed results come back typed when the types are given."""
    data = json.loads(json.dumps(to_mastra_json(result)))
    back = from_mastra_json(data, input_type=AgentInput, output_type=AgentOutput)
    assert back == result


@given(sts.score_results())
def test_mastra_json_key_order(result: ScoreResult[Any, Any]) -> None:
    """Run keys come first, then score or notScorable, prompts, step results, and judge last."""
    keys = list(to_mastra_json(result))
    assert keys[:3] == ["input", "output", "runId"]
    tail = ["generateScorePrompt", "reason", "generateReasonPrompt", "preprocessStepResult",
            "preprocessPrompt", "analyzeStepResult", "analyzePrompt"]
    if result.judge:
        tail.append("judge")
    assert keys[-len(tail):] == tail
    marker = "score" if result.not_scorable is None else "notScorable"
    assert keys[-len(tail) - 1] == marker
    assert ("score" in keys) != ("notScorable" in keys)
    for key in result.run.extra:
        assert key in keys[3 : -len(tail) - 1]


def test_function_only_result_has_mastras_keys() -> None:
    """A four-function-step run gives exactly the keys of the reference's golden observation."""
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: "P")
        .analyze(lambda ctx: {"a": 1})
        .generate_score(lambda ctx: 0.5)
        .generate_reason(lambda ctx: "why")
    )
    result = anyio.run(lambda: scorer.run(input="in", output="out", run_id="rid")).unwrap()
    assert list(to_mastra_json(result)) == [
        "input", "output", "runId", "score", "generateScorePrompt", "reason",
        "generateReasonPrompt", "preprocessStepResult", "preprocessPrompt", "analyzeStepResult",
        "analyzePrompt",
    ]


def test_prompt_steps_result_matches_mastras_golden_shape() -> None:
    """Prompt steps give ``judge.<camelStep>.executions`` with Mastra's execution keys."""
    judge = ScriptedJudge([{"summary": "S"}, {"score": 0.7}, "Because reasons."],
                          model_id="mock-model-id", provider="mock-provider")
    scorer = (
        create_scorer(id="s", description="d",
                      judge=JudgeConfig(model=judge, instructions="You are a strict judge."))
        .analyze(PromptStep(
            description="a", create_prompt=lambda ctx: f"Analyze: {ctx.run.output}",
            output_schema={"type": "object", "properties": {"summary": {"type": "string"}},
                           "required": ["summary"]},
        ))
        .generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "Score it"))
        .generate_reason(PromptStep(description="r",
                                    create_prompt=lambda ctx: f"Explain score {ctx.score}"))
    )
    runtime, _ = virtual_runtime()
    result = anyio.run(lambda: scorer.run(input="q", output="answer", runtime=runtime)).unwrap()
    data = to_mastra_json(result)
    assert data["runId"] == "run-1"
    assert data["score"] == 0.7
    assert data["reason"] == "Because reasons."
    assert data["analyzeStepResult"] == {"summary": "S"}
    assert data["analyzePrompt"] == "Analyze: answer"
    assert data["generateReasonPrompt"] == "Explain score 0.7"
    assert list(data["judge"]) == ["analyze", "generateScore", "generateReason"]
    analyze = data["judge"]["analyze"]["executions"]
    assert len(analyze) == 1
    assert {k: analyze[0][k] for k in ("status", "prompt", "output", "judgeModelId",
                                       "judgeProvider", "attemptCount", "modelCallCount")} == {
        "status": "success", "prompt": "Analyze: answer", "output": {"summary": "S"},
        "judgeModelId": "mock-model-id", "judgeProvider": "mock-provider",
        "attemptCount": 1, "modelCallCount": 1,
    }
    assert isinstance(analyze[0]["durationMs"], int)
    assert data["judge"]["generateScore"]["executions"][0]["output"] == 0.7
    assert data["judge"]["generateReason"]["executions"][0]["output"] == "Because reasons."


@given(st.sampled_from(sts.STEPS), st.none() | sts.text)
def test_not_scorable_json_uses_camel_step(step: str, reason: str | None) -> None:
    """``notScorable`` names the step in camelCase and keeps the reason; there is no score key."""
    steps: dict[str, Any] = {
        s: (lambda ctx: 0.5) if s == "generate_score" else (lambda ctx: "x")
        for s in sts.STEPS
    }
    steps[step] = lambda ctx: not_scorable(reason)
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(steps["preprocess"]).analyze(steps["analyze"])
        .generate_score(steps["generate_score"]).generate_reason(steps["generate_reason"])
    )
    result = anyio.run(lambda: scorer.run(input=1, output=2, run_id="r")).unwrap()
    data = to_mastra_json(result)
    camel = {"preprocess": "preprocess", "analyze": "analyze",
             "generate_score": "generateScore", "generate_reason": "generateReason"}[step]
    expected = {"step": camel} if reason is None else {"step": camel, "reason": reason}
    assert data["notScorable"] == expected
    assert "score" not in data
    assert from_mastra_json(data) == result
