"""Tests of StreamErrorRetryProcessor, Retry-After parsing and the matcher policies."""

from __future__ import annotations

import math
import sys
from collections.abc import Awaitable, Callable
from email.utils import formatdate

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import scorecore_adapters.retry as mod
from scorecore.judge import ErrorProcessor, JudgeError, JudgeRequest, Retry, RetryClassifier
from scorecore.judge.retry import AUTH_CODES
from scorecore_adapters.delays import ConstantDelay, ExponentialBackoff
from scorecore_adapters.retry import (
    BUILTIN_RETRYABLE_CODES,
    RetryInfo,
    RetryPolicy,
    StreamErrorRetryProcessor,
    is_auth_error,
    is_retryable_error,
    is_retryable_provider_error,
    retry_after_seconds,
    wait_seconds,
)
from scorecore_adapters.testing import ScriptedJudge, VirtualClock, judge_error
from tests import strategies as sts
from tests.module_checks import assert_all_is_sorted_and_complete
from tests.strategies_adapters import (
    REQUEST,
    any_delay,
    auth_statuses,
    http_dates,
    retry_after_headers,
    retryable_statuses,
    seconds,
)

NOW = 1_700_000_000.0


def fixed_now() -> float:
    return NOW


def decide(
    proc: StreamErrorRetryProcessor,
    error: JudgeError,
    retry_count: int = 0,
    backend: str = "asyncio",
) -> Retry | None:
    return anyio.run(proc.process_error, error, retry_count, REQUEST, backend=backend)


def clamp(value: float) -> float:
    return value if math.isfinite(value) and value > 0 else 0.0


def test_processor_satisfies_the_error_processor_port() -> None:
    """The processor is an ErrorProcessor (checked by mypy through this assignment)."""
    proc: ErrorProcessor = StreamErrorRetryProcessor()
    assert StreamErrorRetryProcessor.id == "stream-error-retry-processor"
    assert proc is not None


def test_defaults_match_the_reference() -> None:
    """Defaults: one retry, no matchers, no unknown errors, no delay, a 30 s Retry-After cap."""
    proc = StreamErrorRetryProcessor()
    assert proc.max_retries == 1
    assert proc.matchers == ()
    assert proc.retry_unknown_errors is False
    assert proc.delay is None
    assert proc.max_retry_after == 30.0
    assert proc.on_retry is None


# --- the wait formula -------------------------------------------------------------------------


@given(
    delay=any_delay,
    headers=retry_after_headers(),
    cap=st.one_of(seconds, st.floats(allow_nan=True, allow_infinity=True)),
    status=retryable_statuses,
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_every_wait_equals_the_formula(
    delay: float,
    headers: tuple[dict[str, str], float | None],
    cap: float,
    status: int,
    backend: str,
) -> None:
    """Wait = max(delay, min(retry_after, max_retry_after)) with invalid values counting as 0."""
    raw, retry_after = headers
    proc = StreamErrorRetryProcessor(delay=delay, max_retry_after=cap, now=fixed_now)
    got = decide(proc, judge_error(status, headers=raw), backend=backend)
    capped = 0.0 if retry_after is None else min(retry_after, clamp(cap))
    assert got == Retry(after=max(clamp(float(delay)), capped))


@given(delay=any_delay, retry_after=st.one_of(st.none(), seconds), cap=any_delay)
def test_wait_seconds_is_the_formula(delay: float, retry_after: float | None, cap: float) -> None:
    """The pure formula agrees with its definition and is always finite and non-negative."""
    got = wait_seconds(delay, retry_after, cap)
    provider = 0.0 if retry_after is None else min(retry_after, clamp(cap))
    expected = max(clamp(float(delay)), provider)
    assert got == expected
    assert math.isfinite(got)
    assert got >= 0


@pytest.mark.parametrize(
    ("options", "headers", "expected"),
    [
        ({}, {"retry-after": "1"}, 1.0),
        ({}, {"retry-after-ms": "250", "retry-after": "3"}, 0.25),
        ({"max_retry_after": 0.3}, {"retry-after": "100"}, 0.3),
        ({"delay": 0.4}, {"retry-after": "0"}, 0.4),
        ({"delay": lambda _info: 0.7, "max_retry_after": 0.2}, {"retry-after": "100"}, 0.7),
        ({"max_retry_after": -5}, {"retry-after": "10"}, 0.0),
        ({"max_retry_after": math.nan}, {"retry-after": "10"}, 0.0),
        ({"delay": -1.0}, {}, 0.0),
        ({"delay": math.inf}, {}, 0.0),
        ({"delay": math.nan}, {"retry-after": "2"}, 2.0),
    ],
)
def test_reference_observations(
    options: dict[str, object], headers: dict[str, str], expected: float
) -> None:
    """The reference's observed waits, in seconds, plus invalid delays and caps counting as 0."""
    proc = StreamErrorRetryProcessor(now=fixed_now, **options)  # type: ignore[arg-type]
    assert decide(proc, judge_error(429, headers=headers)) == Retry(after=expected)


def test_invalid_cap_is_stored_as_zero() -> None:
    """An invalid or negative max_retry_after is normalised to 0, as in the reference."""
    assert StreamErrorRetryProcessor(max_retry_after=-1).max_retry_after == 0.0
    assert StreamErrorRetryProcessor(max_retry_after=math.inf).max_retry_after == 0.0


# --- Retry-After parsing ----------------------------------------------------------------------


@given(ms=st.integers(0, 10**9), s=st.integers(0, 10**9))
def test_retry_after_ms_wins(ms: int, s: int) -> None:
    """retry-after-ms takes precedence over retry-after on the same error."""
    err = judge_error(429, headers={"Retry-After-Ms": str(ms), "Retry-After": str(s)})
    assert retry_after_seconds(err, now=fixed_now) == ms / 1000


@given(s=st.integers(0, 10**9), pad=st.sampled_from(["", " ", "\t"]))
def test_retry_after_whole_seconds(s: int, pad: str) -> None:
    """retry-after in whole seconds (surrounding blanks ignored)."""
    err = judge_error(429, headers={"retry-after": f"{pad}{s}{pad}"})
    assert retry_after_seconds(err, now=fixed_now) == float(s)


@pytest.mark.parametrize("value", ["1.5", "1e3", "0.0", ".5", "-1", "+2", "2.", "1E-3", "", " "])
def test_decimal_and_signed_values_are_ignored(value: str) -> None:
    """Decimal-looking, signed or blank values are ignored rather than parsed."""
    err = judge_error(429, headers={"retry-after": value, "retry-after-ms": value})
    assert retry_after_seconds(err, now=fixed_now) is None


@pytest.mark.parametrize("value", ["soon", "Thu, 99 Foo 2024", "12abc", "\uff11\uff12"])
def test_garbage_is_ignored(value: str) -> None:
    """Unparseable values (and non-ASCII digits) are ignored."""
    err = judge_error(429, headers={"retry-after": value, "retry-after-ms": value})
    assert retry_after_seconds(err, now=fixed_now) is None


@given(date=http_dates(), now=st.integers(0, 4_000_000_000))
def test_http_dates_count_only_in_the_future(date: tuple[str, int], now: int) -> None:
    """An HTTP date gives the seconds until it when in the future, and 0 (retry at once)
    otherwise; either way the processor waits what it waited before (its delay for a past date)."""
    text, at = date
    err = judge_error(503, headers={"retry-after": text})
    got = retry_after_seconds(err, now=lambda: float(now))
    assert got == float(max(at - now, 0))
    expected = min(max(at - now, 0.4), 30.0)
    assert decide(StreamErrorRetryProcessor(delay=0.4, now=lambda: float(now)), err) == Retry(
        after=expected
    )


def test_http_date_example() -> None:
    """A date 120 s ahead of the injected now means a 120 s wait (capped at 30 s by default)."""
    err = judge_error(503, headers={"retry-after": formatdate(NOW + 120, usegmt=True)})
    assert retry_after_seconds(err, now=fixed_now) == 120.0
    assert decide(StreamErrorRetryProcessor(now=fixed_now), err) == Retry(after=30.0)
    assert decide(StreamErrorRetryProcessor(now=lambda: NOW + 500), err) == Retry(after=0.0)


def test_iso_dates_are_accepted() -> None:
    """An ISO 8601 date-time (naive means UTC) is read like an HTTP date."""
    err = judge_error(503, headers={"retry-after": "1970-01-01T00:01:00"})
    assert retry_after_seconds(err, now=lambda: 15.0) == 45.0


def test_huge_values_are_capped() -> None:
    """Absurdly long values do not overflow (they read as the largest finite float); the cap
    applies."""
    err = judge_error(429, headers={"retry-after": "9" * 400})
    assert retry_after_seconds(err, now=fixed_now) == sys.float_info.max
    assert decide(StreamErrorRetryProcessor(), err) == Retry(after=30.0)


def test_retry_after_walks_the_cause_chain() -> None:
    """The first error in the chain with a usable header wins."""
    inner = judge_error(429, headers={"retry-after": "7"})
    middle = judge_error(503, headers={"retry-after": "1.5"}, cause=inner)
    outer = judge_error(code="ECONNRESET", cause=middle)
    assert retry_after_seconds(outer, now=fixed_now) == 7.0
    first = judge_error(503, headers={"retry-after": "2"}, cause=inner)
    assert retry_after_seconds(first, now=fixed_now) == 2.0


# --- what is retried --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_retryable_statuses_are_retried(status: int) -> None:
    """408, 409, 429 and 5xx are retried by default."""
    assert decide(StreamErrorRetryProcessor(), judge_error(status)) == Retry(after=0.0)


@pytest.mark.parametrize("code", ["ECONNRESET", "ETIMEDOUT", "ECONNREFUSED"])
def test_network_errors_are_retried(code: str) -> None:
    """Connection resets, refusals and timeouts are retried by default."""
    assert decide(StreamErrorRetryProcessor(), judge_error(code=code)) == Retry(after=0.0)


@pytest.mark.parametrize("code", BUILTIN_RETRYABLE_CODES)
def test_builtin_matcher_codes(code: str) -> None:
    """The built-in matcher retries provider codes containing the known substrings."""
    err = JudgeError(kind="unknown", code=f"x_{code.upper()}_y", is_retryable=False)
    assert is_retryable_provider_error(err)
    assert decide(StreamErrorRetryProcessor(), err) == Retry(after=0.0)
    by_type = JudgeError(kind="unknown", type=code, is_retryable=False)
    assert is_retryable_provider_error(by_type)


def test_builtin_matcher_message() -> None:
    """A message saying "you can retry your request" is retried."""
    err = JudgeError(
        kind="unknown", message="Something broke. YOU CAN RETRY YOUR REQUEST.", is_retryable=False
    )
    assert decide(StreamErrorRetryProcessor(), err) == Retry(after=0.0)


def test_unknown_errors_are_not_retried_by_default() -> None:
    """An error nothing recognises is not retried unless retry_unknown_errors is set."""
    err = JudgeError(kind="unknown", message="weird", is_retryable=False)
    assert decide(StreamErrorRetryProcessor(), err) is None
    assert decide(StreamErrorRetryProcessor(retry_unknown_errors=True), err) == Retry(after=0.0)


def _auth_errors() -> list[JudgeError]:
    errors = [judge_error(401), judge_error(403)]
    errors += [judge_error(code=code) for code in sorted(AUTH_CODES)]
    errors += [judge_error(type=code.upper()) for code in sorted(AUTH_CODES)]
    errors += [judge_error(code=f"  {code} ") for code in sorted(AUTH_CODES)]
    # Even when an adapter wrongly flags them retryable, or they look retryable otherwise.
    errors += [
        JudgeError(kind="server", status=401, is_retryable=True),
        JudgeError(kind="auth", message="you can retry your request", is_retryable=True),
        judge_error(403, headers={"retry-after": "1"}),
        judge_error(503, cause=judge_error(401)),
        judge_error(401, cause=judge_error(429)),
    ]
    return errors


@pytest.mark.parametrize("error", _auth_errors(), ids=lambda e: e.describe())
@pytest.mark.parametrize("unknown", [False, True])
def test_auth_errors_are_never_retried(error: JudgeError, unknown: bool) -> None:
    """401, 403 and every known auth code are never retried, with or without unknown errors."""
    assert is_auth_error(error)
    assert not is_retryable_error(error)
    proc = StreamErrorRetryProcessor(max_retries=5, retry_unknown_errors=unknown)
    assert decide(proc, error) is None


@given(status=auth_statuses, count=st.integers(0, 5), delay=seconds)
def test_auth_never_retried_property(status: int, count: int, delay: float) -> None:
    """No retry count or delay makes the default processor retry an auth failure."""
    proc = StreamErrorRetryProcessor(max_retries=10, retry_unknown_errors=True, delay=delay)
    assert decide(proc, judge_error(status), count) is None


def test_a_matcher_may_retry_an_auth_error() -> None:
    """Matchers win: a user matcher that names an auth error explicitly retries it."""
    proc = StreamErrorRetryProcessor(matchers=[lambda e: e.status == 401])
    assert decide(proc, judge_error(401)) == Retry(after=0.0)


@pytest.mark.parametrize(
    "error",
    [
        judge_error(400),
        judge_error(400, code="context_length_exceeded"),
        judge_error(400, code="invalid_request_error"),
        JudgeError(kind="bad_request", status=400, is_retryable=True),
        judge_error(400, code="server_error"),
    ],
    ids=lambda e: e.describe(),
)
def test_bad_requests_are_not_retried_by_default(error: JudgeError) -> None:
    """A 400 (including context-length) is never retried without a matcher."""
    assert not is_retryable_error(error)
    assert decide(StreamErrorRetryProcessor(max_retries=3), error) is None


def test_a_matcher_may_retry_a_bad_request() -> None:
    """A 400 is retried when a matcher says so."""
    proc = StreamErrorRetryProcessor(matchers=[lambda e: e.code == "flaky_validation"])
    assert decide(proc, judge_error(400, code="flaky_validation")) == Retry(after=0.0)
    assert decide(proc, judge_error(400, code="other")) is None


@pytest.mark.parametrize(
    "error",
    [
        judge_error(400),
        judge_error(400, code="context_length_exceeded"),
        judge_error(400, message="prompt is too long"),
        judge_error(404),
        judge_error(422),
        judge_error(kind="bad_request"),
        judge_error(kind="context_length"),
        JudgeError(kind="unknown", status=400, is_retryable=False),
        JudgeError(kind="unknown", is_retryable=False, cause=judge_error(400)),
        JudgeError(kind="unknown", is_retryable=False, cause=judge_error(401)),
        judge_error(401),
    ],
    ids=lambda e: e.describe(),
)
def test_retry_unknown_errors_does_not_widen_to_bad_requests(error: JudgeError) -> None:
    """Unlike Mastra: retry_unknown_errors never retries a 400, a bad request,
    a context-length error or an auth failure; only errors of kind "unknown"."""
    assert not mod.is_unknown_error(error)
    proc = StreamErrorRetryProcessor(max_retries=3, retry_unknown_errors=True)
    assert decide(proc, error) is None


def test_retry_unknown_errors_widens_to_unknown_errors() -> None:
    """Errors of kind "unknown" (a malformed reply, an unclassified exception) are retried."""
    proc = StreamErrorRetryProcessor(retry_unknown_errors=True)
    for error in (
        JudgeError(kind="unknown", message="weird", is_retryable=False),
        JudgeError(kind="unknown", code="malformed_response", status=200, is_retryable=False),
        JudgeError(kind="unknown", is_retryable=False, cause=JudgeError(kind="unknown")),
    ):
        assert mod.is_unknown_error(error)
        assert decide(proc, error) == Retry(after=0.0)


def test_a_matcher_still_retries_a_bad_request_with_unknown_errors() -> None:
    """With retry_unknown_errors, a 400 is retried only when a user matcher matches it."""
    proc = StreamErrorRetryProcessor(
        retry_unknown_errors=True, matchers=[lambda e: e.code == "context_length_exceeded"]
    )
    assert decide(proc, judge_error(400, code="context_length_exceeded")) == Retry(after=0.0)
    assert decide(proc, judge_error(400, code="invalid_request_error")) is None


def test_a_matcher_on_a_nested_cause() -> None:
    """The cause chain is walked: a matcher on a nested cause makes the outer error retryable."""
    reset = JudgeError(kind="unknown", code="ECONNRESET", is_retryable=False)
    outer = JudgeError(
        kind="unknown",
        message="stream failed",
        is_retryable=False,
        cause=JudgeError(kind="unknown", message="socket", is_retryable=False, cause=reset),
    )
    assert decide(StreamErrorRetryProcessor(), outer) is None
    proc = StreamErrorRetryProcessor(matchers=[lambda e: e.code == "ECONNRESET"])
    assert decide(proc, outer) == Retry(after=0.0)


def test_a_retryable_cause_is_found_past_non_retryable_metadata() -> None:
    """is_retryable=False on an outer error does not stop the walk."""
    outer = JudgeError(kind="unknown", is_retryable=False, cause=judge_error(503))
    assert is_retryable_error(outer)
    assert decide(StreamErrorRetryProcessor(), outer) == Retry(after=0.0)


def test_matchers_see_every_node_in_order() -> None:
    """Each node is offered to the matchers, outermost first."""
    seen: list[str | None] = []

    def spy(error: JudgeError) -> bool:
        seen.append(error.code)
        return False

    chain = judge_error(code="a", cause=judge_error(code="b", cause=judge_error(code="c")))
    assert decide(StreamErrorRetryProcessor(matchers=[spy]), chain) is None
    assert seen == ["a", "b", "c"]


# --- budgets ----------------------------------------------------------------------------------


@given(max_retries=st.integers(0, 20), count=st.integers(0, 25))
def test_processor_budget(max_retries: int, count: int) -> None:
    """A retryable error is retried exactly while retry_count < max_retries."""
    proc = StreamErrorRetryProcessor(max_retries=max_retries)
    got = decide(proc, judge_error(503), count)
    assert (got is not None) == (count < max_retries)


def test_policy_max_retries_overrides_the_processor() -> None:
    """A matching RetryPolicy brings its own budget."""
    proc = StreamErrorRetryProcessor(
        max_retries=1,
        matchers=[RetryPolicy(match=lambda e: e.code == "ECONNRESET", max_retries=3)],
    )
    reset = judge_error(code="ECONNRESET")
    assert [decide(proc, reset, n) is not None for n in range(5)] == [1, 1, 1, 0, 0]
    assert [decide(proc, judge_error(503), n) is not None for n in range(3)] == [1, 0, 0]


def test_policy_zero_budget_refuses() -> None:
    """A policy with max_retries=0 refuses even when the processor allows more."""
    proc = StreamErrorRetryProcessor(
        max_retries=5, matchers=[RetryPolicy(match=lambda e: e.code == "nope", max_retries=0)]
    )
    err = JudgeError(kind="unknown", code="nope", is_retryable=False)
    assert decide(proc, err) is None


# --- delays and hooks -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_sync_delay_function_gets_retry_info(anyio_backend: str) -> None:
    """A sync delay function receives the error, the retry count and the request."""
    seen: list[RetryInfo] = []

    def delay(info: RetryInfo) -> float:
        seen.append(info)
        return 0.5 * (info.retry_count + 1)

    err = judge_error(503)
    proc = StreamErrorRetryProcessor(max_retries=3, delay=delay)
    got = [await proc.process_error(err, n, REQUEST) for n in range(3)]
    assert got == [Retry(after=0.5), Retry(after=1.0), Retry(after=1.5)]
    assert [i.retry_count for i in seen] == [0, 1, 2]
    assert all(i.error is err and i.request is REQUEST and i.delay is None for i in seen)


@pytest.mark.anyio
async def test_async_delay_function(anyio_backend: str) -> None:
    """An async delay function is awaited."""

    async def delay(info: RetryInfo) -> float:
        await anyio.lowlevel.checkpoint()
        return 2.0 + info.retry_count

    proc = StreamErrorRetryProcessor(max_retries=2, delay=delay)
    assert await proc.process_error(judge_error(503), 1, REQUEST) == Retry(after=3.0)


@pytest.mark.anyio
async def test_delay_function_result_is_clamped(anyio_backend: str) -> None:
    """Negative or non-finite results count as 0; non-numbers are a TypeError."""
    for bad in (-3.0, math.nan, math.inf, -math.inf):
        proc = StreamErrorRetryProcessor(delay=lambda _i, bad=bad: bad)
        assert await proc.process_error(judge_error(503), 0, REQUEST) == Retry(after=0.0)
    broken = StreamErrorRetryProcessor(delay=lambda _i: "soon")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="delay function's result"):
        await broken.process_error(judge_error(503), 0, REQUEST)


@pytest.mark.anyio
async def test_policy_delay_overrides_processor_delay(anyio_backend: str) -> None:
    """A matching policy's delay replaces the processor's."""
    proc = StreamErrorRetryProcessor(
        delay=9.0, matchers=[RetryPolicy(match=lambda e: e.code == "x", delay=1.0)]
    )
    err = JudgeError(kind="unknown", code="x", is_retryable=False)
    assert await proc.process_error(err, 0, REQUEST) == Retry(after=1.0)
    assert await proc.process_error(judge_error(503), 0, REQUEST) == Retry(after=9.0)


@pytest.mark.anyio
async def test_delay_policies_plug_in(anyio_backend: str) -> None:
    """Delay policies from scorecore_adapters.delays are valid delays."""
    proc = StreamErrorRetryProcessor(
        max_retries=4, delay=ExponentialBackoff(initial=1.0, jitter=0.0, max=5.0)
    )
    waits = [await proc.process_error(judge_error(503), n, REQUEST) for n in range(4)]
    assert waits == [Retry(after=1.0), Retry(after=2.0), Retry(after=4.0), Retry(after=5.0)]
    policy = RetryPolicy(match=lambda e: e.status == 503, delay=ConstantDelay(seconds=0.25))
    proc2 = StreamErrorRetryProcessor(matchers=[policy])
    assert await proc2.process_error(judge_error(503), 0, REQUEST) == Retry(after=0.25)


@pytest.mark.anyio
@pytest.mark.parametrize("is_async", [False, True])
async def test_on_retry_is_called_with_the_delay(anyio_backend: str, is_async: bool) -> None:
    """on_retry (sync or async) gets the final wait before the processor answers."""
    calls: list[RetryInfo] = []

    def sync_hook(info: RetryInfo) -> None:
        calls.append(info)

    async def async_hook(info: RetryInfo) -> None:
        await anyio.lowlevel.checkpoint()
        calls.append(info)

    hook: Callable[[RetryInfo], Awaitable[None] | None] = async_hook if is_async else sync_hook
    proc = StreamErrorRetryProcessor(delay=0.5, on_retry=hook, now=fixed_now)
    err = judge_error(429, headers={"retry-after": "2"})
    assert await proc.process_error(err, 0, REQUEST) == Retry(after=2.0)
    assert len(calls) == 1
    assert calls[0].delay == 2.0
    assert calls[0].retry_count == 0
    assert calls[0].error is err
    # Not called when the processor refuses.
    assert await proc.process_error(err, 1, REQUEST) is None
    assert await proc.process_error(judge_error(401), 0, REQUEST) is None
    assert len(calls) == 1


@pytest.mark.anyio
async def test_policy_on_retry_overrides(anyio_backend: str) -> None:
    """A matching policy's on_retry replaces the processor's."""
    outer: list[float | None] = []
    inner: list[float | None] = []
    proc = StreamErrorRetryProcessor(
        on_retry=lambda i: outer.append(i.delay),
        matchers=[
            RetryPolicy(match=lambda e: e.code == "x", on_retry=lambda i: inner.append(i.delay))
        ],
    )
    await proc.process_error(JudgeError(kind="unknown", code="x", is_retryable=False), 0, REQUEST)
    await proc.process_error(judge_error(503), 0, REQUEST)
    assert inner == [0.0]
    assert outer == [0.0]


# --- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "needle"),
    [
        ({"max_retries": -1}, ValueError, "max_retries"),
        ({"max_retries": 1.5}, ValueError, "max_retries"),
        ({"max_retries": True}, ValueError, "max_retries"),
        ({"delay": "1s"}, TypeError, "delay"),
        ({"delay": True}, TypeError, "delay"),
        ({"max_retry_after": "30"}, TypeError, "max_retry_after"),
        ({"matchers": [42]}, TypeError, r"matchers\[0\]"),
        ({"on_retry": 3}, TypeError, "on_retry"),
        ({"retry_unknown_errors": 1}, TypeError, "retry_unknown_errors"),
    ],
)
def test_bad_options_raise_naming_the_field(
    options: dict[str, object], error: type[Exception], needle: str
) -> None:
    """Misuse raises a clear error naming the option and the value."""
    with pytest.raises(error, match=needle):
        StreamErrorRetryProcessor(**options)  # type: ignore[arg-type]


def test_bad_policy_raises() -> None:
    """RetryPolicy validates its fields."""
    with pytest.raises(TypeError, match=r"RetryPolicy\.match"):
        RetryPolicy(match=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"RetryPolicy\.max_retries"):
        RetryPolicy(match=bool, max_retries=-2)


def test_processor_is_an_immutable_value() -> None:
    """The processor is frozen and changed with attrs.evolve; plain predicates become policies."""
    proc = StreamErrorRetryProcessor(matchers=[bool])
    assert proc.matchers == (RetryPolicy(match=bool),)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        proc.max_retries = 3  # type: ignore[misc]
    assert attrs.evolve(proc, max_retries=3).max_retries == 3


# --- with a loop like the core's --------------------------------------------------------------


async def _call_with_retries(
    judge: ScriptedJudge,
    processors: list[StreamErrorRetryProcessor],
    max_processor_retries: int,
    clock: VirtualClock,
    request: JudgeRequest = REQUEST,
) -> object:
    """A stand-in for the core's retry loop: consult processors, sleep through the clock."""
    retry_count = 0
    while True:
        result = await judge.generate(request)
        error = result.failure() if not hasattr(result.value_or(None), "text") else None
        if error is None:
            return result
        if retry_count >= max_processor_retries:
            return result
        decision = None
        for proc in processors:
            decision = await proc.process_error(error, retry_count, request)
            if decision is not None:
                break
        if decision is None:
            return result
        await clock.sleep(decision.after)
        retry_count += 1


@pytest.mark.anyio
async def test_reference_worked_example(anyio_backend: str) -> None:
    """max_retries=2 with an ECONNRESET matcher and max_processor_retries=2: at most 3 calls."""
    reset = JudgeError(kind="unknown", code="ECONNRESET", is_retryable=False)
    judge = ScriptedJudge([reset, reset, reset, {"score": 1}])
    clock = VirtualClock()
    proc = StreamErrorRetryProcessor(
        max_retries=2, matchers=[lambda e: e.code == "ECONNRESET"], delay=0.5
    )
    result = await _call_with_retries(judge, [proc], 2, clock)
    assert judge.calls == 3
    assert clock.sleeps == (0.5, 0.5)
    assert clock() == 1.0
    assert "ECONNRESET" in repr(result)


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and names every public name defined in the module."""
    assert_all_is_sorted_and_complete(mod)


# --- would_retry: naming why retrying stopped ----------------------------------------


@given(
    error=sts.judge_errors,
    unknown=st.booleans(),
    with_matcher=st.booleans(),
    count=st.integers(0, 3),
)
def test_would_retry_is_process_error_without_budgets_or_effects(
    error: JudgeError, unknown: bool, with_matcher: bool, count: int
) -> None:
    """would_retry(e) is True exactly when process_error retries e with budget to spare,
    and it calls neither the delay function nor on_retry."""
    calls: list[str] = []
    proc = StreamErrorRetryProcessor(
        max_retries=count + 1,
        retry_unknown_errors=unknown,
        matchers=[lambda e: e.status == 404] if with_matcher else [],
        delay=lambda info: calls.append("delay") or 0.0,
        on_retry=lambda info: calls.append("on_retry"),
    )
    answer = proc.would_retry(error)
    assert calls == []
    assert answer == (decide(proc, error, count) is not None)
    exhausted = attrs.evolve(proc, max_retries=count)
    assert exhausted.would_retry(error) == answer
    assert decide(exhausted, error, count) is None


def test_processor_classifies_retries() -> None:
    """StreamErrorRetryProcessor is a RetryClassifier, so the core can name its stop reason."""
    assert isinstance(StreamErrorRetryProcessor(), RetryClassifier)
    unknown = JudgeError(kind="unknown", message="weird")
    assert not unknown.is_retryable
    assert StreamErrorRetryProcessor(retry_unknown_errors=True).would_retry(unknown)
    assert not StreamErrorRetryProcessor().would_retry(unknown)
    assert not StreamErrorRetryProcessor(retry_unknown_errors=True).would_retry(judge_error(401))
