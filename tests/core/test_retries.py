"""Tests of judge retries in the core: error processors, budgets and waits in virtual time."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Success

from scorecore import (
    DefaultRetryBudgetWarning,
    JudgeConfig,
    JudgeError,
    JudgeFailed,
    JudgeRequest,
    PromptStep,
    Retry,
    Runtime,
    ScorePromptStep,
    StepJudge,
    create_scorer,
)
from scorecore_adapters.retry import RetryPolicy, StreamErrorRetryProcessor
from scorecore_adapters.testing import FunctionJudge, ScriptedJudge, VirtualClock, judge_error

pytestmark = pytest.mark.anyio

OK = {"score": 0.5}


def scorer_with(judge: Any, processors: Any = (), budget: int | None = None) -> Any:
    return create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="I", error_processors=processors, max_processor_retries=budget,
    )).generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "Rate"))


async def run_virtual(scorer: Any) -> tuple[Any, VirtualClock]:
    clock = VirtualClock()
    outcome = await scorer.run(input="q", output="a", run_id="r",
                               runtime=Runtime(clock=clock, sleep=clock.sleep))
    return outcome, clock


def execution_of(outcome: Any) -> Any:
    result = outcome.unwrap() if isinstance(outcome, Success) else outcome.failure().partial
    (execution,) = result.judge["generate_score"]
    return execution


# (error, the provider's retry-after in seconds or None)
retryable = st.one_of(
    st.tuples(st.sampled_from([408, 429, 500, 502, 503, 529]), st.none() | st.integers(0, 90),
              st.booleans()).map(
        lambda t: (
            judge_error(t[0], headers={} if t[1] is None else (
                {"retry-after-ms": str(t[1] * 1000)} if t[2] else {"retry-after": str(t[1])})),
            t[1],
        )
    ),
    st.sampled_from(["ECONNRESET", "rate_limit_exceeded", "overloaded_error"]).map(
        lambda code: (judge_error(code=code), None)
    ),
)
terminal = st.sampled_from([401, 403, 400]).map(lambda s: (judge_error(s), None)) | st.just(
    (judge_error(500, code="invalid_api_key"), None)
)
success = st.just((OK, None))


@given(
    script=st.lists(st.one_of(retryable, terminal, success), max_size=8),
    budget=st.integers(0, 5),
    limit=st.integers(0, 5),
    delay=st.none() | st.floats(min_value=0, max_value=60),
    cap=st.floats(min_value=0, max_value=60),
)
def test_calls_and_waits_follow_budget_limit_and_formula(
    script: list[tuple[Any, int | None]], budget: int, limit: int, delay: float | None, cap: float
) -> None:
    """Calls = 1 + min(budget, limit, leading retryable errors); each wait is the formula."""
    judge = ScriptedJudge([reply for reply, _ in script], supports_structured_output=True)
    processor = StreamErrorRetryProcessor(max_retries=limit, delay=delay, max_retry_after=cap)
    outcome, clock = anyio.run(run_virtual, scorer_with(judge, [processor], budget))

    leading = 0
    for reply, _ in script:
        if not (isinstance(reply, JudgeError) and reply.status not in (400, 401, 403)
                and reply.code != "invalid_api_key"):
            break
        leading += 1
    retries = min(budget, limit, leading)
    assert judge.calls == 1 + retries
    expected_waits = [
        max(delay or 0.0, min(after if after is not None else 0.0, cap))
        for _, after in script[:retries]
    ]
    assert list(clock.sleeps) == pytest.approx(expected_waits)
    execution = execution_of(outcome)
    assert execution.model_call_count == judge.calls
    assert execution.attempt_count == 1
    assert list(execution.waits) == list(clock.sleeps)
    assert execution.duration == pytest.approx(sum(expected_waits))

    last = script[retries][0] if retries < len(script) else None
    if last == OK:
        assert outcome.unwrap().score == 0.5
        return
    cause = outcome.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.model_calls == judge.calls
    if retries == leading:
        assert cause.stop_reason == "not_retryable"
    elif budget <= limit:
        assert cause.stop_reason == "budget_spent"
    else:
        assert cause.stop_reason == "processor_limit"
    message = str(outcome.failure())
    assert f"after {judge.calls} call(s)" in message


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("code", [None, "invalid_api_key", "authentication_error"])
async def test_auth_errors_are_never_retried(
    anyio_backend: str, status: int, code: str | None
) -> None:
    """401/403 and auth codes fail after one call even with a generous processor and budget."""
    judge = ScriptedJudge([judge_error(status, code=code), OK])
    processor = StreamErrorRetryProcessor(max_retries=5, retry_unknown_errors=True)
    outcome, clock = await run_virtual(scorer_with(judge, [processor], 5))
    assert judge.calls == 1
    assert clock.sleeps == ()
    cause = outcome.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.stop_reason == "not_retryable"


async def test_no_processors_means_one_call(anyio_backend: str) -> None:
    """Without error processors a retryable error fails after exactly one call."""
    judge = ScriptedJudge([judge_error(429), OK])
    outcome, clock = await run_virtual(scorer_with(judge))
    assert judge.calls == 1
    assert clock.sleeps == ()
    cause = outcome.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.model_calls == 1
    assert cause.stop_reason == "no_error_processors"
    assert "after 1 call(s)" in str(outcome.failure())


class AlwaysRetry:
    def process_error(self, error: JudgeError, retry_count: int, request: JudgeRequest) -> Retry:
        return Retry(after=1.5)


class Raises:
    def process_error(self, error: JudgeError, retry_count: int, request: JudgeRequest) -> Any:
        raise RuntimeError("processor bug")


async def test_default_budget_is_ten_with_a_warning(anyio_backend: str) -> None:
    """Processors without max_processor_retries get 10 retries and a warning at the user's line."""
    judge = ScriptedJudge([judge_error(503)] * 20)
    with pytest.warns(DefaultRetryBudgetWarning, match="max_processor_retries") as record:
        scorer = scorer_with(judge, [AlwaysRetry()])
    assert record[0].filename == __file__
    outcome, clock = await run_virtual(scorer)
    assert judge.calls == 11
    assert clock.sleeps == (1.5,) * 10
    cause = outcome.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.stop_reason == "budget_spent"
    assert "after 11 call(s)" in str(outcome.failure())


async def test_explicit_budget_gives_no_warning(anyio_backend: str) -> None:
    """An explicit budget (0 included) emits no warning and is honoured."""
    judge = ScriptedJudge([judge_error(503)] * 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scorer = scorer_with(judge, [AlwaysRetry()], 0)
    await run_virtual(scorer)
    assert judge.calls == 1


async def test_raising_processor_is_ignored(anyio_backend: str) -> None:
    """A processor that raises is skipped; the next processor's decision applies."""
    judge = ScriptedJudge([judge_error(503), OK])
    outcome, clock = await run_virtual(scorer_with(judge, [Raises(), AlwaysRetry()], 3))
    assert outcome.unwrap().score == 0.5
    assert judge.calls == 2
    assert clock.sleeps == (1.5,)
    (reported,) = execution_of(outcome).processor_errors
    assert "Raises" in reported
    assert "processor bug" in reported
    judge = ScriptedJudge([judge_error(503), OK])
    outcome, _ = await run_virtual(scorer_with(judge, [Raises()], 3))
    assert judge.calls == 1
    assert isinstance(outcome.failure().cause, JudgeFailed)


async def test_first_processor_asking_to_retry_wins(anyio_backend: str) -> None:
    """Processors are asked in order; the first Retry decides the wait, the budget is shared."""
    judge = ScriptedJudge([judge_error(503), judge_error(503), judge_error(503), OK])
    slow = StreamErrorRetryProcessor(max_retries=1, delay=7.0)
    outcome, clock = await run_virtual(scorer_with(judge, [slow, AlwaysRetry()], 2))
    assert judge.calls == 3
    assert clock.sleeps == (7.0, 1.5)
    assert isinstance(outcome.failure().cause, JudgeFailed)


async def test_reason_retry_never_resends_the_score_prompt(anyio_backend: str) -> None:
    """A retry in generate_reason repeats only the reason call, never generate_score's."""
    judge = ScriptedJudge([OK, judge_error(429), judge_error(503), "Because."],
                          supports_structured_output=True)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="I",
        error_processors=[StreamErrorRetryProcessor(max_retries=3)], max_processor_retries=3,
    )).generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "SCORE?")) \
        .generate_reason(PromptStep(description="r", create_prompt=lambda ctx: "REASON?"))
    outcome, _ = await run_virtual(scorer)
    result = outcome.unwrap()
    assert result.reason == "Because."
    prompts = [r.messages[-1].content for r in judge.requests]
    assert prompts == ["SCORE?", "REASON?", "REASON?", "REASON?"]
    assert result.judge["generate_score"][0].model_call_count == 1
    assert result.judge["generate_reason"][0].model_call_count == 3


async def test_step_max_processor_retries_inherits(anyio_backend: str) -> None:
    """A step judge with its own processors but no budget inherits the scorer's budget."""
    judge = ScriptedJudge([judge_error(503)] * 5, supports_structured_output=True)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="I", max_processor_retries=1,
    )).generate_score(ScorePromptStep(
        description="s", create_prompt=lambda ctx: "p",
        judge=StepJudge(error_processors=[AlwaysRetry()]),
    ))
    await run_virtual(scorer)
    assert judge.calls == 2


async def test_step_can_clear_the_scorers_processors(anyio_backend: str) -> None:
    """An empty processor list on the step replaces the scorer's: no retries."""
    judge = ScriptedJudge([judge_error(503), OK], supports_structured_output=True)
    scorer = create_scorer(id="s", description="d", judge=JudgeConfig(
        model=judge, instructions="I", error_processors=[AlwaysRetry()], max_processor_retries=3,
    )).generate_score(ScorePromptStep(description="s", create_prompt=lambda ctx: "p",
                                      judge=StepJudge(error_processors=[])))
    await run_virtual(scorer)
    assert judge.calls == 1


def econnreset(error: JudgeError) -> bool:
    return error.code == "ECONNRESET"


@pytest.mark.parametrize("matcher", [econnreset, RetryPolicy(match=econnreset)])
async def test_reference_worked_example_at_most_three_calls(
    anyio_backend: str, matcher: Any
) -> None:
    """max_retries=2 with an ECONNRESET matcher and max_processor_retries=2: at most 3 calls."""
    calls: list[int] = []

    def always_reset(request: JudgeRequest) -> Any:
        calls.append(1)
        return judge_error(code="ECONNRESET", message="socket hang up")

    processor = StreamErrorRetryProcessor(max_retries=2, matchers=[matcher])
    outcome, clock = await run_virtual(scorer_with(FunctionJudge(always_reset), [processor], 2))
    assert len(calls) == 3
    assert len(clock.sleeps) == 2
    cause = outcome.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.model_calls == 3
    assert cause.error.code == "ECONNRESET"
    judge = ScriptedJudge([judge_error(code="ECONNRESET")] * 2 + [OK])
    outcome, _ = await run_virtual(scorer_with(judge, [processor], 2))
    assert outcome.unwrap().score == 0.5
    assert judge.calls == 3


async def test_retries_do_not_sleep_for_real(anyio_backend: str) -> None:
    """A long provider Retry-After is waited only on the virtual clock."""
    judge = ScriptedJudge([judge_error(429, headers={"retry-after": "25"}), OK])
    with anyio.fail_after(5):
        outcome, clock = await run_virtual(
            scorer_with(judge, [StreamErrorRetryProcessor(max_retries=1)], 1))
    assert outcome.unwrap().score == 0.5
    assert clock.sleeps == (25.0,)
    assert execution_of(outcome).duration == 25.0
