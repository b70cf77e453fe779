"""scorecore_adapters.strategies: what they draw is what scorecore accepts, and round-trips."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import anyio
import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from scorecore import (
    AgentInput,
    JudgeConfig,
    JudgeOutputInvalid,
    PromptStep,
    ScorerDefinitionError,
    ScoreResult,
    ScorerRun,
    create_scorer,
    from_mastra_json,
    to_mastra_json,
)
from scorecore.traces import Trace, score_trace, trace_to_agent_run
from scorecore_adapters._schema_strategies import values_for_schema
from scorecore_adapters.strategies import (
    agent_inputs,
    agent_outputs,
    judge_replies,
    malformed_replies,
    mastra_traces,
)
from scorecore_adapters.testing import ScriptedJudge, virtual_runtime

AGENT = create_scorer(id="agent", description="d", type="agent").preprocess(
    lambda ctx: (ctx.run.input, ctx.run.output)
).generate_score(lambda ctx: 1.0)


@settings(max_examples=25)
@given(agent_inputs(), agent_outputs())
def test_agent_values_round_trip_through_mastra_json(agent_input: Any, agent_output: Any) -> None:
    """A result holding the drawn input and output survives to_mastra_json → JSON text →
    from_mastra_json unchanged."""
    result = ScoreResult(run=ScorerRun(input=agent_input, output=agent_output, run_id="r"),
                         score=1.0)
    text = json.dumps(to_mastra_json(result))
    back = from_mastra_json(json.loads(text), input_type=AgentInput,
                            output_type=tuple[Any, ...])
    assert back.run.input == agent_input


@settings(max_examples=25)
@given(agent_inputs(), agent_outputs())
def test_agent_scorers_accept_the_values_and_their_json(
    agent_input: Any, agent_output: Any
) -> None:
    """A type="agent" scorer takes the drawn values as they are, and the same values as
    Mastra JSON, structuring both to equal values."""
    direct = AGENT.run_sync(input=agent_input, output=agent_output).unwrap()
    assert direct.preprocess_step_result == (agent_input, agent_output)
    as_json = to_mastra_json(ScoreResult(run=ScorerRun(input=agent_input, output=agent_output,
                                                       run_id="r"), score=1.0))
    structured = AGENT.run_sync(input=json.loads(json.dumps(as_json["input"])),
                                output=json.loads(json.dumps(as_json["output"]))).unwrap()
    assert structured.preprocess_step_result == (agent_input, agent_output)


@settings(max_examples=30)
@given(mastra_traces())
def test_traces_are_valid_agent_runs_that_round_trip(trace_json: dict[str, Any]) -> None:
    """Every drawn trace structures, survives to_mastra_json → JSON text unchanged, becomes an
    agent run with one tool invocation per tool_call span, and scores with an agent scorer."""
    trace = Trace.from_mastra_json(trace_json).unwrap()
    again = Trace.from_mastra_json(json.loads(json.dumps(trace.to_mastra_json()))).unwrap()
    assert again == trace
    agent_input, agent_output = trace_to_agent_run(trace_json).unwrap()
    tools = [s for s in trace_json["spans"] if s["spanType"] == "tool_call"]
    (answer,) = agent_output
    assert len(answer.content.tool_invocations or ()) == len(tools)
    assert isinstance(agent_input, AgentInput)
    assert score_trace_sync(trace_json).unwrap().score == 1.0


def score_trace_sync(trace_json: dict[str, Any]) -> Any:
    runtime, _ = virtual_runtime()
    return anyio.run(lambda: score_trace(AGENT, trace_json, runtime=runtime))


@attrs.frozen
class Claim:
    """One claim of the answer."""

    text: str
    supported: bool
    confidence: float
    tags: list[Literal["fact", "opinion"]] = attrs.field(factory=list)


@attrs.frozen
class Claims:
    claims: list[Claim]
    summary: str | None = None


SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
     "required": ["score"]},
    {"type": "object", "properties": {"verdict": {"enum": ["yes", "no", "partial"]},
                                      "reasons": {"type": "array", "items": {"type": "string"},
                                                  "minItems": 1, "maxItems": 3}},
     "required": ["verdict", "reasons"], "additionalProperties": False},
    {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string", "minLength": 2}],
     "items": False},
    {"anyOf": [{"type": "string", "pattern": "^[A-Z]{2}$"}, {"type": "null"}]},
    {"type": "object", "properties": {"name": {"type": "string"},
                                      "children": {"type": "array", "items": {"$ref": "#"}}},
     "required": ["name"]},
    {"$defs": {"leaf": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 5}},
     "type": "object", "properties": {"n": {"$ref": "#/$defs/leaf"}}, "required": ["n"]},
    {"const": {"ok": True}},
]


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_schema_values_satisfy_the_schema_unfiltered(schema: dict[str, Any]) -> None:
    """The schema strategy itself draws valid values for these schemas (the filter in
    judge_replies is a safety net, not the generator)."""
    validator = Draft202012Validator(schema)

    @settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
    @given(values_for_schema(schema))
    def check(value: Any) -> None:
        assert validator.is_valid(value), (value, list(validator.iter_errors(value)))

    check()


def analyze_scorer(step: PromptStep[Any, Any], replies: list[Any]) -> Any:
    judge = ScriptedJudge(replies)
    return create_scorer(
        id="claims", description="d", judge=JudgeConfig(model=judge, instructions="x"),
    ).analyze(step).generate_score(lambda ctx: 1.0)


@pytest.mark.parametrize("schema", SCHEMAS[:6], ids=range(6))
def test_valid_replies_pass_a_prompt_step_and_invalid_ones_fail_it(
    schema: dict[str, Any]
) -> None:
    """A prompt step with the schema takes every valid reply as its result; every invalid
    reply (twice: the format fallback) fails the step with JudgeOutputInvalid."""
    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_schema=schema)

    @settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
    @given(judge_replies(schema), judge_replies(schema, valid=False))
    def check(good: Any, bad: Any) -> None:
        ok = analyze_scorer(step, [good]).run_sync(input=1, output=1).unwrap()
        assert ok.analyze_step_result == json.loads(good)
        assert not Draft202012Validator(schema).is_valid(json.loads(bad))
        failed = analyze_scorer(step, [bad, bad]).run_sync(input=1, output=1).failure()
        assert isinstance(failed.cause, JudgeOutputInvalid)

    check()


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_typed_output_replies_structure_into_the_type(data: st.DataObject) -> None:
    """Given a step with an output_type, or the type itself, valid replies structure into that
    type (the step's result is a Claims) and invalid ones fail the step."""
    step = PromptStep(description="d", create_prompt=lambda ctx: "p", output_type=Claims)
    good = data.draw(judge_replies(data.draw(st.sampled_from([step, Claims]))))
    result = analyze_scorer(step, [good]).run_sync(input=1, output=1).unwrap()
    assert isinstance(result.analyze_step_result, Claims)
    assert len(result.analyze_step_result.claims) == len(json.loads(good)["claims"])
    bad = data.draw(judge_replies(step, valid=False))
    failed = analyze_scorer(step, [bad, bad]).run_sync(input=1, output=1).failure()
    assert isinstance(failed.cause, JudgeOutputInvalid)


@settings(max_examples=60)
@given(malformed_replies())
def test_malformed_replies_fail_as_unreadable(text: str) -> None:
    """Every malformed reply is one the core cannot read: the step fails with
    JudgeOutputInvalid naming a JSON (or empty-reply) problem."""
    step = PromptStep(description="d", create_prompt=lambda ctx: "p",
                      output_schema={"type": "object"})
    failed = analyze_scorer(step, [text, text]).run_sync(input=1, output=1).failure()
    assert isinstance(failed.cause, JudgeOutputInvalid)
    assert any(("JSON" in e) or ("empty" in e) for e in failed.cause.errors)


def test_judge_replies_refuses_what_has_no_schema() -> None:
    """A step without a schema (a reason step) or another object is a misuse error."""
    with pytest.raises(ScorerDefinitionError, match=r"judge_replies\(schema\) must be a JSON"):
        judge_replies(PromptStep(description="d", create_prompt=lambda ctx: "p"))
    with pytest.raises(ScorerDefinitionError,
                       match=r"judge_replies\(schema\) is not an output type .*, got 42"):
        judge_replies(42)
    with pytest.raises(ScorerDefinitionError,
                       match=r"not an output type scorecore can describe \(output_type datetime "
                             r"cannot be sent .*\), got <class 'datetime.datetime'>"):
        judge_replies(datetime)


def test_without_hypothesis_the_import_says_which_extra(tmp_path: Path) -> None:
    """Without hypothesis installed, importing the module names the extra to install."""
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "import scorecore_adapters.strategies\n")
    done = subprocess.run(  # noqa: S603 - this interpreter, our own code
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert done.returncode == 1
    assert ("ImportError: scorecore_adapters.strategies needs hypothesis: "
            "pip install 'scorecore[testing]'") in done.stderr
