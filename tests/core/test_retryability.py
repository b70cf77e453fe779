"""Retryability is decided in one place, ``scorecore.judge``, and everything else agrees with it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import scorecore.judge
import scorecore_adapters.retry
from scorecore.judge import (
    JudgeError,
    is_auth_error,
    is_retryable_error,
    is_retryable_node,
    is_unknown_error,
    kind_for,
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
    assert getattr(scorecore_adapters.retry, name, None) in (None, getattr(scorecore.judge, name))
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
