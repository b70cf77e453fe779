"""ModelSettings(max_retries=N): Mastra's model-level retries, in virtual time under fakes."""

from __future__ import annotations

import math
from email.utils import formatdate
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorecore import (
    JudgeConfig,
    JudgeFailed,
    ModelSettings,
    Runtime,
    ScorePromptStep,
    ScorerDefinitionError,
    create_scorer,
)
from scorecore._core._backoff import MODEL_RETRY_AFTER_CAP, model_retry_wait
from scorecore.judge import JudgeError
from scorecore.judge.retry import read_retry_after
from scorecore_adapters.retry import StreamErrorRetryProcessor
from scorecore_adapters.testing import (
    FunctionJudge,
    ScriptedJudge,
    VirtualClock,
    judge_error,
    virtual_runtime,
)

pytestmark = pytest.mark.anyio


def scorer(judge: Any, *, max_retries: int, **config: Any) -> Any:
    return create_scorer(
        id="s", description="d",
        judge=JudgeConfig(model=judge, instructions="Rate.",
                          model_settings=ModelSettings(max_retries=max_retries), **config),
    ).generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate"))


async def test_two_429s_then_success_make_three_calls_waiting_1s_then_2s() -> None:
    """Mastra's observed case: maxRetries 2 and two 429s give 3 calls and ~3 s of waiting."""
    judge = ScriptedJudge([judge_error(429), judge_error(429), {"score": 0.5}])
    runtime, clock = virtual_runtime()
    result = (await scorer(judge, max_retries=2).run(input="q", output="a", runtime=runtime))
    execution = result.unwrap().judge["generate_score"][0]
    assert result.unwrap().score == 0.5
    assert execution.model_call_count == 3
    assert execution.waits == (1.0, 2.0)
    assert clock.sleeps == (1.0, 2.0)
    assert clock() == 3.0


async def test_retry_after_is_honoured_when_longer_than_the_backoff() -> None:
    """A Retry-After longer than the backoff is waited (capped at 30 s)."""
    judge = ScriptedJudge([
        judge_error(429, headers={"Retry-After": "7"}),
        judge_error(503, headers={"retry-after-ms": "100000"}),
        {"score": 1.0},
    ])
    runtime, clock = virtual_runtime()
    result = await scorer(judge, max_retries=5).run(input="q", output="a", runtime=runtime)
    assert result.unwrap().judge["generate_score"][0].waits == (7.0, MODEL_RETRY_AFTER_CAP)
    assert clock.sleeps == (7.0, 30.0)


async def test_budget_spent_fails_with_every_call_counted() -> None:
    """After max_retries retries the error ends the step; model_call_count counts them all."""
    judge = ScriptedJudge([judge_error(500)] * 4)
    runtime, _ = virtual_runtime()
    failure = (await scorer(judge, max_retries=3).run(input="q", output="a", runtime=runtime))
    cause = failure.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.model_calls == 4
    assert judge.calls == 4


async def test_an_unclassified_error_is_retried_as_mastra_does() -> None:
    """Mastra's recorded case: "socket hang up" (no status, nothing classified it) is retried
    by the model-level retry, and the next call answers."""
    judge = ScriptedJudge([JudgeError(kind="unknown", message="socket hang up"), {"score": 0.5}])
    runtime, clock = virtual_runtime()
    result = await scorer(judge, max_retries=1).run(input="q", output="a", runtime=runtime)
    assert result.unwrap().score == 0.5
    assert result.unwrap().judge["generate_score"][0].model_call_count == 2
    assert clock.sleeps == (1.0,)


async def test_a_judge_model_that_raises_is_retried_at_the_model_level() -> None:
    """A ``JudgeModel`` raising (here a ``FunctionJudge``'s function) is an unclassified
    failure: retried like Mastra retries a thrown error."""
    calls: list[int] = []

    def flaky(request: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionResetError("socket hang up")
        return {"score": 1.0}

    runtime, _ = virtual_runtime()
    result = await scorer(FunctionJudge(flaky), max_retries=2).run(
        input="q", output="a", runtime=runtime)
    assert result.unwrap().score == 1.0
    assert len(calls) == 2


@pytest.mark.parametrize(
    "error",
    [
        judge_error(401),
        judge_error(400, message="bad request"),
        judge_error(404),
        JudgeError(kind="unknown", status=418, message="teapot"),
        JudgeError(kind="unknown", code="invalid_api_key"),
        JudgeError(kind="unknown", cause=JudgeError(kind="bad_request", status=400)),
    ],
    ids=["401", "400", "404", "unknown-with-status", "auth-code", "bad-request-cause"],
)
async def test_a_provider_answer_that_is_not_retryable_is_not_retried(error: JudgeError) -> None:
    """An error carrying an HTTP status flagged not retryable, or a known auth failure or bad
    request anywhere in its chain, is not retried by the model level (Mastra: a non-retryable
    API error)."""
    judge = ScriptedJudge([error, {"score": 1.0}])
    runtime, clock = virtual_runtime()
    failure = await scorer(judge, max_retries=3).run(input="q", output="a", runtime=runtime)
    assert isinstance(failure.failure().cause, JudgeFailed)
    assert judge.calls == 1
    assert clock.sleeps == ()


async def test_model_retries_come_before_error_processors() -> None:
    """Each processor retry gets its own model-level retries: (1 + processor retries) times
    (1 + max_retries) calls when every call fails, and processors see only the last error."""
    judge = ScriptedJudge([judge_error(503)] * 6)
    runtime, clock = virtual_runtime()
    failure = await scorer(
        judge, max_retries=2,
        error_processors=[StreamErrorRetryProcessor(max_retries=1)], max_processor_retries=1,
    ).run(input="q", output="a", runtime=runtime)
    cause = failure.failure().cause
    assert isinstance(cause, JudgeFailed)
    assert cause.model_calls == 6
    assert clock.sleeps[:2] == (1.0, 2.0)  # model level, then the processor's wait, then again
    assert clock.sleeps[-2:] == (1.0, 2.0)


async def test_default_is_no_model_retry() -> None:
    """Without max_retries a retryable error is not retried by the model layer."""
    judge = ScriptedJudge([judge_error(429), {"score": 1.0}])
    runtime, _ = virtual_runtime()
    failure = await scorer(judge, max_retries=0).run(input="q", output="a", runtime=runtime)
    assert isinstance(failure.failure().cause, JudgeFailed)
    assert judge.calls == 1


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2", None])
def test_max_retries_must_be_a_count(bad: Any) -> None:
    """A negative, fractional, bool or str max_retries is refused naming the field."""
    with pytest.raises(ScorerDefinitionError, match=r"ModelSettings\.max_retries"):
        ModelSettings(max_retries=bad)


@settings(max_examples=200, deadline=None)
@given(
    index=st.integers(min_value=0, max_value=10_000),
    header=st.one_of(
        st.none(),
        st.integers(min_value=0, max_value=10**12).map(str),
        st.integers(min_value=0, max_value=4_000_000_000).map(
            lambda at: formatdate(at, usegmt=True)
        ),
        st.text(max_size=30),
    ),
    ms=st.booleans(),
    now=st.floats(min_value=0, max_value=4e9),
)
def test_wait_law(index: int, header: str | None, ms: bool, now: float) -> None:
    """The wait is max(backoff, min(retry_after, 30)) with retry_after the kernel's one reading
    of the headers (read_retry_after), finite, and never below the backoff."""
    headers = {} if header is None else {("retry-after-ms" if ms else "retry-after"): header}
    error = JudgeError(kind="rate_limit", status=429, headers=headers)
    wait = model_retry_wait(index, error, now=now)
    backoff = 2.0 ** min(index, 60)
    assert math.isfinite(wait)
    assert wait >= backoff
    asked = read_retry_after(error, now=now)
    assert wait == (backoff if asked is None else max(backoff, min(asked, 30.0)))
    stripped = (header or "").strip()
    if header is not None and stripped.isascii() and stripped.isdigit():
        assert asked == int(stripped) / (1000.0 if ms else 1.0)


async def test_an_http_date_retry_after_is_honoured_in_virtual_time() -> None:
    """RFC 9110's date form: a 429 asking to wait until 7 s after the virtual wall clock's now
    waits 7 s (not the 1 s backoff); one asking for a past date waits the backoff (2 s)."""
    start = 1_790_000_000.0
    judge = ScriptedJudge([
        judge_error(429, headers={"Retry-After": formatdate(start + 7, usegmt=True)}),
        judge_error(429, headers={"Retry-After": formatdate(start - 60, usegmt=True)}),
        {"score": 1.0},
    ])
    runtime, clock = virtual_runtime(start=start)
    result = await scorer(judge, max_retries=2).run(input="q", output="a", runtime=runtime)
    assert result.unwrap().judge["generate_score"][0].waits == (7.0, 2.0)
    assert clock.sleeps == (7.0, 2.0)


async def test_the_date_is_read_against_the_runtime_wall_clock_not_the_monotonic_one() -> None:
    """The run's ``Runtime.wall_clock`` (seconds since the epoch) reads the date; its
    monotonic ``clock`` (here 0, far from any calendar date) does not."""
    start = 1_790_000_000.0
    wall = VirtualClock(start)
    monotonic = VirtualClock()
    judge = ScriptedJudge([
        judge_error(429, headers={"Retry-After": formatdate(start + 5, usegmt=True)}),
        {"score": 1.0},
    ])
    runtime = Runtime(clock=monotonic, sleep=monotonic.sleep, wall_clock=wall)
    result = await scorer(judge, max_retries=1).run(input="q", output="a", runtime=runtime)
    assert result.unwrap().score == 1.0
    assert monotonic.sleeps == (5.0,)
