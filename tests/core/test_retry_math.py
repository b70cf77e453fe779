"""Retry math has one home, ``scorecore.judge.retry``: every wait is computed by it."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import scorecore.judge.retry as retry_math
from scorecore._core._backoff import MODEL_RETRY_AFTER_CAP, model_retry_wait
from scorecore.judge import JudgeError
from scorecore.judge.retry import exponential_backoff, read_retry_after, retry_wait
from scorecore_adapters import delays
from scorecore_adapters.delays import ExponentialBackoff
from scorecore_adapters.retry import wait_seconds

seconds = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)
headers = st.one_of(
    st.just({}),
    st.builds(lambda n: {"retry-after": str(n)}, st.integers(0, 10**6)),
    st.builds(lambda n: {"retry-after-ms": str(n)}, st.integers(0, 10**9)),
    st.builds(lambda s: {"retry-after": s}, st.text(max_size=12)),
)


def test_the_formulas_live_in_one_module() -> None:
    """The backoff formula, the Retry-After reading and the capped wait share one module, and
    the adapters' ``exponential_backoff`` is that same function, not a copy."""
    homes = {f.__module__ for f in (exponential_backoff, read_retry_after, retry_wait)}
    assert len(homes) == 1, homes
    assert delays.exponential_backoff is retry_math.exponential_backoff
    assert model_retry_wait.__module__ in homes


@given(index=st.integers(0, 2_000), raw=headers, now=seconds)
def test_model_level_wait_is_backoff_capped_retry_after(
    index: int, raw: dict[str, str], now: float
) -> None:
    """``ModelSettings.max_retries`` waits ``retry_wait(1 s · 2ⁿ backoff, Retry-After, 30 s)``."""
    error = JudgeError(kind="rate_limit", status=429, headers=raw)
    backoff = exponential_backoff(
        index, initial=1.0, multiplier=2.0, max=2.0**60, jitter=0.0, unit=0.0
    )
    expected = retry_wait(backoff, read_retry_after(error, now=now), MODEL_RETRY_AFTER_CAP)
    got = model_retry_wait(index, error, now=now)
    assert got == expected
    assert got == max(2.0 ** min(index, 60), min(read_retry_after(error, now=now) or 0.0, 30.0))


@given(delay=seconds, retry_after=st.one_of(st.none(), seconds), cap=seconds)
def test_processor_wait_is_the_shared_formula(
    delay: float, retry_after: float | None, cap: float
) -> None:
    """The retry processor's ``wait_seconds`` agrees with ``retry_wait`` on valid arguments."""
    assert wait_seconds(delay, retry_after, cap) == retry_wait(delay, retry_after, cap)


@given(
    count=st.integers(0, 200),
    initial=st.floats(0.0, 10.0),
    multiplier=st.floats(1.0, 4.0),
    cap=st.floats(0.0, 100.0),
    jitter=st.floats(0.0, 2.0),
    seed=st.integers(0, 2**32),
)
def test_delay_policy_uses_the_shared_formula(  # noqa: PLR0917 - hypothesis passes each draw
    count: int, initial: float, multiplier: float, cap: float, jitter: float, seed: int
) -> None:
    """``ExponentialBackoff.wait`` is ``exponential_backoff`` with a draw from its random source."""
    policy = ExponentialBackoff(
        initial=initial, multiplier=multiplier, max=cap, jitter=jitter,
        random=random.Random(seed),  # noqa: S311 - a seeded source, not for secrets
    )
    unit = random.Random(seed).random() if jitter > 0 else 0.0  # noqa: S311 - as above
    expected = exponential_backoff(
        count, initial=initial, multiplier=multiplier, max=cap, jitter=jitter, unit=unit
    )
    assert policy.wait(count) == expected


@pytest.mark.parametrize(
    ("delay", "retry_after", "cap", "expected"),
    [
        (0.4, 0.0, 30.0, 0.4),
        (0.0, 100.0, 0.3, 0.3),
        (0.7, 100.0, 0.2, 0.7),
        (2.0, None, 30.0, 2.0),
        (1.0, math.nan, 30.0, 1.0),
        (0.0, -3.0, 30.0, 0.0),
    ],
)
def test_retry_wait_examples(
    delay: float, retry_after: float | None, cap: float, expected: float
) -> None:
    """``max(delay, min(retry_after, cap))``; a NaN or negative Retry-After asks for nothing."""
    assert retry_wait(delay, retry_after, cap) == expected
