"""Delay policies: data plus pure functions, composable, deterministic under a seeded random.

Every policy is a frozen value callable as ``policy(info) -> seconds`` where ``info`` is a
:class:`~scorecore_adapters.retry.RetryInfo`, so it plugs straight into
``StreamErrorRetryProcessor(delay=...)`` and ``RetryPolicy(delay=...)``. The policy only
computes a number; the core does the sleeping.

- :class:`ExponentialBackoff`: ``min(max, initial * multiplier ** retry_count + U(0, jitter))``
  (stamina's formula; ``retry_count`` is 0 before the first retry), jitter drawn from an
  injected random source. The formula itself is :func:`scorecore.judge.retry.exponential_backoff`
  (re-exported here), the one home of retry math, shared with ``ModelSettings.max_retries``.
- :class:`ConstantDelay`: always the same number of seconds.
- ``a + b`` (:class:`SumDelay`) adds policies (or a policy and a number);
  ``a.cap(s)`` (:class:`CappedDelay`) bounds a policy from above; ``a | b``
  (:class:`MaxDelay`) takes the larger of two.

>>> import random
>>> backoff = ExponentialBackoff(initial=1.0, multiplier=2.0, max=10.0, jitter=0.0)
>>> [backoff.wait(n) for n in range(5)]
[1.0, 2.0, 4.0, 8.0, 10.0]
>>> policy = (ConstantDelay(seconds=0.5) + ExponentialBackoff(jitter=0.0)).cap(1.0)
>>> [policy.wait(n) for n in range(4)]
[0.6, 0.7, 0.9, 1.0]
>>> seeded = ExponentialBackoff(random=random.Random(7))
>>> seeded.wait(0) == ExponentialBackoff(random=random.Random(7)).wait(0)
True
"""

from __future__ import annotations

import math
import random as _random
from typing import TYPE_CHECKING, Any, Protocol, final

import attrs

from scorecore.judge.retry import exponential_backoff
from scorecore.validators import is_number, misuse

if TYPE_CHECKING:
    from scorecore_adapters.retry import RetryInfo

__all__ = [
    "CappedDelay",
    "ConstantDelay",
    "DelayPolicy",
    "ExponentialBackoff",
    "MaxDelay",
    "RandomSource",
    "SumDelay",
    "exponential_backoff",
]


class RandomSource(Protocol):
    """A source of uniform random numbers, e.g. :class:`random.Random`.

    Contract: ``random()`` returns a float in ``[0, 1)``; must not raise.
    """

    def random(self) -> float: ...


def _seconds_field(owner: str, name: str, *, minimum: float = 0.0) -> Any:
    def check(_inst: object, _attr: object, value: object) -> None:
        if not is_number(value) or not math.isfinite(value) or value < minimum:
            raise misuse(f"{owner}.{name}", value, f"must be a finite number >= {minimum:g}")

    return check


def _retry_count(info: RetryInfo) -> int:
    return info.retry_count


class DelayPolicy:
    """Base of the delay policies: composition operators and the ``(RetryInfo) -> float`` call.

    Subclasses implement :meth:`wait`. Policies are immutable values; composing them builds
    new values (:class:`SumDelay`, :class:`CappedDelay`, :class:`MaxDelay`).
    """

    __slots__ = ()

    def wait(self, retry_count: int) -> float:
        """The wait in seconds before the retry numbered ``retry_count`` (0 = first)."""
        raise NotImplementedError

    def __call__(self, info: RetryInfo, /) -> float:
        """The wait in seconds for ``info.retry_count``; usable as a processor's ``delay``."""
        return self.wait(_retry_count(info))

    def __add__(self, other: DelayPolicy | float) -> SumDelay:
        return SumDelay(parts=(self, _as_policy(other)))

    def __radd__(self, other: float) -> SumDelay:
        return SumDelay(parts=(_as_policy(other), self))

    def __or__(self, other: DelayPolicy | float) -> MaxDelay:
        return MaxDelay(parts=(self, _as_policy(other)))

    def cap(self, seconds: float) -> CappedDelay:
        """This policy, never waiting longer than ``seconds``.

        >>> ConstantDelay(seconds=3.0).cap(1.0).wait(0)
        1.0
        """
        return CappedDelay(inner=self, max=seconds)


def _as_policy(value: DelayPolicy | float) -> DelayPolicy:
    if isinstance(value, DelayPolicy):
        return value
    if not is_number(value):
        raise misuse("delay", value, "must be a delay policy or a number of seconds")
    return ConstantDelay(seconds=value)


def _parts(value: object) -> tuple[DelayPolicy, ...]:
    parts = tuple(value) if isinstance(value, tuple | list) else ()
    if len(parts) < 1 or not all(isinstance(p, DelayPolicy) for p in parts):
        raise misuse("parts", value, "must be a non-empty sequence of delay policies")
    return parts


@final
@attrs.frozen(kw_only=True)
class ConstantDelay(DelayPolicy):
    """Always wait ``seconds``.

    >>> ConstantDelay(seconds=0.25).wait(9)
    0.25
    """

    seconds: float = attrs.field(validator=_seconds_field("ConstantDelay", "seconds"))

    def wait(self, retry_count: int) -> float:
        """Always ``seconds``."""
        return float(self.seconds)


@final
@attrs.frozen(kw_only=True)
class ExponentialBackoff(DelayPolicy):
    """Exponential backoff with jitter: ``min(max, initial * multiplier ** n + U(0, jitter))``.

    ``n`` is the retry count (0 before the first retry). The defaults are stamina's: start at
    0.1 s, double each time, add up to 1 s of jitter, never exceed 5 s. The jitter comes from
    ``random`` (pass ``random.Random(seed)`` for reproducible waits; ``jitter=0`` for none).

    Attributes:
        initial: the first wait before jitter, seconds.
        multiplier: the growth factor per retry (``>= 1``).
        max: the cap on any wait, seconds (jitter included).
        jitter: the largest random addition, seconds.
        random: the random source (not compared, not shown in the repr).

    >>> import random
    >>> b = ExponentialBackoff(initial=0.5, jitter=0.0)
    >>> b.wait(0), b.wait(2), b.wait(10)
    (0.5, 2.0, 5.0)
    """

    initial: float = attrs.field(
        default=0.1, validator=_seconds_field("ExponentialBackoff", "initial")
    )
    multiplier: float = attrs.field(
        default=2.0, validator=_seconds_field("ExponentialBackoff", "multiplier", minimum=1.0)
    )
    max: float = attrs.field(default=5.0, validator=_seconds_field("ExponentialBackoff", "max"))
    jitter: float = attrs.field(
        default=1.0, validator=_seconds_field("ExponentialBackoff", "jitter")
    )
    random: RandomSource = attrs.field(factory=_random.Random, eq=False, repr=False)

    @random.validator
    def _check_random(self, _attr: object, value: object) -> None:
        if not callable(getattr(value, "random", None)):
            raise misuse("ExponentialBackoff.random", value, "must have a random() method")

    def wait(self, retry_count: int) -> float:
        """The wait before retry number ``retry_count`` (draws from ``random`` if jittered)."""
        unit = self.random.random() if self.jitter > 0 else 0.0
        return exponential_backoff(
            retry_count,
            initial=self.initial,
            multiplier=self.multiplier,
            max=self.max,
            jitter=self.jitter,
            unit=unit,
        )


@final
@attrs.frozen(kw_only=True)
class SumDelay(DelayPolicy):
    """The sum of several policies' waits (built by ``a + b``).

    >>> (ConstantDelay(seconds=1.0) + 0.5).wait(0)
    1.5
    """

    parts: tuple[DelayPolicy, ...] = attrs.field(converter=_parts)

    def wait(self, retry_count: int) -> float:
        """The sum of the parts' waits."""
        return math.fsum(p.wait(retry_count) for p in self.parts)

    def __add__(self, other: DelayPolicy | float) -> SumDelay:
        return SumDelay(parts=(*self.parts, _as_policy(other)))


@final
@attrs.frozen(kw_only=True)
class MaxDelay(DelayPolicy):
    """The largest of several policies' waits (built by ``a | b``).

    >>> (ConstantDelay(seconds=1.0) | ConstantDelay(seconds=2.0)).wait(0)
    2.0
    """

    parts: tuple[DelayPolicy, ...] = attrs.field(converter=_parts)

    def wait(self, retry_count: int) -> float:
        """The largest of the parts' waits."""
        return max(p.wait(retry_count) for p in self.parts)


@final
@attrs.frozen(kw_only=True)
class CappedDelay(DelayPolicy):
    """Another policy's wait, never more than ``max`` seconds (built by ``a.cap(max)``)."""

    inner: DelayPolicy = attrs.field(validator=attrs.validators.instance_of(DelayPolicy))
    max: float = attrs.field(validator=_seconds_field("CappedDelay", "max"))

    def wait(self, retry_count: int) -> float:
        """``min(max, inner's wait)``."""
        return min(float(self.max), self.inner.wait(retry_count))
