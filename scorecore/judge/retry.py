"""Retry classification and retry math, for retry processors and judge adapters.

- classification, the one home of retryability: :func:`kind_for` (what an adapter calls to
  build a :class:`~scorecore.judge.JudgeError`), :func:`is_retryable_error` and friends,
  :data:`AUTH_CODES`, :data:`BUILTIN_RETRYABLE_CODES`;
- waits, the one home of retry math: :func:`read_retry_after` (the provider's
  ``Retry-After``), :func:`exponential_backoff` and :func:`retry_wait`
  (``max(delay, min(retry_after, max_retry_after))``), used by ``ModelSettings.max_retries``
  and by ``scorecore_adapters.retry`` and ``scorecore_adapters.delays``.

>>> from scorecore.judge import JudgeError
>>> kind_for(429), is_retryable_error(JudgeError(kind="auth", status=401))
('rate_limit', False)
>>> error = JudgeError(kind="rate_limit", headers={"retry-after": "3"})
>>> retry_wait(1.0, read_retry_after(error, now=0.0), 30.0)
3.0
"""

from scorecore._core._backoff import exponential_backoff, read_retry_after, retry_wait
from scorecore._core._retryability import (
    AUTH_CODES,
    BUILTIN_RETRYABLE_CODES,
    is_auth_error,
    is_model_retryable,
    is_retryable_error,
    is_retryable_node,
    is_retryable_provider_error,
    is_unknown_error,
    kind_for,
)

__all__ = [
    "AUTH_CODES",
    "BUILTIN_RETRYABLE_CODES",
    "exponential_backoff",
    "is_auth_error",
    "is_model_retryable",
    "is_retryable_error",
    "is_retryable_node",
    "is_retryable_provider_error",
    "is_unknown_error",
    "kind_for",
    "read_retry_after",
    "retry_wait",
]
