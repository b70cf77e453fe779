"""Tests of the delay policies: formulas, composition, determinism, validation."""

from __future__ import annotations

import math
import random

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import scorecore_adapters.delays as mod
from scorecore_adapters.delays import (
    CappedDelay,
    ConstantDelay,
    DelayPolicy,
    ExponentialBackoff,
    MaxDelay,
    SumDelay,
    exponential_backoff,
)
from scorecore_adapters.retry import RetryInfo
from scorecore_adapters.testing import judge_error
from tests.module_checks import assert_all_is_sorted_and_complete
from tests.strategies_adapters import REQUEST

small = st.floats(min_value=0, max_value=100, allow_nan=False)
counts = st.integers(min_value=0, max_value=2000)


class FixedRandom:
    """A random source that always returns the same unit draw."""

    def __init__(self, unit: float) -> None:
        self.unit = unit

    def random(self) -> float:
        return self.unit


def info(retry_count: int) -> RetryInfo:
    return RetryInfo(error=judge_error(503), retry_count=retry_count, request=REQUEST)


@given(
    initial=small,
    multiplier=st.floats(min_value=1, max_value=10),
    cap=small,
    jitter=small,
    unit=st.floats(min_value=0, max_value=1, exclude_max=True),
    n=counts,
)
def test_backoff_formula(
    *,
    initial: float, multiplier: float, cap: float, jitter: float, unit: float, n: int
) -> None:
    """The wait is min(max, initial * multiplier**n + jitter * U), never negative or infinite."""
    policy = ExponentialBackoff(
        initial=initial, multiplier=multiplier, max=cap, jitter=jitter, random=FixedRandom(unit)
    )
    got = policy.wait(n)
    try:
        base = initial * multiplier**n if initial else 0.0
    except OverflowError:
        base = math.inf
    assert got == min(cap, base + jitter * unit)
    assert 0 <= got <= cap
    assert policy(info(n)) == got


def test_backoff_defaults_follow_stamina() -> None:
    """Defaults: 0.1 s doubling, up to 1 s jitter, at most 5 s."""
    policy = ExponentialBackoff(random=FixedRandom(0.0))
    assert [policy.wait(n) for n in range(8)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]
    jittered = ExponentialBackoff(random=FixedRandom(0.5))
    assert jittered.wait(0) == pytest.approx(0.6)


def test_backoff_survives_huge_counts() -> None:
    """A huge retry count does not overflow: the cap applies."""
    assert ExponentialBackoff(jitter=0).wait(10**6) == 5.0
    assert exponential_backoff(
        10**6, initial=0.0, multiplier=2.0, max=5.0, jitter=0.0, unit=0.0
    ) == 0.0


@given(seed=st.integers(), ns=st.lists(counts, max_size=20))
def test_seeded_backoff_is_deterministic(seed: int, ns: list[int]) -> None:
    """Two backoffs seeded alike produce the same waits."""
    a = ExponentialBackoff(random=random.Random(seed))  # noqa: S311 - seeded jitter, not crypto
    b = ExponentialBackoff(random=random.Random(seed))  # noqa: S311 - seeded jitter, not crypto
    assert [a.wait(n) for n in ns] == [b.wait(n) for n in ns]


def test_no_jitter_draws_nothing() -> None:
    """With jitter=0 the random source is never consulted."""

    class Exploding:
        def random(self) -> float:
            raise AssertionError("drawn")

    assert ExponentialBackoff(jitter=0, random=Exploding()).wait(2) == 0.4


def test_random_is_not_part_of_equality() -> None:
    """Two backoffs with the same numbers are equal whatever their random source."""
    one, two = random.Random(1), random.Random(2)  # noqa: S311 - jitter, not crypto
    assert ExponentialBackoff(random=one) == ExponentialBackoff(random=two)
    assert "random" not in repr(ExponentialBackoff())


@given(a=small, b=small, n=counts)
def test_sum(a: float, b: float, n: int) -> None:
    """a + b waits the sum; numbers are promoted to constant delays on either side."""
    assert (ConstantDelay(seconds=a) + ConstantDelay(seconds=b)).wait(n) == math.fsum([a, b])
    assert (ConstantDelay(seconds=a) + b).wait(n) == math.fsum([a, b])
    assert (a + ConstantDelay(seconds=b)).wait(n) == math.fsum([a, b])


def test_sum_flattens() -> None:
    """Chained additions build one flat SumDelay."""
    total = ConstantDelay(seconds=1) + 2 + 3
    assert isinstance(total, SumDelay)
    assert len(total.parts) == 3
    assert total.wait(0) == 6.0


@given(a=small, b=small, n=counts)
def test_max(a: float, b: float, n: int) -> None:
    """a | b waits the larger of the two."""
    assert (ConstantDelay(seconds=a) | ConstantDelay(seconds=b)).wait(n) == max(a, b)
    assert isinstance(ConstantDelay(seconds=a) | b, MaxDelay)


@given(a=small, cap=small, n=counts)
def test_cap(a: float, cap: float, n: int) -> None:
    """policy.cap(s) never waits longer than s."""
    capped = ConstantDelay(seconds=a).cap(cap)
    assert isinstance(capped, CappedDelay)
    assert capped.wait(n) == min(a, cap)


def test_composed_example() -> None:
    """A constant floor plus backoff, capped."""
    policy = (ConstantDelay(seconds=0.5) + ExponentialBackoff(jitter=0.0)).cap(1.0)
    assert [policy(info(n)) for n in range(4)] == [0.6, 0.7, 0.9, 1.0]


def test_policies_are_frozen_values() -> None:
    """Policies are immutable, compared by value, and changed with attrs.evolve."""
    policy = ConstantDelay(seconds=1.0)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        policy.seconds = 2.0  # type: ignore[misc]
    assert attrs.evolve(policy, seconds=2.0) == ConstantDelay(seconds=2.0)
    assert hash(ConstantDelay(seconds=1.0)) == hash(policy)


@pytest.mark.parametrize(
    ("build", "needle"),
    [
        (lambda: ConstantDelay(seconds=-1), "ConstantDelay.seconds"),
        (lambda: ConstantDelay(seconds=math.nan), "ConstantDelay.seconds"),
        (lambda: ConstantDelay(seconds="1"), "ConstantDelay.seconds"),  # type: ignore[arg-type]
        (lambda: ExponentialBackoff(initial=-0.1), "ExponentialBackoff.initial"),
        (lambda: ExponentialBackoff(multiplier=0.5), "ExponentialBackoff.multiplier"),
        (lambda: ExponentialBackoff(max=math.inf), "ExponentialBackoff.max"),
        (lambda: ExponentialBackoff(jitter=True), "ExponentialBackoff.jitter"),
        (lambda: CappedDelay(inner=ConstantDelay(seconds=1), max=-1), "CappedDelay.max"),
    ],
)
def test_bad_values_raise_naming_the_field(build: object, needle: str) -> None:
    """Bad numbers raise a ValueError naming the field and the value."""
    assert callable(build)
    with pytest.raises(ValueError, match=needle.replace(".", r"\.")):
        build()


def test_bad_composition_raises() -> None:
    """Adding something that is neither a policy nor a number is a TypeError."""
    with pytest.raises(TypeError, match="delay policy or a number"):
        ConstantDelay(seconds=1) + "2"  # type: ignore[operator]
    with pytest.raises(TypeError, match="random"):
        ExponentialBackoff(random=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="parts"):
        SumDelay(parts=())


def test_base_policy_is_abstract() -> None:
    """DelayPolicy itself computes nothing."""
    with pytest.raises(NotImplementedError):
        DelayPolicy().wait(0)


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and names every public name defined in the module."""
    assert_all_is_sorted_and_complete(mod)
