"""Checked by ``mypy --strict``, never executed: the types users rely on."""

from __future__ import annotations

from typing import Any, assert_type

import attrs
from returns.result import Result

from scorecore import (
    AgentInput,
    AgentOutput,
    JudgeConfig,
    NotScorable,
    PromptStep,
    ReasonContext,
    ScorePromptStep,
    Scorer,
    ScorerBuilder,
    ScoreResult,
    ScorerRunError,
    StepContext,
    create_scorer,
    filter_run,
    not_scorable,
)
from scorecore.agent import AgentMessage, create_agent_test_run, create_test_message
from scorecore.judge import WorkedExample
from scorecore_adapters.testing import ScriptedJudge


@attrs.frozen
class CustomInput:
    question: str


@attrs.frozen
class CustomOutput:
    answer: str


# --- ctx.run.input is AgentInput for type="agent", CustomInput for input_type=CustomInput -----

agent_builder = create_scorer(id="a", description="d", type="agent")
assert_type(agent_builder, ScorerBuilder[AgentInput, AgentOutput, None, None])


def agent_score(ctx: StepContext[AgentInput, AgentOutput, None, None]) -> float:
    assert_type(ctx.run.input, AgentInput)
    assert_type(ctx.run.output, AgentOutput)
    return float(len(ctx.run.input.input_messages))


agent_scorer = agent_builder.generate_score(agent_score)
assert_type(agent_scorer, Scorer[AgentInput, AgentOutput, None, None])

custom = create_scorer(id="c", description="d", input_type=CustomInput, output_type=CustomOutput)
assert_type(custom, ScorerBuilder[CustomInput, CustomOutput, None, None])
only_in = create_scorer(id="c", description="d", input_type=CustomInput)
assert_type(only_in, ScorerBuilder[CustomInput, Any, None, None])
untyped = create_scorer(id="u", description="d")
assert_type(untyped, ScorerBuilder[Any, Any, None, None])

# --- preprocess results flow into later steps' contexts ------------------------------------------

with_pre = custom.preprocess(lambda ctx: len(ctx.run.input.question))
assert_type(with_pre, ScorerBuilder[CustomInput, CustomOutput, int, None])


async def analyze_async(ctx: StepContext[CustomInput, CustomOutput, int, None]) -> list[str]:
    assert_type(ctx.results.preprocess_step_result, int)
    return [ctx.run.output.answer] * ctx.results.preprocess_step_result


with_analyze = with_pre.analyze(analyze_async)
assert_type(with_analyze, ScorerBuilder[CustomInput, CustomOutput, int, list[str]])

# a lambda analyze sees the preprocess result type too: `+ 1` only type-checks on an int
with_lambda = with_pre.analyze(lambda ctx: ctx.results.preprocess_step_result + 1)
assert_type(with_lambda, ScorerBuilder[CustomInput, CustomOutput, int, int])
with_pre.analyze(
    lambda ctx: ctx.results.preprocess_step_result.upper()  # type: ignore[attr-defined]
)


def maybe_skip(
    ctx: StepContext[CustomInput, CustomOutput, None, None],
) -> dict[str, int] | NotScorable:
    return not_scorable("empty") if not ctx.run.input.question else {"n": 1}


# NotScorable is stripped from the result type seen by later steps
assert_type(
    custom.preprocess(maybe_skip), ScorerBuilder[CustomInput, CustomOutput, dict[str, int], None]
)

# --- a complete scorer is assignable to Scorer[In, Out] -----------------------------------------

complete = with_analyze.generate_score(lambda ctx: len(ctx.results.analyze_step_result) / 10)
annotated: Scorer[CustomInput, CustomOutput] = complete


def reason(ctx: ReasonContext[CustomInput, CustomOutput, int, list[str]]) -> str:
    assert_type(ctx.score, float)
    return f"{ctx.score}"


with_reason = complete.generate_reason(reason)
assert_type(with_reason, Scorer[CustomInput, CustomOutput, int, list[str]])


async def step_results_keep_their_types() -> None:
    outcome = (await with_reason.run(input=CustomInput(question="q"), output={"answer": "a"}))
    assert_type(outcome.unwrap().preprocess_step_result, int | None)
    assert_type(outcome.unwrap().analyze_step_result, list[str] | None)


async def use(scorer: Scorer[CustomInput, CustomOutput]) -> None:
    result = await scorer.run(input=CustomInput(question="q"), output={"answer": "a"})
    assert_type(result, Result[ScoreResult[CustomInput, CustomOutput], ScorerRunError])
    assert_type(result.unwrap().run.input, CustomInput)
    assert_type(result.unwrap().score, float | None)


# --- rejections ---------------------------------------------------------------------------------

untyped.generate_score(lambda ctx: "high")  # type: ignore[arg-type, return-value]


def str_score(ctx: StepContext[Any, Any, None, None]) -> str:
    return "high"


untyped.generate_score(str_score)  # type: ignore[arg-type]


async def no_score_step() -> None:
    await untyped.preprocess(lambda ctx: 1).run(input="q", output="a")  # type: ignore[attr-defined]


async def misspelt_argument(scorer: Scorer[CustomInput, CustomOutput]) -> None:
    # an unknown keyword is rejected; the run's other keys go in ``extra``
    await scorer.run(input=CustomInput(question="q"), output={"answer": "a"},
                     grund_truth="g")  # type: ignore[call-arg]
    scorer.run_sync(input=CustomInput(question="q"), output={"answer": "a"},
                    grund_truth="g")  # type: ignore[call-arg]
    await scorer.run(input=CustomInput(question="q"), output={"answer": "a"},
                     extra={"source": "ci"})
    await scorer.run(input=CustomInput(question="q"), output={"answer": "a"},
                     extra=["source"])  # type: ignore[arg-type]


def int_reason(ctx: ReasonContext[Any, Any, None, None]) -> int:
    return 1


untyped.generate_score(lambda ctx: 1.0).generate_reason(int_reason)  # type: ignore[arg-type]

# --- prompt steps ---------------------------------------------------------------------------------

judge = JudgeConfig(model=ScriptedJudge([{"score": 0.5}]), instructions="Be strict.")
prompted = (
    create_scorer(id="p", description="d", judge=judge)
    .analyze(
        PromptStep(description="a", create_prompt=lambda ctx: "x", output_schema={"type": "object"})
    )
    .generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "rate"))
)
assert_type(prompted, Scorer[Any, Any, None, Any])
create_scorer(id="p", description="d", prepare_run=filter_run(drop_ground_truth=True))

# --- prompt steps built inline are checked against the step's context --------------------------

SCHEMA = {"type": "object"}
typed_judge = create_scorer(id="tj", description="d", judge=judge, input_type=CustomInput)
typed_judge.analyze(
    PromptStep(
        description="a", output_schema=SCHEMA, create_prompt=lambda ctx: ctx.run.input.question
    )
)
typed_judge.analyze(
    PromptStep(
        description="a",
        output_schema=SCHEMA,
        create_prompt=lambda ctx: ctx.run.input.qestion,  # type: ignore[attr-defined]
    )
)
typed_judge.generate_score(
    ScorePromptStep(
        description="s",
        create_prompt=lambda ctx: ctx.run.input.question,
        calculate_score=lambda ctx: float(ctx.judge_output["n"]),
    )
).generate_reason(PromptStep(description="r", create_prompt=lambda ctx: f"{ctx.score:.2f}"))
typed_judge.generate_score(
    ScorePromptStep(
        description="s",
        create_prompt=lambda ctx: "rate",
        calculate_score=lambda ctx: ctx.judge_outpt,  # type: ignore[attr-defined]
    )
)


def typed_prompt(ctx: StepContext[CustomInput, Any, None, None]) -> str:
    return ctx.run.input.question


def other_prompt(ctx: StepContext[CustomOutput, Any, None, None]) -> str:
    return ctx.run.input.answer


typed_judge.preprocess(
    PromptStep(description="p", output_schema=SCHEMA, create_prompt=typed_prompt)
)

# --- a worked example is declared as a WorkedExample, never as text ----------------------------

shown = WorkedExample(text="Example: the sky is green.", statements=("the sky is green",))
typed_judge.analyze(PromptStep(description="a", output_schema=SCHEMA, example=shown,
                               create_prompt=lambda ctx: ctx.run.input.question))
PromptStep(description="a", output_schema=SCHEMA, create_prompt=lambda ctx: "x",
           example="Example: the sky is green.")  # type: ignore[arg-type]
WorkedExample(text="Example: 1.", statements=[1])  # type: ignore[list-item]
typed_judge.preprocess(
    PromptStep(
        description="p",
        output_schema=SCHEMA,
        create_prompt=other_prompt,  # type: ignore[arg-type]
    )
)

# --- agent runs written from text fit an agent scorer -------------------------------------------


def scores_a_test_run() -> None:
    run = create_agent_test_run(input_messages="Where is Paris?", output=["In France."])
    assert_type(run.input, AgentInput)
    assert_type(run.output, AgentOutput)
    assert_type(create_test_message("Hi", role="user"), AgentMessage)
    result = agent_scorer.run_sync(input=run.input, output=run.output, run_id=run.run_id,
                                   request_context=run.request_context)
    assert_type(result.unwrap().run.input, AgentInput)
    create_test_message("Hi", role="bot")  # type: ignore[arg-type]
    create_test_message("Hi")  # type: ignore[call-arg]
    create_agent_test_run(output=[1])  # type: ignore[list-item]
    create_agent_test_run(input_messages="Hi")  # type: ignore[call-arg]
