"""Retry math, in one place: the backoff formula, the Retry-After reading and its cap.

Every wait before a retried judge call is computed here, from pure functions of their inputs:

- :func:`exponential_backoff`: ``min(max, initial * multiplier ** retry_count + jitter * unit)``
  (stamina's formula), for the model-level retries and ``scorecore_adapters.delays``;
- :func:`read_retry_after`: how long the provider asked to wait (``retry-after-ms`` /
  ``retry-after``);
- :func:`retry_wait`: ``max(delay, min(retry_after, max_retry_after))``, the wait once both are
  known, for the model-level retries and ``scorecore_adapters.retry``;
- :func:`model_retry_wait`: the wait of ``ModelSettings.max_retries`` (Mastra's p-retry rule),
  built from the three above.

>>> from scorecore.judge import JudgeError
>>> error = JudgeError(kind="rate_limit", headers={"retry-after": "3"})
>>> retry_wait(exponential_backoff(0, initial=1.0, multiplier=2.0, max=60.0, jitter=0.0,
...                                unit=0.0), read_retry_after(error, now=0.0), 30.0)
3.0
"""

from __future__ import annotations

import email.utils
import math
import re
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scorecore._core._failed_call import JudgeError

__all__ = ["exponential_backoff", "read_retry_after", "retry_wait"]

MODEL_RETRY_AFTER_CAP: Final = 30.0
"""The longest ``Retry-After`` a model-level retry honours, in seconds (Mastra's 30,000 ms)."""

# Model-level retries wait 1 s, 2 s, 4 s …; past 2**60 s the wait no longer grows.
_MODEL_BACKOFF_MAX: Final = 2.0**60


def exponential_backoff(
    retry_count: int,
    *,
    initial: float,
    multiplier: float,
    max: float,
    jitter: float,
    unit: float,
) -> float:
    """The backoff formula, pure: ``min(max, initial * multiplier ** retry_count + jitter * unit)``.

    Args:
        retry_count: retries already made (0 before the first retry).
        initial: the first wait, before jitter.
        multiplier: the growth factor per retry.
        max: the cap on the wait, jitter included.
        jitter: the largest random addition.
        unit: a uniform draw in ``[0, 1)``.

    Returns:
        A finite number of seconds ``>= 0`` (for finite, non-negative arguments).

    >>> exponential_backoff(3, initial=0.1, multiplier=2.0, max=5.0, jitter=1.0, unit=0.5)
    1.3
    >>> exponential_backoff(5_000, initial=1.0, multiplier=2.0, max=60.0, jitter=0.0, unit=0.0)
    60.0
    """
    if initial == 0:
        base = 0.0
    else:
        try:
            base = initial * multiplier**retry_count
        except OverflowError:
            base = math.inf
    return min(max, base + jitter * unit)


def retry_wait(delay: float, retry_after: float | None, max_retry_after: float) -> float:
    """The wait before a retry: ``max(delay, min(retry_after, max_retry_after))``.

    The provider's ``retry_after`` (``None``: it asked for nothing) is honoured up to
    ``max_retry_after`` and never shortens ``delay``, the caller's own wait.

    Args:
        delay: the caller's wait (a backoff, a configured delay), finite and ``>= 0``.
        retry_after: the provider's requested wait (:func:`read_retry_after`), or ``None``.
        max_retry_after: the cap on ``retry_after``, finite and ``>= 0``.

    Returns:
        A finite number of seconds ``>= 0``.

    >>> retry_wait(0.4, 0.0, 30.0), retry_wait(0.0, 100.0, 0.3), retry_wait(0.7, 100.0, 0.2)
    (0.4, 0.3, 0.7)
    >>> retry_wait(2.0, None, 30.0)
    2.0
    """
    provider = 0.0 if retry_after is None else min(max(retry_after, 0.0), max_retry_after)
    if math.isnan(provider):
        provider = 0.0
    return max(delay, provider)


def model_retry_wait(retry_index: int, error: JudgeError, *, now: float) -> float:
    """The wait before model-level retry ``retry_index`` (0-based): Mastra's p-retry rule.

    ``max(backoff, min(retry_after, 30))`` with ``backoff`` 1 s, 2 s, 4 s … and
    ``retry_after`` the provider's ``retry-after-ms`` / ``retry-after`` (whole seconds or an
    HTTP date, read against ``now``, the runtime's wall clock) as :func:`read_retry_after`
    reads it; an unusable header leaves the backoff.

    >>> from scorecore.judge import JudgeError
    >>> [model_retry_wait(i, JudgeError(kind="rate_limit", status=429), now=0.0)
    ...  for i in range(3)]
    [1.0, 2.0, 4.0]
    >>> model_retry_wait(0, JudgeError(kind="rate_limit", headers={"retry-after": "5"}), now=0.0)
    5.0
    >>> date = {"retry-after": "Thu, 01 Jan 1970 00:00:07 GMT"}
    >>> model_retry_wait(0, JudgeError(kind="rate_limit", headers=date), now=0.0)
    7.0
    >>> model_retry_wait(1, JudgeError(kind="rate_limit", headers={"retry-after-ms": "600000"}),
    ...                  now=0.0)
    30.0
    """
    backoff = exponential_backoff(
        retry_index, initial=1.0, multiplier=2.0, max=_MODEL_BACKOFF_MAX, jitter=0.0, unit=0.0
    )
    return retry_wait(backoff, read_retry_after(error, now=now), MODEL_RETRY_AFTER_CAP)


_DIGITS = re.compile(r"[0-9]+")
# A value that merely looks numeric ("1.5", "1e3", "-2") is ignored rather than parsed as a
# date: only whole seconds are a valid delta-seconds Retry-After (RFC 9110 §10.2.3).
_NUMBER_LIKE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Longer digit strings overflow a float; they mean "a very long time" (callers cap the wait).
_MAX_DIGITS = 300
_LONGEST = sys.float_info.max


def _whole_number(digits: str, scale: float) -> float:
    if len(digits) > _MAX_DIGITS:
        return _LONGEST
    return int(digits) / scale


def _epoch_seconds(value: str) -> float | None:
    """Seconds since the epoch for an HTTP date (or an ISO 8601 date-time), else ``None``."""
    parsed: datetime | None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)  # HTTP dates are always GMT
    try:
        return parsed.timestamp()
    except (OverflowError, ValueError, OSError):
        return None


def _node_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    ms = headers.get("retry-after-ms")
    if isinstance(ms, str) and _DIGITS.fullmatch(ms.strip()):
        return _whole_number(ms.strip(), 1000.0)
    raw = headers.get("retry-after")
    if not isinstance(raw, str):
        return None
    value = raw.strip()
    if _DIGITS.fullmatch(value):
        return _whole_number(value, 1.0)
    if not value or _NUMBER_LIKE.fullmatch(value):
        return None
    at = _epoch_seconds(value)
    if at is None:
        return None
    wait = at - now
    if math.isnan(wait):
        return None  # a NaN "now": the date cannot be read against it
    return min(max(wait, 0.0), _LONGEST)


def read_retry_after(error: JudgeError, *, now: float) -> float | None:
    """How long the provider asked to wait, in seconds, from the error's response headers.

    The one reading of ``Retry-After``, used by ``ModelSettings.max_retries`` and by
    ``scorecore_adapters.retry``. Walks the error and its cause chain; the first node with a
    usable header wins. At a node, ``retry-after-ms`` (whole milliseconds, ``^[0-9]+$``) wins
    over ``retry-after``, which is whole seconds or an HTTP date (RFC 9110; an ISO 8601
    date-time is accepted too, naive means UTC) read against ``now``. A date in the past means
    ``0.0`` (retry at once). Decimal-looking values (``1.5``, ``1e3``), signs, non-ASCII
    digits and garbage are ignored, so the caller's own wait applies. Pure: it reads no clock
    and never raises.

    Args:
        error: the judge error.
        now: the current wall-clock time in seconds since the Unix epoch (a run passes its
            runtime's ``wall_clock()``).

    Returns:
        A finite number of seconds ``>= 0`` (absurdly long values read as the largest
        float; callers cap the wait), or ``None`` when no header is usable.

    >>> from scorecore.judge import JudgeError
    >>> read_retry_after(JudgeError(kind="rate_limit", headers={"Retry-After": "7"}), now=0.0)
    7.0
    >>> both = {"retry-after-ms": "250", "retry-after": "3"}
    >>> read_retry_after(JudgeError(kind="rate_limit", headers=both), now=0.0)
    0.25
    >>> date = {"retry-after": "Thu, 01 Jan 1970 00:00:10 GMT"}
    >>> read_retry_after(JudgeError(kind="server", headers=date), now=4.0)
    6.0
    >>> read_retry_after(JudgeError(kind="server", headers=date), now=60.0)
    0.0
    >>> read_retry_after(JudgeError(kind="server", headers={"retry-after": "1.5"}), now=0.0)
    """
    for node in error.chain():
        found = _node_retry_after(node.headers, now)
        if found is not None:
            return found
    return None
