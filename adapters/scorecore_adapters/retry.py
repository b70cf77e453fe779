"""Retrying failed judge calls: :class:`StreamErrorRetryProcessor` and its pure helpers.

An error processor only *decides*: given a failed judge call it answers ``Retry(after=seconds)``
or ``None``. The core owns the one loop that sleeps (through the runtime's ``Sleep`` port) and the
shared ``max_processor_retries`` budget, so everything here is a pure function of its inputs plus
the injected wall clock ``now`` (used only to read ``Retry-After`` HTTP dates).

The wait before a retry is::

    max(delay, min(retry_after, max_retry_after))

where ``delay`` is the configured delay (a number of seconds or a function of :class:`RetryInfo`,
``0`` when unset; negative or non-finite values count as ``0``) and ``retry_after`` is what the
provider asked for in its ``retry-after-ms`` / ``retry-after`` headers (``0`` when absent), as
:func:`scorecore.judge.retry.read_retry_after` reads them (also used by
``ModelSettings.max_retries``).

>>> from scorecore_adapters.testing import judge_error
>>> is_retryable_error(judge_error(429))
True
>>> is_retryable_error(judge_error(401))
False
>>> retry_after_seconds(judge_error(429, headers={"Retry-After": "2"}), now=lambda: 0.0)
2.0
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import ClassVar, TypeAlias, TypeVar, final

import attrs

from scorecore.judge import JudgeError, JudgeRequest, Retry
from scorecore.judge.retry import (
    BUILTIN_RETRYABLE_CODES,
    is_auth_error,
    is_retryable_error,
    is_retryable_node,
    is_retryable_provider_error,
    is_unknown_error,
    read_retry_after,
    retry_wait,
)
from scorecore.validators import is_int, is_number, misuse
from scorecore_adapters._checks import maybe_await, optional_callable

__all__ = [
    "BUILTIN_RETRYABLE_CODES",
    "Delay",
    "DelayFunction",
    "Matcher",
    "OnRetry",
    "RetryInfo",
    "RetryPolicy",
    "StreamErrorRetryProcessor",
    "is_auth_error",
    "is_retryable_error",
    "is_retryable_provider_error",
    "is_unknown_error",
    "resolve_delay",
    "retry_after_seconds",
    "wait_seconds",
]

_T = TypeVar("_T")


@final
@attrs.frozen(kw_only=True)
class RetryInfo:
    """What a delay function and an ``on_retry`` hook are told about a retry.

    Attributes:
        error: the judge error being retried.
        retry_count: retries already made for this judge call (``0`` before the first retry).
        request: the judge request that failed.
        delay: ``None`` while the delay is being computed; the final wait in seconds when the
            value is passed to ``on_retry``.
    """

    error: JudgeError = attrs.field(validator=attrs.validators.instance_of(JudgeError))
    retry_count: int = attrs.field()
    request: JudgeRequest = attrs.field(validator=attrs.validators.instance_of(JudgeRequest))
    delay: float | None = None

    @retry_count.validator
    def _check_count(self, _attr: object, value: object) -> None:
        if not is_int(value) or value < 0:
            raise misuse("RetryInfo.retry_count", value, "must be an int >= 0")


DelayFunction: TypeAlias = Callable[[RetryInfo], float | Awaitable[float]]
"""A delay computed from the retry, in seconds; may be sync or async."""
Delay: TypeAlias = float | DelayFunction
"""A delay in seconds, or a function of :class:`RetryInfo` returning one."""
OnRetry: TypeAlias = Callable[[RetryInfo], object]
"""Called (sync or async) with the :class:`RetryInfo` carrying the final ``delay``."""


def _check_max_retries(owner: str) -> Callable[[object, object, int | None], None]:
    def check(_inst: object, _attr: object, value: int | None) -> None:
        if value is None and owner == "RetryPolicy":
            return
        if not is_int(value) or value < 0:
            raise misuse(f"{owner}.max_retries", value, "must be an int >= 0")

    return check


def _check_delay(owner: str) -> Callable[[object, object, Delay | None], None]:
    def check(_inst: object, _attr: object, value: Delay | None) -> None:
        if value is None or callable(value):
            return
        if not is_number(value):
            raise misuse(
                f"{owner}.delay", value, "must be a number of seconds or a function of RetryInfo"
            )

    return check


@final
@attrs.frozen(kw_only=True)
class RetryPolicy:
    """A matcher with its own budget, delay and hook (Mastra's ``{match, maxRetries, ...}``).

    Attributes:
        match: a predicate on one error of the cause chain.
        max_retries: overrides the processor's ``max_retries`` when this policy matches.
        delay: overrides the processor's ``delay`` when this policy matches.
        on_retry: overrides the processor's ``on_retry`` when this policy matches.

    >>> policy = RetryPolicy(match=lambda e: e.code == "ECONNRESET", max_retries=3, delay=0.5)
    >>> policy.max_retries
    3
    """

    match: Callable[[JudgeError], bool] = attrs.field()
    max_retries: int | None = attrs.field(
        default=None, validator=_check_max_retries("RetryPolicy")
    )
    delay: Delay | None = attrs.field(default=None, validator=_check_delay("RetryPolicy"))
    on_retry: OnRetry | None = attrs.field(
        default=None, validator=optional_callable("RetryPolicy", "on_retry")
    )

    @match.validator
    def _check_match(self, _attr: object, value: object) -> None:
        if not callable(value):
            raise misuse("RetryPolicy.match", value, "must be callable")


Matcher: TypeAlias = Callable[[JudgeError], bool] | RetryPolicy
"""A predicate on one error of the cause chain, or a :class:`RetryPolicy`."""


def _as_policies(matchers: Iterable[Matcher]) -> tuple[RetryPolicy, ...]:
    out: list[RetryPolicy] = []
    for i, m in enumerate(matchers):
        if isinstance(m, RetryPolicy):
            out.append(m)
        elif callable(m):
            out.append(RetryPolicy(match=m))
        else:
            raise misuse(
                f"StreamErrorRetryProcessor.matchers[{i}]", m,
                "must be a predicate or a RetryPolicy",
            )
    return tuple(out)


def retry_after_seconds(error: JudgeError, *, now: Callable[[], float]) -> float | None:
    """How long the provider asked to wait, from ``retry-after-ms`` / ``retry-after`` headers.

    :func:`scorecore.judge.retry.read_retry_after` (the one reading, shared with
    ``ModelSettings.max_retries``) with the wall clock ``now`` called once. Walks the error and
    its cause chain; the first node with a usable header wins. At a node, ``retry-after-ms``
    (whole milliseconds) takes precedence over ``retry-after``, which is either whole seconds
    or an HTTP date relative to ``now()`` (a past date means ``0.0``). Decimal-looking values
    (``1.5``, ``1e3``) and garbage are ignored.

    Args:
        error: the judge error.
        now: the current wall-clock time in seconds since the epoch (e.g. ``time.time``).

    Returns:
        The wait in seconds (finite, ``>= 0``; absurdly long values read as the largest
        float), or ``None``.

    >>> from scorecore_adapters.testing import judge_error
    >>> err = judge_error(429, headers={"retry-after-ms": "250", "retry-after": "3"})
    >>> retry_after_seconds(err, now=lambda: 0.0)
    0.25
    >>> retry_after_seconds(judge_error(429, headers={"retry-after": "1.5"}), now=lambda: 0.0)
    >>> date = "Thu, 01 Jan 1970 00:00:10 GMT"
    >>> retry_after_seconds(judge_error(503, headers={"retry-after": date}), now=lambda: 4.0)
    6.0
    """
    return read_retry_after(error, now=now())


def _clamp(seconds: object, owner: str) -> float:
    if not is_number(seconds):
        raise misuse(owner, seconds, "must be a number of seconds")
    value = float(seconds)
    return value if math.isfinite(value) and value > 0 else 0.0


async def resolve_delay(delay: Delay | None, info: RetryInfo) -> float:
    """The configured delay in seconds: ``0`` when unset, negative or non-finite.

    Args:
        delay: a number of seconds, or a (sync or async) function of ``info``, or ``None``.
        info: the retry being delayed.

    Returns:
        A finite number of seconds ``>= 0``.

    Raises:
        TypeError: the delay (or what the function returned) is not a number.
    """
    if delay is None:
        return 0.0
    if callable(delay):
        return _clamp(await maybe_await(delay(info)), "the delay function's result")
    return _clamp(delay, "delay")


def _cap(max_retry_after: float) -> float:
    if not is_number(max_retry_after):
        raise misuse(
            "StreamErrorRetryProcessor.max_retry_after", max_retry_after,
            "must be a number of seconds",
        )
    value = float(max_retry_after)
    # Mastra's rule: an invalid or negative cap means "ignore Retry-After" (cap 0).
    return value if math.isfinite(value) and value >= 0 else 0.0


def wait_seconds(delay: float, retry_after: float | None, max_retry_after: float) -> float:
    """The wait before a retry: ``max(delay, min(retry_after, max_retry_after))``.

    Checks and clamps its arguments, then computes the wait with
    :func:`scorecore.judge.retry.retry_wait`, the formula's one home.

    Args:
        delay: the configured delay (clamped to ``0`` when negative or non-finite).
        retry_after: the provider's requested wait, or ``None``.
        max_retry_after: the cap on ``retry_after`` (invalid or negative means ``0``).

    Returns:
        A finite number of seconds ``>= 0``.

    >>> wait_seconds(0.4, 0.0, 30.0)
    0.4
    >>> wait_seconds(0.0, 100.0, 0.3)
    0.3
    >>> wait_seconds(0.7, 100.0, 0.2)
    0.7
    """
    return retry_wait(_clamp(delay, "delay"), retry_after, _cap(max_retry_after))


def _wall_clock() -> float:
    return time.time()


@final
@attrs.frozen(kw_only=True)
class StreamErrorRetryProcessor:
    """Retries transient judge failures: rate limits, overloads, 5xx, timeouts, resets.

    An :class:`ErrorProcessor` (Mastra's ``StreamErrorRetryProcessor``, in seconds).
    For a failed call it walks the error and its cause chain; at each node the matchers are
    tried first (the built-in :func:`is_retryable_provider_error`, then ``matchers`` in order),
    then the node's ``is_retryable`` flag. Known authorization failures (401, 403, auth codes)
    and 400s are only retried when a user matcher says so. With ``retry_unknown_errors``, an
    error of kind ``"unknown"`` is retried too (see :func:`is_unknown_error`); this never
    widens to authorization failures or bad requests (400, ``bad_request``,
    ``context_length``), which differs from Mastra, where it retries anything but auth.

    The budget is ``retry_count >= max_retries`` (a matching :class:`RetryPolicy` may bring its
    own ``max_retries``); the core also enforces its shared ``max_processor_retries``. The wait
    is ``max(delay, min(retry_after, max_retry_after))`` seconds (see :func:`wait_seconds`).
    ``on_retry`` is called with the :class:`RetryInfo` carrying that wait before the processor
    answers; the processor never sleeps, the core does.

    Attributes:
        max_retries: retries allowed by this processor (compared with the call's retry count).
        matchers: predicates on one error, or :class:`RetryPolicy` values.
        retry_unknown_errors: also retry errors of kind ``"unknown"`` (never auth failures
            or bad requests; see :func:`is_unknown_error`).
        delay: seconds, or a (sync or async) function of :class:`RetryInfo`; ``None`` means 0.
        max_retry_after: cap on the provider's ``Retry-After`` in seconds (does not cap
            ``delay``); an invalid or negative value means 0.
        on_retry: a (sync or async) hook called before each retry.
        now: the wall clock used to read ``Retry-After`` HTTP dates (inject it in tests).

    >>> import anyio
    >>> from scorecore.judge import JudgeMessage, JudgeRequest
    >>> from scorecore_adapters.testing import judge_error
    >>> proc = StreamErrorRetryProcessor(max_retries=2, delay=0.5)
    >>> req = JudgeRequest(messages=[JudgeMessage(role="user", content="hi")])
    >>> anyio.run(proc.process_error, judge_error(429, headers={"retry-after": "3"}), 0, req)
    Retry(after=3.0)
    >>> anyio.run(proc.process_error, judge_error(503), 1, req)
    Retry(after=0.5)
    >>> anyio.run(proc.process_error, judge_error(503), 2, req) is None
    True
    >>> anyio.run(proc.process_error, judge_error(401), 0, req) is None
    True
    """

    id: ClassVar[str] = "stream-error-retry-processor"
    name: ClassVar[str] = "Stream Error Retry Processor"

    max_retries: int = attrs.field(
        default=1, validator=_check_max_retries("StreamErrorRetryProcessor")
    )
    matchers: tuple[RetryPolicy, ...] = attrs.field(default=(), converter=_as_policies)
    retry_unknown_errors: bool = attrs.field(
        default=False, validator=attrs.validators.instance_of(bool)
    )
    delay: Delay | None = attrs.field(
        default=None, validator=_check_delay("StreamErrorRetryProcessor")
    )
    max_retry_after: float = attrs.field(default=30.0, converter=_cap)
    on_retry: OnRetry | None = attrs.field(
        default=None, validator=optional_callable("StreamErrorRetryProcessor", "on_retry")
    )
    now: Callable[[], float] = attrs.field(
        default=_wall_clock,
        validator=optional_callable("StreamErrorRetryProcessor", "now"),
    )

    def find_policy(self, error: JudgeError) -> RetryPolicy | None:
        """The policy that makes ``error`` retryable, or ``None`` (pure; no budget check).

        Args:
            error: the judge error.

        Returns:
            The first matching user :class:`RetryPolicy`, a default policy when the built-in
            matcher, the ``is_retryable`` flag or ``retry_unknown_errors`` applies, else
            ``None``.
        """
        auth = is_auth_error(error)
        for node in error.chain():
            # Mastra tries the built-in matcher before the user's; both yield a policy, and
            # the built-in one carries no overrides, so checking it first changes only which
            # overrides apply when both match.
            if not auth and node.status != 400 and is_retryable_provider_error(node):
                return _DEFAULT_POLICY
            for policy in self.matchers:
                if policy.match(node):
                    return policy
            if not auth and is_retryable_node(node):
                return _DEFAULT_POLICY
        if self.retry_unknown_errors and is_unknown_error(error):
            return _DEFAULT_POLICY
        return None

    def would_retry(self, error: JudgeError, /) -> bool:
        """Whether some policy retries ``error``, budgets aside (pure).

        This makes the processor a :class:`~scorecore.judge.RetryClassifier`. The core asks it only
        to name why retrying stopped: an error retried through ``retry_unknown_errors`` or a
        matcher is reported as ``"processor_limit"`` or ``"budget_spent"`` when the retries
        run out, never as ``"not_retryable"``.

        Args:
            error: the judge error.

        Returns:
            ``True`` when :meth:`find_policy` finds a policy.

        >>> from scorecore.judge import JudgeError
        >>> StreamErrorRetryProcessor(retry_unknown_errors=True).would_retry(
        ...     JudgeError(kind="unknown", message="weird"))
        True
        >>> StreamErrorRetryProcessor().would_retry(JudgeError(kind="unknown", message="weird"))
        False
        """
        return self.find_policy(error) is not None

    async def process_error(
        self, error: JudgeError, retry_count: int, request: JudgeRequest, /
    ) -> Retry | None:
        """Decide whether the failed judge call is retried, and after how long.

        Args:
            error: the failed call's error.
            retry_count: retries already made for this judge call (0 before the first).
            request: the failed request.

        Returns:
            ``Retry(after=seconds)`` or ``None``.
        """
        policy = self.find_policy(error)
        if policy is None:
            return None
        budget = self.max_retries if policy.max_retries is None else policy.max_retries
        if retry_count >= budget:
            return None
        info = RetryInfo(error=error, retry_count=retry_count, request=request)
        configured = await resolve_delay(
            self.delay if policy.delay is None else policy.delay, info
        )
        wait = wait_seconds(
            configured, retry_after_seconds(error, now=self.now), self.max_retry_after
        )
        hook = self.on_retry if policy.on_retry is None else policy.on_retry
        if hook is not None:
            await maybe_await(hook(attrs.evolve(info, delay=wait)))
        return Retry(after=wait)


def _always(_error: JudgeError) -> bool:
    return True


_DEFAULT_POLICY = RetryPolicy(match=_always)
