"""Tests of judge retries in the core: error processors, budgets and waits in virtual time."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Success

from scorecore import (
    DefaultRetryBudgetWarning,
    JudgeConfig,
    JudgeFailed,
    PromptStep,
    Runtime,
    ScorePromptStep,
    StepJudge,
    create_scorer,
)
from scorecore.judge import JudgeError, JudgeRequest, Retry
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


# --- why retrying stopped -----------------------------------------------------------

# Errors whose is_retryable flag is false, yet which a processor retries: unknown errors
# (retry_unknown_errors=True) and a 404 named by a user matcher.
UNKNOWN = JudgeError(kind="unknown", message="weird reply")
NOT_FOUND = judge_error(404, message="model not found")
widened = st.sampled_from([
    (UNKNOWN, "retry_unknown_errors"),
    (NOT_FOUND, "matcher"),
])


def widening_processor(how: str, limit: int, **options: Any) -> StreamErrorRetryProcessor:
    if how == "retry_unknown_errors":
        return StreamErrorRetryProcessor(max_retries=limit, retry_unknown_errors=True, **options)
    return StreamErrorRetryProcessor(
        max_retries=limit, matchers=[lambda e: e.status == 404], **options
    )


# The anyio_backend fixture is a plain string: sharing it across examples is what we want.
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@fixture_ok
@given(widen=widened, budget=st.integers(0, 6), limit=st.integers(0, 6),
       delay=st.floats(min_value=0, max_value=60))
async def test_retried_errors_that_run_out_say_budget_or_limit(
    anyio_backend: str, widen: tuple[JudgeError, str], budget: int, limit: int, delay: float
) -> None:
    """An error retried by retry_unknown_errors or a matcher stops with budget_spent or
    processor_limit (whichever ran out first), never not_retryable."""
    error, how = widen
    assert not error.is_retryable
    judge = ScriptedJudge([error] * 20)
    processor = widening_processor(how, limit, delay=delay)
    outcome, clock = await run_virtual(scorer_with(judge, [processor], budget))
    retries = min(budget, limit)
    assert judge.calls == 1 + retries
    assert clock.sleeps == (delay,) * retries
    cause = outcome.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.stop_reason == ("budget_spent" if budget <= limit else "processor_limit")
    assert execution_of(outcome).processor_errors == ()
    assert f"({cause.stop_reason.replace('_', ' ')})" in str(outcome.failure())


async def test_the_issue_example_unknown_errors_until_the_budget(anyio_backend: str) -> None:
    """retry_unknown_errors with max_processor_retries=2: three calls, then budget_spent."""
    judge = ScriptedJudge([UNKNOWN] * 5)
    processor = StreamErrorRetryProcessor(max_retries=5, retry_unknown_errors=True)
    outcome, _ = await run_virtual(scorer_with(judge, [processor], 2))
    assert judge.calls == 3
    assert outcome.failure().cause.stop_reason == "budget_spent"


async def test_unknown_errors_without_widening_stay_not_retryable(anyio_backend: str) -> None:
    """The same unknown error without retry_unknown_errors is not retried: not_retryable."""
    judge = ScriptedJudge([UNKNOWN] * 5)
    outcome, _ = await run_virtual(scorer_with(judge, [StreamErrorRetryProcessor()], 0))
    assert judge.calls == 1
    assert outcome.failure().cause.stop_reason == "not_retryable"


class BoomError(Exception):
    """An exception raised from a user's retry hook."""


@fixture_ok
@given(
    good=st.integers(0, 4),
    hook=st.sampled_from(["delay", "async delay", "on_retry"]),
    exc=st.sampled_from([BoomError("delay bug"), ValueError("delay bug")]),
)
async def test_a_raising_delay_or_hook_is_reported_as_processor_raised(
    anyio_backend: str, good: int, hook: str, exc: Exception
) -> None:
    """A delay function (sync or async) or on_retry hook that raises on retry ``good`` stops
    retrying as processor_raised, with the exception in processor_errors."""
    def sync_hook(info: Any) -> float:
        if info.retry_count == good:
            raise exc
        return 1.0

    async def async_hook(info: Any) -> float:
        await anyio.lowlevel.checkpoint()
        return sync_hook(info)

    options: dict[str, Any] = {
        "delay": {"delay": sync_hook, "async delay": async_hook}.get(hook),
        "on_retry": sync_hook if hook == "on_retry" else None,
    }
    judge = ScriptedJudge([judge_error(503)] * 10)
    processor = StreamErrorRetryProcessor(max_retries=8, **options)
    outcome, clock = await run_virtual(scorer_with(judge, [processor], 8))
    assert judge.calls == good + 1
    assert len(clock.sleeps) == good
    cause = outcome.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.stop_reason == "processor_raised"
    assert "(processor raised)" in str(outcome.failure())
    (reported,) = execution_of(outcome).processor_errors
    prefix = f"error processor StreamErrorRetryProcessor raised {type(exc).__name__}"
    assert reported.startswith(prefix)
    assert reported.endswith(": delay bug")


async def test_a_raising_processor_before_one_that_declines(anyio_backend: str) -> None:
    """When a processor raised and no other asked to retry, the stop reason says it raised."""
    judge = ScriptedJudge([judge_error(503), OK])
    outcome, _ = await run_virtual(
        scorer_with(judge, [Raises(), StreamErrorRetryProcessor(max_retries=0)], 3))
    assert judge.calls == 1
    assert outcome.failure().cause.stop_reason == "processor_raised"
    (reported,) = execution_of(outcome).processor_errors
    assert "processor bug" in reported


class Classifies:
    """A user processor that never retries but claims (or fails) to classify errors."""

    def __init__(self, answer: bool | None) -> None:
        self.answer = answer
        self.decisions = 0

    def process_error(self, error: JudgeError, retry_count: int, request: JudgeRequest) -> None:
        self.decisions += 1

    def would_retry(self, error: JudgeError) -> bool:
        if self.answer is None:
            raise RuntimeError("classifier bug")
        return self.answer


@pytest.mark.parametrize(
    ("answer", "budget", "stop", "decisions"),
    [
        (True, 3, "processor_limit", 1),
        (False, 3, "not_retryable", 1),
        (True, 0, "budget_spent", 0),
        (False, 0, "not_retryable", 0),
        (None, 0, "not_retryable", 0),
    ],
)
async def test_would_retry_names_the_stop_reason_only(
    anyio_backend: str, answer: bool | None, budget: int, stop: str, decisions: int
) -> None:
    """A processor's would_retry names why retrying stopped; it never triggers a retry, and
    with the budget spent process_error is not called at all."""
    processor = Classifies(answer)
    judge = ScriptedJudge([UNKNOWN, OK])
    outcome, clock = await run_virtual(scorer_with(judge, [processor], budget))
    assert judge.calls == 1
    assert clock.sleeps == ()
    assert processor.decisions == decisions
    assert outcome.failure().cause.stop_reason == stop
    errors = execution_of(outcome).processor_errors
    assert len(errors) == (answer is None)
    assert all("would_retry raised RuntimeError: classifier bug" in e for e in errors)
