"""Tests of prompt steps with fake judges: requests, structured output, fallback, telemetry."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from scorecore import (
    InvalidScore,
    InvalidStepValue,
    JudgeConfig,
    JudgeFailed,
    JudgeOutputInvalid,
    ModelSettings,
    ProcessorAborted,
    PromptStep,
    Runtime,
    ScorePromptStep,
    ScorerDefinitionError,
    StepJudge,
    StepRaised,
    create_scorer,
)
from scorecore.judge import Abort, JudgeMessage, JudgeRequest, JudgeResponse, JudgeUsage
from scorecore_adapters.testing import (
    FunctionJudge,
    ScriptedJudge,
    VirtualClock,
    judge_error,
    virtual_runtime,
)

pytestmark = pytest.mark.anyio

INSTRUCTIONS = "You are a strict evaluator."
SCHEMA = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["claims"],
}


def analyze_scorer(judge: Any, **config: Any) -> Any:
    return (
        create_scorer(id="s", description="d",
                      judge=JudgeConfig(model=judge, instructions=INSTRUCTIONS, **config))
        .analyze(PromptStep(description="claims", output_schema=SCHEMA,
                            create_prompt=lambda ctx: f"Claims in: {ctx.run.output}"))
        .generate_score(lambda ctx: len(ctx.results.analyze_step_result["claims"]))
    )


def score_scorer(judge: Any, step: ScorePromptStep | None = None, **config: Any) -> Any:
    return create_scorer(
        id="s", description="d",
        judge=JudgeConfig(model=judge, instructions=INSTRUCTIONS, **config),
    ).generate_score(step or ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate"))


def embedded_json(text: str) -> Any:
    """The JSON object written somewhere inside a message (wording-independent)."""
    start = text.index("{")
    return json.JSONDecoder().raw_decode(text[start:])[0]


async def run(scorer: Any, **kwargs: Any) -> Any:
    runtime, _ = virtual_runtime()
    return await scorer.run(input="q", output="answer", runtime=runtime, **kwargs)


# --- request shape per json_prompt_injection -----------------------------------------------


@pytest.mark.parametrize(
    ("injection", "native_capable", "expected"),
    [
        ("auto", True, "native"), ("auto", False, "inline"), ("inline", True, "inline"),
        ("inline", False, "inline"), ("system", True, "system"), (True, False, "system"),
        (False, False, "native"), (False, True, "native"),
    ],
)
async def test_injection_modes_shape_the_request(
    anyio_backend: str, injection: Any, native_capable: bool, expected: str
) -> None:
    """Each json_prompt_injection mode conveys the schema as docs/scorers.md describes."""
    judge = ScriptedJudge([{"claims": ["a"]}], supports_structured_output=native_capable)
    result = (await run(analyze_scorer(judge, json_prompt_injection=injection))).unwrap()
    assert result.score == 1
    (request,) = judge.requests
    assert request.step == "analyze"
    assert request.output_schema == SCHEMA
    system, user = request.messages
    assert (system.role, user.role) == ("system", "user")
    prompt = "Claims in: answer"
    if expected == "native":
        assert request.native_schema is True
        assert request.messages == (JudgeMessage(role="system", content=INSTRUCTIONS),
                                    JudgeMessage(role="user", content=prompt))
    elif expected == "inline":
        assert request.native_schema is False
        assert system.content == INSTRUCTIONS
        assert user.content.startswith(prompt)
        assert embedded_json(user.content[len(prompt):]) == SCHEMA
    else:
        assert request.native_schema is False
        assert user.content == prompt
        assert system.content.startswith(INSTRUCTIONS)
        assert embedded_json(system.content[len(INSTRUCTIONS):]) == SCHEMA


async def test_default_score_schema_and_score_field(anyio_backend: str) -> None:
    """A ScorePromptStep without schema asks for {"score": number} and scores from ``score``."""
    judge = ScriptedJudge([{"score": 0.8}], supports_structured_output=True)
    result = (await run(score_scorer(judge))).unwrap()
    assert result.score == 0.8
    assert result.generate_score_prompt == "Rate"
    schema = judge.requests[0].output_schema
    assert schema is not None
    assert schema["required"] == ["score"]
    assert schema["properties"]["score"]["type"] == "number"
    (execution,) = result.judge["generate_score"]
    assert execution.output == 0.8


@pytest.mark.parametrize("reply", [{"score": "high"}, {"score": 1, "extra": 2}, {"mark": 1}])
async def test_default_score_schema_rejects_non_numbers(anyio_backend: str, reply: Any) -> None:
    """A reply that does not fit {"score": number} is a format failure, twice → Failure."""
    judge = ScriptedJudge([reply, reply])
    error = (await run(score_scorer(judge))).failure()
    assert isinstance(error.cause, JudgeOutputInvalid)
    assert len(judge.requests) == 2


@pytest.mark.parametrize("is_async", [False, True])
async def test_calculate_score_gets_judge_output(anyio_backend: str, is_async: bool) -> None:
    """calculate_score (sync or async) maps the validated reply (ctx.judge_output) to the score."""
    seen: list[Any] = []
    schema = {"type": "object", "properties": {"verdict": {"enum": ["yes", "no"]}},
              "required": ["verdict"]}

    def calc(ctx: Any) -> float:
        seen.append((ctx.judge_output, ctx.results.preprocess_step_result, ctx.run.output))
        return 1.0 if ctx.judge_output["verdict"] == "yes" else 0.0

    async def acalc(ctx: Any) -> float:
        return calc(ctx)

    judge = ScriptedJudge([{"verdict": "yes"}])
    scorer = create_scorer(
        id="s", description="d", judge=JudgeConfig(model=judge, instructions=INSTRUCTIONS),
    ).preprocess(lambda ctx: "P").generate_score(ScorePromptStep(
        description="d", create_prompt=lambda ctx: "Judge", output_schema=schema,
        calculate_score=acalc if is_async else calc,
    ))
    result = (await run(scorer)).unwrap()
    assert result.score == 1.0
    assert seen == [({"verdict": "yes"}, "P", "answer")]
    assert judge.requests[0].output_schema == schema
    assert result.judge["generate_score"][0].output == 1.0


async def test_calculate_score_must_give_a_finite_number(anyio_backend: str) -> None:
    """calculate_score returning a non-number fails as InvalidScore; raising as StepRaised."""
    step = ScorePromptStep(description="d", create_prompt=lambda ctx: "p",
                           calculate_score=lambda ctx: "high")
    error = (await run(score_scorer(ScriptedJudge([{"score": 1}]), step))).failure()
    assert isinstance(error.cause, InvalidScore)
    step = ScorePromptStep(description="d", create_prompt=lambda ctx: "p",
                           calculate_score=lambda ctx: 1 / 0)
    error = (await run(score_scorer(ScriptedJudge([{"score": 1}]), step))).failure()
    assert isinstance(error.cause, StepRaised)
    assert error.cause.where == "calculate_score"
    assert error.partial.judge["generate_score"][0].status == "failed"


async def test_reason_prompt_returns_text_verbatim(anyio_backend: str) -> None:
    """A generate_reason prompt step asks for plain text and keeps the reply verbatim."""
    text = '  {"not": "parsed"}\n```json\nstill verbatim\n```  '
    judge = ScriptedJudge([text], supports_structured_output=True)
    scorer = create_scorer(
        id="s", description="d", judge=JudgeConfig(model=judge, instructions=INSTRUCTIONS),
    ).generate_score(lambda ctx: 0.25).generate_reason(
        PromptStep(description="why", create_prompt=lambda ctx: f"Explain {ctx.score}"))
    result = (await run(scorer)).unwrap()
    assert result.reason == text
    assert result.generate_reason_prompt == "Explain 0.25"
    (request,) = judge.requests
    assert request.output_schema is None
    assert request.native_schema is False
    assert request.step == "generate_reason"
    assert request.messages == (JudgeMessage(role="system", content=INSTRUCTIONS),
                                JudgeMessage(role="user", content="Explain 0.25"))


@pytest.mark.parametrize(
    "reply",
    ['```json\n{"claims": ["x"]}\n```', '```\n{"claims": ["x"]}\n```',
     '  \n```json\n{"claims": ["x"]}```\n', '{"claims": ["x"]}'],
)
async def test_fenced_json_is_accepted(anyio_backend: str, reply: str) -> None:
    """A ```json fenced reply is parsed like bare JSON, on the first attempt."""
    judge = ScriptedJudge([reply])
    result = (await run(analyze_scorer(judge))).unwrap()
    assert result.analyze_step_result == {"claims": ["x"]}
    assert len(judge.requests) == 1


@pytest.mark.parametrize("first_mode", ["auto", "inline", "system", False])
async def test_format_failure_takes_one_fallback_in_system(
    anyio_backend: str, first_mode: Any
) -> None:
    """A format failure makes exactly one more attempt with the schema in the system message."""
    judge = ScriptedJudge(["not json", {"claims": []}], supports_structured_output=True)
    result = (await run(analyze_scorer(judge, json_prompt_injection=first_mode))).unwrap()
    assert result.analyze_step_result == {"claims": []}
    assert len(judge.requests) == 2
    fallback = judge.requests[1]
    assert fallback.native_schema is False
    system, user = fallback.messages
    assert system.content.startswith(INSTRUCTIONS)
    assert embedded_json(system.content[len(INSTRUCTIONS):]) == SCHEMA
    assert user.content == "Claims in: answer"
    (execution,) = result.judge["analyze"]
    assert (execution.status, execution.attempt_count, execution.model_call_count) == \
        ("success", 2, 2)


async def test_second_format_failure_is_judge_output_invalid(anyio_backend: str) -> None:
    """Two format failures: Failure(JudgeOutputInvalid) with every error and the raw text."""
    bad = {"claims": [1, 2]}
    judge = ScriptedJudge(["garbage", bad])
    error = (await run(analyze_scorer(judge))).failure()
    assert error.failed_step == "analyze"
    assert isinstance(error.cause, JudgeOutputInvalid)
    assert error.cause.attempts == 2
    assert error.cause.raw_output == json.dumps(bad)
    assert len(error.cause.errors) == 2
    assert any("claims/0" in e for e in error.cause.errors)
    assert any("claims/1" in e for e in error.cause.errors)
    (execution,) = error.partial.judge["analyze"]
    assert execution.status == "failed"
    assert execution.error == error.cause
    assert (execution.attempt_count, execution.model_call_count) == (2, 2)
    assert execution.raw_output == json.dumps(bad)
    assert error.partial.analyze_prompt == "Claims in: answer"
    assert len(judge.requests) == 2


@pytest.mark.parametrize("status", [400, 401, 429, 500, 503])
async def test_transport_errors_never_take_the_fallback(anyio_backend: str, status: int) -> None:
    """A provider error fails after one call without processors and never triggers the fallback."""
    judge = ScriptedJudge([judge_error(status), {"claims": []}])
    error = (await run(analyze_scorer(judge))).failure()
    assert isinstance(error.cause, JudgeFailed)
    assert error.cause.error.status == status
    assert error.cause.model_calls == 1
    assert len(judge.requests) == 1
    (execution,) = error.partial.judge["analyze"]
    assert (execution.attempt_count, execution.model_call_count) == (1, 1)


async def test_transport_error_during_fallback_fails_without_third_attempt(
    anyio_backend: str,
) -> None:
    """An error on the fallback attempt fails the step; no further attempt is made."""
    judge = ScriptedJudge(["nope", judge_error(503), {"claims": []}])
    error = (await run(analyze_scorer(judge))).failure()
    assert isinstance(error.cause, JudgeFailed)
    assert len(judge.requests) == 2


async def test_usage_summed_and_duration_from_clock(anyio_backend: str) -> None:
    """Usage is summed over calls and the duration comes from the runtime clock."""
    clock = VirtualClock(start=100.0)
    usage = JudgeUsage(input_tokens=10, output_tokens=20, total_tokens=30)
    replies = iter([JudgeResponse(text="garbage", usage=usage, finish_reason="stop"),
                    JudgeResponse(text='{"score": 0.5}', usage=usage, finish_reason="length")])

    def answer(request: JudgeRequest) -> Any:
        clock.advance(0.25)
        return next(replies)

    judge = FunctionJudge(answer, model_id="m", provider="p")
    result = (await score_scorer(judge).run(
        input="q", output="a", runtime=Runtime(clock=clock, sleep=clock.sleep),
    )).unwrap()
    (execution,) = result.judge["generate_score"]
    assert execution.usage == JudgeUsage(input_tokens=20, output_tokens=40, total_tokens=60)
    assert execution.duration == 0.5
    assert execution.finish_reason == "length"
    assert (execution.model_id, execution.provider) == ("m", "p")
    assert execution.prompt == "Rate"


replies = st.one_of(
    st.sampled_from(['{"score": 0.5}', '```json\n{"score": 1}\n```', "not json", "",
                     '{"score": "x"}', '{"score": 1, "more": 2}']),
    st.sampled_from([429, 500, 401, 400]).map(judge_error),
)


@given(st.lists(replies, max_size=6), st.booleans(), st.sampled_from(["auto", "inline", True]))
def test_any_script_is_deterministic_with_consistent_telemetry(
    script: list[Any], native: bool, injection: Any
) -> None:
    """For any scripted replies: runs agree, fallback ≤ once, counts equal recorded requests."""

    async def once() -> tuple[Any, ScriptedJudge]:
        judge = ScriptedJudge(script, supports_structured_output=native)
        return await run(score_scorer(judge, json_prompt_injection=injection)), judge

    (first, judge), (second, _) = anyio.run(once), anyio.run(once)
    assert repr(first) == repr(second)
    partial = first.unwrap() if isinstance(first, Success) else first.failure().partial
    (execution,) = partial.judge["generate_score"]
    assert execution.model_call_count == len(judge.requests)
    assert 1 <= execution.attempt_count <= 2
    # Without error processors each attempt is one call; a second call is the fallback.
    assert execution.attempt_count == len(judge.requests)
    first_reply_ok = bool(script) and script[0] in ('{"score": 0.5}',
                                                    '```json\n{"score": 1}\n```')
    first_reply_error = not script or not isinstance(script[0], str)  # exhausted is an error
    assert (len(judge.requests) == 2) == (not first_reply_ok and not first_reply_error)
    if len(judge.requests) == 2:
        fallback = judge.requests[1]
        assert fallback.native_schema is False
        assert fallback.messages[0].content.startswith(INSTRUCTIONS)
        assert embedded_json(fallback.messages[0].content[len(INSTRUCTIONS):]) == \
            fallback.output_schema
    assert execution.duration == 0.0
    if isinstance(first, Failure):
        assert isinstance(first.failure().cause, JudgeOutputInvalid | JudgeFailed)
        assert execution.status == "failed"
    else:
        assert execution.status == "success"


# --- step-level judge overrides ----------------------------------------------------------


async def test_step_judge_overrides_field_by_field(anyio_backend: str) -> None:
    """A step judge with only instructions keeps the scorer's model and vice versa."""
    scorer_model = ScriptedJudge([{"claims": []}])
    scorer = create_scorer(
        id="s", description="d",
        judge=JudgeConfig(model=scorer_model, instructions=INSTRUCTIONS,
                          model_settings=ModelSettings(temperature=0.0)),
    ).analyze(PromptStep(
        description="a", create_prompt=lambda ctx: "p", output_schema=SCHEMA,
        judge=StepJudge(instructions="STEP", json_prompt_injection="system"),
    ))
    other = ScriptedJudge([{"score": 1}], supports_structured_output=True)
    scorer = scorer.generate_score(ScorePromptStep(
        description="s", create_prompt=lambda ctx: "s",
        judge=StepJudge(model=other, model_settings=ModelSettings(temperature=0.7, seed=1)),
    ))
    result = (await run(scorer)).unwrap()
    assert result.score == 1.0
    (analyze_request,) = scorer_model.requests
    assert analyze_request.messages[0].content.startswith("STEP")
    assert INSTRUCTIONS not in analyze_request.messages[0].content
    assert analyze_request.native_schema is False
    # The request carries the output cap it is sent with (the default, 1,024).
    assert analyze_request.settings == ModelSettings(temperature=0.0, max_output_tokens=1024)
    (score_request,) = other.requests
    assert score_request.messages[0].content == INSTRUCTIONS
    assert score_request.native_schema is True
    assert score_request.settings == ModelSettings(temperature=0.7, seed=1,
                                                   max_output_tokens=1024)
    assert result.judge["generate_score"][0].model_id == other.model_id


class Tag:
    def __init__(self, tag: str) -> None:
        self.tag = tag

    def process_input(self, messages: tuple[JudgeMessage, ...]) -> list[JudgeMessage]:
        return [JudgeMessage(role=m.role, content=m.content + self.tag) for m in messages]


async def test_step_processor_lists_replace_the_scorers(anyio_backend: str) -> None:
    """Processor lists on a step judge replace the scorer's; they never concatenate."""
    judge = ScriptedJudge([{"score": 1}, {"score": 1}], supports_structured_output=True)
    base = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="I", input_processors=[Tag("+scorer")]))
    step = ScorePromptStep(description="s", create_prompt=lambda ctx: "p",
                           judge=StepJudge(input_processors=[Tag("+step")]))
    (await run(base.generate_score(step))).unwrap()
    assert judge.requests[0].messages[1].content == "p+step"
    cleared = ScorePromptStep(description="s", create_prompt=lambda ctx: "p",
                              judge=StepJudge(input_processors=[]))
    (await run(base.generate_score(cleared))).unwrap()
    assert judge.requests[1].messages[1].content == "p"


# --- input and output processors ----------------------------------------------------------


class Redact:
    def process_input(self, messages: tuple[JudgeMessage, ...]) -> tuple[JudgeMessage, ...]:
        return tuple(JudgeMessage(role=m.role, content=m.content.replace("secret", "[x]"))
                     for m in messages)


class AsyncAbortInput:
    async def process_input(self, messages: tuple[JudgeMessage, ...]) -> Abort:
        return Abort(reason="prompt too long")


class StripPrefix:
    def process_output(self, text: str) -> str:
        return text.removeprefix("ANSWER:")


class RejectOutput:
    async def process_output(self, text: str) -> Abort:
        return Abort(reason="unsafe reply")


class Raising:
    def process_input(self, messages: tuple[JudgeMessage, ...]) -> Any:
        raise RuntimeError("processor bug")


async def test_input_processors_transform_messages_in_order(anyio_backend: str) -> None:
    """Input processors transform the messages sent, in order."""
    judge = ScriptedJudge([{"score": 1}], supports_structured_output=True)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="keep secret", input_processors=[Redact(), Tag("!")],
    )).generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "a secret"))
    result = (await run(scorer)).unwrap()
    assert [m.content for m in judge.requests[0].messages] == ["keep [x]!", "a [x]!"]
    assert result.generate_score_prompt == "a secret"


async def test_input_processor_abort_fails_the_step(anyio_backend: str) -> None:
    """An input processor's Abort fails the step with its reason, before any model call."""
    judge = ScriptedJudge([{"score": 1}])
    error = (await run(score_scorer(judge, input_processors=[AsyncAbortInput()]))).failure()
    assert error.cause == ProcessorAborted(stage="input", processor="AsyncAbortInput",
                                           reason="prompt too long")
    assert "prompt too long" in str(error)
    assert judge.requests == ()
    assert error.partial.judge["generate_score"][0].model_call_count == 0


async def test_output_processors_transform_or_abort(anyio_backend: str) -> None:
    """Output processors transform the reply before parsing, or abort with a reason."""
    judge = ScriptedJudge(['ANSWER:{"score": 0.3}'])
    result = (await run(score_scorer(judge, output_processors=[StripPrefix()]))).unwrap()
    assert result.score == 0.3
    judge = ScriptedJudge(['{"score": 0.3}'])
    error = (await run(score_scorer(judge, output_processors=[RejectOutput()]))).failure()
    assert isinstance(error.cause, ProcessorAborted)
    assert (error.cause.stage, error.cause.reason) == ("output", "unsafe reply")
    assert error.partial.judge["generate_score"][0].raw_output == '{"score": 0.3}'


async def test_raising_processor_fails_the_step(anyio_backend: str) -> None:
    """A processor that raises fails the step as StepRaised naming the processor."""
    judge = ScriptedJudge([{"score": 1}])
    error = (await run(score_scorer(judge, input_processors=[Raising()]))).failure()
    assert isinstance(error.cause, StepRaised)
    assert "Raising" in error.cause.where
    assert error.cause.message == "processor bug"


class WrongInput:
    def process_input(self, messages: tuple[JudgeMessage, ...]) -> Any:
        return ["not a message"]


class WrongOutput:
    async def process_output(self, text: str) -> Any:
        return 3


async def test_processor_returning_the_wrong_type_fails_the_step(anyio_backend: str) -> None:
    """A processor returning neither its kind of value nor Abort fails the step as a TypeError
    naming the processor and what it must return."""
    judge = ScriptedJudge([{"score": 1}])
    error = (await run(score_scorer(judge, input_processors=[WrongInput()]))).failure()
    assert error.cause == StepRaised(
        exception_type="TypeError",
        message="must return a sequence of JudgeMessage or Abort, got ['not a message']",
        where="input processor WrongInput")
    assert judge.requests == ()
    judge = ScriptedJudge([{"score": 1}])
    error = (await run(score_scorer(judge, output_processors=[WrongOutput()]))).failure()
    assert error.cause == StepRaised(exception_type="TypeError",
                                     message="must return str or Abort, got 3",
                                     where="output processor WrongOutput")


# --- create_prompt -------------------------------------------------------------------------


async def test_async_create_prompt(anyio_backend: str) -> None:
    """An async create_prompt is awaited and sees the step's context."""

    async def prompt(ctx: Any) -> str:
        return f"Rate {ctx.run.output} after {ctx.results.preprocess_step_result}"

    judge = ScriptedJudge([{"score": 1}], supports_structured_output=True)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="I")).preprocess(lambda ctx: "P").generate_score(
        ScorePromptStep(description="s", create_prompt=prompt))
    result = (await run(scorer)).unwrap()
    assert result.generate_score_prompt == "Rate answer after P"
    assert judge.requests[0].messages[1].content == "Rate answer after P"


async def test_create_prompt_raising_or_non_str_fails_without_a_call(anyio_backend: str) -> None:
    """create_prompt raising is StepRaised; returning a non-str is InvalidStepValue; no call."""
    judge = ScriptedJudge([{"score": 1}])
    raising = ScorePromptStep(description="s", create_prompt=lambda ctx: {}["k"])
    error = (await run(score_scorer(judge, raising))).failure()
    assert isinstance(error.cause, StepRaised)
    assert error.cause.where == "create_prompt"
    assert error.cause.exception_type == "KeyError"
    non_str = ScorePromptStep(description="s", create_prompt=lambda ctx: ["not", "str"])
    error = (await run(score_scorer(judge, non_str))).failure()
    assert isinstance(error.cause, InvalidStepValue)
    assert error.cause.what == "create_prompt"
    assert judge.requests == ()
    assert error.partial.judge == {}


async def test_preprocess_prompt_step_result_and_prompt(anyio_backend: str) -> None:
    """A preprocess prompt step's validated reply and prompt land in the result."""
    judge = ScriptedJudge([{"claims": ["c"]}], supports_structured_output=True)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="I")).preprocess(PromptStep(
            description="p", output_schema=SCHEMA, create_prompt=lambda ctx: f"Pre {ctx.run.input}",
        )).generate_score(lambda ctx: len(ctx.results.preprocess_step_result["claims"]))
    result = (await run(scorer)).unwrap()
    assert result.preprocess_step_result == {"claims": ["c"]}
    assert result.preprocess_prompt == "Pre q"
    assert result.score == 1.0
    assert judge.requests[0].step == "preprocess"
    assert list(result.judge) == ["preprocess"]


# --- replies and schemas that used to make run() raise ---------------------------------------

DEEP_REPLY = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (DEEP_REPLY, "nested too deeply"),
        ('{"score": ' + DEEP_REPLY + "}", "nested too deeply"),
        ('{"score": ' + "9" * 5_000 + "}", "more than 4,300 digits"),
        ("[" + "-" + "1" * 4_301 + "]", "more than 4,300 digits"),
    ],
    ids=["deep", "deep-field", "5000-digit-int", "4301-digit-negative-int"],
)
async def test_unreadable_json_replies_are_format_failures(
    anyio_backend: str, reply: str, says: str
) -> None:
    """A reply nested 100,000 deep or holding a huge integer is a format failure, retried once."""
    judge = ScriptedJudge([reply, reply])
    error = (await run(score_scorer(judge))).failure()
    assert isinstance(error.cause, JudgeOutputInvalid)
    assert error.cause.attempts == 2
    assert judge.calls == 2
    assert any(says in e for e in error.cause.errors)


async def test_unreadable_reply_then_a_good_one_scores(anyio_backend: str) -> None:
    """The one fallback attempt also follows an unreadable reply."""
    judge = ScriptedJudge([DEEP_REPLY, {"score": 0.5}])
    assert (await run(score_scorer(judge))).unwrap().score == 0.5


@pytest.mark.parametrize(
    ("schema", "reply"),
    [
        # a float multipleOf cannot divide an integer too big for a float
        ({"type": "object", "properties": {"n": {"multipleOf": 0.5}}}, '{"n": ' + "9" * 400 + "}"),
        # a recursive schema over a reply nested deeper than the interpreter's stack
        (
            {"type": "object", "properties": {"a": {"$ref": "#"}}},
            '{"a": ' * 900 + "{}" + "}" * 900,
        ),
    ],
    ids=["multipleOf-overflow", "recursive-schema-deep-reply"],
)
async def test_replies_that_break_validation_are_format_failures(
    anyio_backend: str, schema: dict[str, Any], reply: str
) -> None:
    """Validation that raises on an odd reply is reported as an invalid reply, not raised."""
    scorer = (
        create_scorer(id="s", description="d",
                      judge=JudgeConfig(model=ScriptedJudge([reply, reply]),
                                        instructions=INSTRUCTIONS))
        .analyze(PromptStep(description="a", output_schema=schema, create_prompt=lambda c: "p"))
        .generate_score(lambda ctx: 1.0)
    )
    error = (await run(scorer)).failure()
    assert isinstance(error.cause, JudgeOutputInvalid)
    assert error.cause.attempts == 2
    assert any("could not be validated" in e for e in error.cause.errors)


async def test_many_schema_errors_are_bounded(anyio_backend: str) -> None:
    """A reply with 10,000 wrong items lists at most 50 errors, each of bounded length."""
    reply = json.dumps({"claims": ["x" * 10_000] + [1] * 10_000})
    error = (await run(analyze_scorer(ScriptedJudge([reply, reply])))).failure()
    assert isinstance(error.cause, JudgeOutputInvalid)
    assert len(error.cause.errors) == 50
    assert all(len(e) <= 301 for e in error.cause.errors)


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "object", 1: "x"}, "cannot be written as JSON"),
        ({"type": "object", "x-tags": {"a", "b"}}, "cannot be written as JSON"),
        ({"type": "object", "x-max": 10**5000}, "cannot be written as JSON"),
        ({"type": "object", "x-nan": float("nan")}, "cannot be written as JSON"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "does not resolve"),
        ({"properties": {"a": {"$ref": "https://example.com/a.json"}}}, "does not resolve"),
        ({"items": {"$ref": "other.json#/x"}}, "does not resolve"),
        ({"$ref": "#"}, "cannot validate"),
        ({"type": "object", "x-odd": _Unprintable()}, "cannot be written as JSON"),
    ],
    ids=["int-key", "set", "huge-int", "nan", "missing-ref", "nested-missing-ref", "remote-ref",
         "relative-ref", "self-ref", "unprintable"],
)
def test_unusable_output_schemas_are_refused_at_build_time(
    schema: dict[Any, Any], says: str
) -> None:
    """Schemas that pass check_schema but would fail every run are refused when built."""
    for build in (
        lambda: PromptStep(description="d", create_prompt=lambda c: "p", output_schema=schema),
        lambda: ScorePromptStep(description="d", create_prompt=lambda c: "p",
                                output_schema=schema),
    ):
        with pytest.raises(ScorerDefinitionError) as info:
            build()
        assert info.value.field in ("PromptStep.output_schema", "ScorePromptStep.output_schema")
        assert info.value.field in str(info.value)
        assert says in str(info.value)
        assert len(str(info.value)) < 600


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"n": {"type": "number"}}, "type": "object",
         "properties": {"score": {"$ref": "#/$defs/n"}}, "required": ["score"]},
        {"$defs": {"n": {"$anchor": "num", "type": "number"}}, "type": "object",
         "properties": {"score": {"$ref": "#num"}}, "required": ["score"]},
        {"$id": "https://example.com/root.json", "type": "object",
         "properties": {"score": {"$ref": "defs.json#/n"}}, "required": ["score"],
         "$defs": {"d": {"$id": "defs.json", "n": {"type": "number"}}}},
        {"type": "object", "properties": {"score": {"type": "number"},
                                          "more": {"$ref": "#"}}, "required": ["score"]},
    ],
    ids=["defs", "anchor", "embedded-id", "recursive"],
)
async def test_schemas_with_local_refs_are_accepted_and_used(
    anyio_backend: str, schema: dict[str, Any]
) -> None:
    """Refs that resolve within the schema (pointers, anchors, embedded ids) work as before."""
    judge = ScriptedJudge([{"score": "x"}, {"score": 0.25}])
    step = ScorePromptStep(description="d", create_prompt=lambda c: "p", output_schema=schema)
    result = (await run(score_scorer(judge, step))).unwrap()
    assert result.score == 0.25
    assert judge.calls == 2  # the first reply was invalid against the resolved ref


@pytest.mark.parametrize("cls", [PromptStep, ScorePromptStep])
def test_create_prompt_is_required(cls: Any) -> None:
    """A prompt step without a create_prompt function is refused, naming create_prompt."""
    with pytest.raises(ScorerDefinitionError) as info:
        cls(description="d", create_prompt=None)
    assert info.value.field == f"{cls.__name__}.create_prompt"
    assert "create_prompt must be callable" in str(info.value)


@given(value=st.one_of(
    st.integers(min_value=10**309, max_value=10**5000),
    st.integers(max_value=-(10**309), min_value=-(10**5000)),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), True, "0.5", [0.5]]),
))
def test_model_settings_refuse_non_finite_numbers_naming_the_field(value: Any) -> None:
    """ModelSettings numbers that are not finite floats are a ScorerDefinitionError, not a crash."""
    for field in ("temperature", "top_p", "timeout"):
        with pytest.raises(ScorerDefinitionError) as info:
            ModelSettings(**{field: value})
        assert info.value.field == f"ModelSettings.{field}"
        assert len(str(info.value)) < 400
