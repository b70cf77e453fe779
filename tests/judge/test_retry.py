"""Retryability is decided in one place, ``scorecore.judge.retry``, and everything else agrees."""

from __future__ import annotations

import math
import sys
from email.utils import formatdate, parsedate_to_datetime

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import scorecore.judge.retry
import scorecore_adapters.retry
from scorecore.judge import JudgeError
from scorecore.judge.retry import (
    is_auth_error,
    is_retryable_error,
    is_retryable_node,
    is_unknown_error,
    kind_for,
    read_retry_after,
)
from scorecore_adapters.retry import StreamErrorRetryProcessor
from tests import strategies as sts

CLASSIFIERS = (
    "AUTH_CODES", "BUILTIN_RETRYABLE_CODES", "is_auth_error", "is_retryable_error",
    "is_retryable_provider_error", "is_unknown_error",
)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_the_retry_adapter_reuses_the_kernel_classification(name: str) -> None:
    """``scorecore_adapters.retry`` re-exports the kernel's functions; it defines none itself."""
    kernel = getattr(scorecore.judge.retry, name)
    assert getattr(scorecore_adapters.retry, name, None) in (None, kernel)
    assert not hasattr(scorecore_adapters.retry, "_is_auth_node")
    assert not hasattr(scorecore_adapters.retry, "_retryable_by_default")


@given(sts.judge_errors)
def test_the_default_processor_retries_exactly_the_retryable_errors(error: JudgeError) -> None:
    """With no matchers, the processor would retry an error iff ``is_retryable_error`` says so."""
    assert StreamErrorRetryProcessor().would_retry(error) == is_retryable_error(error)
    unknown = StreamErrorRetryProcessor(retry_unknown_errors=True).would_retry(error)
    assert unknown == (is_retryable_error(error) or is_unknown_error(error))


@given(st.none() | st.integers(100, 599), st.none() | sts.text)
def test_a_classified_error_is_retryable_as_its_kind_says(
    status: int | None, code: str | None
) -> None:
    """An adapter's error (kind from ``kind_for``) is retryable by default iff transient or 409."""
    kind = kind_for(status, code)
    error = JudgeError(kind=kind, status=status, code=code)
    transient = kind in ("rate_limit", "server", "timeout", "network")
    assert error.is_retryable == (transient or status == 409)
    if is_auth_error(error) or status == 400:
        assert not is_retryable_node(error)
        assert not is_retryable_error(error)


def test_a_crashed_process_is_retryable_by_default() -> None:
    """Kind ``"crashed"``: the process running a local model died; a new one may answer."""
    error = JudgeError(kind="crashed", code="SIGSEGV", message="the worker died: SIGSEGV")
    assert error.is_retryable
    assert is_retryable_error(error)
    assert StreamErrorRetryProcessor().would_retry(error)


# --- Retry-After: one reading, scorecore.judge.retry.read_retry_after -------------------------

WALL = 1_790_000_000.0  # 2026-09-21, seconds since the Unix epoch

_odd_values = st.one_of(
    st.text(max_size=40),
    st.integers(-(10**400), 10**400).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from([
        "nan", "NaN", "inf", "-inf", "-1", "+5", "1e309", "9" * 400, "\uff11\uff12", "١٢",
        "Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 00 Foo 0000",
        "0001-01-01T00:00:00", "9999-12-31T23:59:59+14:00", "Wed, 21 Oct 2026 07:28:00 +9999",
        "\x00", "\ud800", " 42 ", "",
    ]),
    st.integers(0, 253_402_300_799).map(lambda at: formatdate(at, usegmt=True)),
)


@given(
    ms=st.none() | _odd_values,
    seconds=st.none() | _odd_values,
    now=st.floats(allow_nan=True, allow_infinity=True),
    depth=st.integers(1, 3),
)
def test_read_retry_after_never_raises_and_is_finite(
    ms: str | None, seconds: str | None, now: float, depth: int
) -> None:
    """Any header values and any ``now``: never raises; ``None`` or a finite number >= 0."""
    headers = {
        name: value
        for name, value in (("retry-after-ms", ms), ("Retry-After", seconds))
        if value is not None
    }
    error = JudgeError(kind="rate_limit", status=429, headers=headers)
    for _ in range(depth - 1):
        error = JudgeError(kind="server", status=503, cause=error)
    got = read_retry_after(error, now=now)
    assert got is None or (isinstance(got, float) and math.isfinite(got) and got >= 0)


@given(ahead=st.integers(-(10**9), 10**9), start=st.integers(0, 4_000_000_000))
def test_an_http_date_is_the_seconds_until_it_and_0_once_past(ahead: int, start: int) -> None:
    """RFC 9110's HTTP-date form, read against ``now``: ``at - now``, or 0 for a past date."""
    date = formatdate(start + ahead, usegmt=True) if start + ahead >= 0 else None
    assume(date is not None)
    error = JudgeError(kind="rate_limit", status=429, headers={"Retry-After": date})
    assert read_retry_after(error, now=float(start)) == float(max(ahead, 0))


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "12"}, 12.0),
        ({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}, None),  # read against WALL below
        ({"retry-after": "1.5"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "\uff11\uff12"}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "9" * 400}, sys.float_info.max),
        ({}, None),
    ],
)
def test_read_retry_after_examples(headers: dict[str, str], expected: float | None) -> None:
    """Each header form, and the values that are ignored rather than guessed at."""
    error = JudgeError(kind="rate_limit", status=429, headers=headers)
    if headers.get("retry-after", "").endswith("GMT"):
        at = parsedate_to_datetime(headers["retry-after"]).timestamp()
        assert read_retry_after(error, now=at - 7) == 7.0
        assert read_retry_after(error, now=at + 7) == 0.0
    else:
        assert read_retry_after(error, now=WALL) == expected


def test_a_nan_now_cannot_read_a_date() -> None:
    """A NaN ``now`` leaves a date unread (``None``) rather than waiting NaN seconds."""
    error = JudgeError(kind="server", headers={"retry-after": formatdate(WALL, usegmt=True)})
    assert read_retry_after(error, now=math.nan) is None


@given(headers=st.dictionaries(st.sampled_from(["retry-after", "retry-after-ms"]), _odd_values),
       now=st.floats(0, 4e9))
def test_the_retry_adapter_reads_retry_after_through_the_kernel(
    headers: dict[str, str], now: float
) -> None:
    """``scorecore_adapters.retry.retry_after_seconds`` is the kernel's reading, clock called."""
    error = JudgeError(kind="rate_limit", status=429, headers=headers)
    assert scorecore_adapters.retry.retry_after_seconds(error, now=lambda: now) == (
        read_retry_after(error, now=now)
    )


def test_the_first_usable_header_in_the_cause_chain_wins() -> None:
    """A past date is an answer (retry at once), so it stops the walk; garbage does not."""
    inner = JudgeError(kind="rate_limit", status=429, headers={"retry-after": "7"})
    past = JudgeError(kind="server", status=503, cause=inner,
                      headers={"retry-after": formatdate(WALL - 60, usegmt=True)})
    garbage = JudgeError(kind="server", status=503, cause=inner, headers={"retry-after": "1.5"})
    assert read_retry_after(past, now=WALL) == 0.0
    assert read_retry_after(garbage, now=WALL) == 7.0
