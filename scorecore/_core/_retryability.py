"""Retry classification, in one place: what kind a provider error is, and whether retrying helps.

Adapters classify the errors they catch with :func:`kind_for`; a :class:`JudgeError`'s
``is_retryable`` default comes from ``default_retryable`` (kept next to the error value); the
retry processors of ``scorecore_adapters.retry`` decide with :func:`is_retryable_error` and
friends. Nothing else decides retryability.

>>> from scorecore.judge import JudgeError
>>> kind_for(429), kind_for(400, "context_length_exceeded"), kind_for(None, "ECONNRESET")
('rate_limit', 'context_length', 'network')
>>> is_retryable_error(JudgeError(kind="server", status=503))
True
>>> is_retryable_error(JudgeError(kind="auth", status=401))
False

How long a provider asked to wait, and how long to wait, are retry *math*, in
``scorecore._core._backoff``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:

    from scorecore._core._failed_call import JudgeError, JudgeErrorKind


AUTH_CODES: frozenset[str] = frozenset({
    "access_denied", "authentication_error", "forbidden", "invalid_api_key", "permission_denied",
})
"""Provider error codes that mean an authorization failure: never retried."""

BUILTIN_RETRYABLE_CODES: tuple[str, ...] = (
    "rate_limit",
    "server_error",
    "internal_error",
    "timeout",
    "temporarily_unavailable",
    "service_unavailable",
    "overloaded",
)
"""Substrings of a provider error code (or type) that the built-in matcher retries."""

# Connection errors (Node-style codes, as Mastra's providers report them) also count as
# transient when an error is classified, though the built-in matcher does not list them.
_TRANSIENT_CODES = (*BUILTIN_RETRYABLE_CODES, "econnreset", "etimedout", "econnrefused")
_NETWORK_CODES = frozenset({"econnreset", "econnrefused", "connection_error"})
_BAD_REQUEST_KINDS = frozenset({"bad_request", "context_length"})
_RETRY_MESSAGE = re.compile(r"you can retry your request", re.IGNORECASE)


def kind_for(
    status: int | None, code: str | None = None, type: str | None = None
) -> JudgeErrorKind:
    """Classify a provider error by its HTTP status and provider code/type.

    What adapters use to build a ``JudgeError``.

    >>> kind_for(401), kind_for(503), kind_for(404), kind_for(None)
    ('auth', 'server', 'bad_request', 'unknown')
    """
    tag = (code or type or "").strip().lower()
    if status in (401, 403) or tag in AUTH_CODES:
        return "auth"
    if "context_length" in tag or "context_window" in tag:
        return "context_length"
    if status == 429 or "rate_limit" in tag:
        return "rate_limit"
    if status == 408 or "timeout" in tag or tag == "etimedout":
        return "timeout"
    if tag in _NETWORK_CODES:
        return "network"
    if (status is not None and status >= 500) or any(t in tag for t in _TRANSIENT_CODES):
        return "server"
    if status is not None and 400 <= status < 500:
        return "bad_request"
    return "unknown"


def _tag(node: JudgeError) -> str:
    raw = node.code if node.code is not None else node.type
    return (raw or "").strip().lower()


def _is_auth_node(node: JudgeError) -> bool:
    return node.kind == "auth" or node.status in (401, 403) or _tag(node) in AUTH_CODES


def is_auth_error(error: JudgeError) -> bool:
    """Whether the error, or anything in its cause chain, is a known authorization failure.

    Known failures are HTTP 401/403, kind ``"auth"``, and the provider codes (or types) in
    :data:`AUTH_CODES`. These are never retried unless a user matcher says so.

    Args:
        error: the judge error.

    Returns:
        ``True`` when a known authorization failure is found.

    >>> from scorecore.judge import JudgeError
    >>> is_auth_error(JudgeError(kind="unknown", code="invalid_api_key"))
    True
    >>> is_auth_error(JudgeError(kind="server", status=500,
    ...                          cause=JudgeError(kind="auth", status=403)))
    True
    """
    return any(_is_auth_node(node) for node in error.chain())


def is_retryable_provider_error(error: JudgeError) -> bool:
    """The built-in matcher: a provider code/type or message that says "retry me".

    Looks at this one error only (not its causes): the code (or, without a code, the type),
    lower-cased, contains one of :data:`BUILTIN_RETRYABLE_CODES`, or the message matches
    ``/you can retry your request/i``. Known authorization failures never match.

    Args:
        error: one judge error.

    Returns:
        ``True`` when the error matches.

    >>> from scorecore.judge import JudgeError
    >>> is_retryable_provider_error(JudgeError(kind="unknown", code="rate_limit_exceeded"))
    True
    >>> is_retryable_provider_error(JudgeError(kind="unknown", message="You can retry it"))
    False
    """
    if _is_auth_node(error):
        return False
    tag = _tag(error)
    if any(code in tag for code in BUILTIN_RETRYABLE_CODES):
        return True
    return _RETRY_MESSAGE.search(error.message) is not None


def is_retryable_node(node: JudgeError) -> bool:
    """Whether one error, its causes aside, is retried without a user matcher saying so.

    The built-in matcher matches it or it is flagged ``is_retryable``, and it is neither a
    known authorization failure nor an HTTP 400.

    >>> from scorecore.judge import JudgeError
    >>> is_retryable_node(JudgeError(kind="server", status=503))
    True
    >>> is_retryable_node(JudgeError(kind="server", status=400, is_retryable=True))
    False
    """
    # Bad requests (400, including context-length errors) and auth failures are never retried
    # by metadata alone, even when an adapter flagged them retryable: only a matcher can.
    if node.status == 400 or _is_auth_node(node):
        return False
    return is_retryable_provider_error(node) or node.is_retryable


def _is_bad_request_node(node: JudgeError) -> bool:
    return node.status == 400 or node.kind in _BAD_REQUEST_KINDS


def is_unknown_error(error: JudgeError) -> bool:
    """Whether ``retry_unknown_errors`` may retry the error: an error nothing classified.

    True when the error's ``kind`` is ``"unknown"`` and nothing in its cause chain is a known
    authorization failure or a bad request (HTTP 400, kind ``"bad_request"`` or
    ``"context_length"``). Those are retried only when a user matcher says so.

    Args:
        error: the judge error.

    Returns:
        ``True`` when the error is unknown, not auth and not a bad request.

    >>> from scorecore.judge import JudgeError
    >>> is_unknown_error(JudgeError(kind="unknown", message="weird"))
    True
    >>> is_unknown_error(JudgeError(kind="unknown", status=400))
    False
    """
    if error.kind != "unknown" or is_auth_error(error):
        return False
    return not any(_is_bad_request_node(node) for node in error.chain())


def is_model_retryable(error: JudgeError) -> bool:
    """Whether ``ModelSettings.max_retries`` retries the error: anything but a provider's answer
    that retrying cannot change.

    Mastra's model-level retry retries every error except an API error flagged not retryable
    (a thrown "socket hang up" is retried). Here: an error flagged ``is_retryable``, or one
    nothing classified — kind ``"unknown"``, no HTTP status anywhere in its cause chain, and
    no known authorization failure or bad request in it (:func:`is_unknown_error`), such as
    the error a ``JudgeModel`` that raised becomes.

    >>> from scorecore.judge import JudgeError
    >>> is_model_retryable(JudgeError(kind="unknown", message="socket hang up"))
    True
    >>> is_model_retryable(JudgeError(kind="unknown", status=418))
    False
    >>> is_model_retryable(JudgeError(kind="auth", status=401))
    False
    """
    if error.is_retryable:
        return True
    return is_unknown_error(error) and all(node.status is None for node in error.chain())


def is_retryable_error(error: JudgeError) -> bool:
    """Whether the default retry policy retries the error (no matchers).

    True when, somewhere in the cause chain, the built-in matcher matches or the error is
    flagged ``is_retryable`` (408, 409, 429, 5xx, timeouts, network resets by default) — except
    that a known authorization failure anywhere in the chain is never retried, and a 400 node
    never counts as retryable.

    Args:
        error: the judge error.

    Returns:
        ``True`` when the default policy would retry it.

    >>> from scorecore.judge import JudgeError
    >>> [is_retryable_error(JudgeError(kind=kind_for(s), status=s)) for s in (400, 401, 429)]
    [False, False, True]
    """
    if is_auth_error(error):
        return False
    return any(is_retryable_node(node) for node in error.chain())
