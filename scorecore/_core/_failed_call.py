"""The judge error value and its kinds: a leaf of the kernel's import graph.

:class:`JudgeError` is what a failed judge call is, everywhere: the judge port answers
``Failure(JudgeError)``, causes carry it, retry classification reads it. Keeping it here, with
the one default it needs (:func:`default_retryable`), lets every one of those modules import it
without importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypeAlias, final

import attrs

from scorecore._core._redact import redact_text

__all__ = ["JudgeError", "JudgeErrorKind"]

JudgeErrorKind: TypeAlias = Literal[
    "rate_limit", "server", "timeout", "network", "auth", "bad_request", "context_length",
    "crashed", "unknown",
]

_KINDS: frozenset[str] = frozenset(JudgeErrorKind.__args__)  # type: ignore[attr-defined]
_NEVER_RETRYABLE_KINDS = frozenset({"auth", "bad_request", "context_length", "unknown"})


def default_retryable(kind: JudgeErrorKind, status: int | None) -> bool:
    """``JudgeError.is_retryable`` when not given: transient kinds, and 409, are retryable."""
    if kind in _NEVER_RETRYABLE_KINDS:
        return status == 409
    return True


def _lower_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in dict(headers).items()}


@final
@attrs.frozen(kw_only=True)
class JudgeError:
    """A failed judge call, as a value.

    Adapters catch exceptions at their boundary and return ``Failure(JudgeError)``; they never
    put secrets (API keys, auth headers) in any field.

    Attributes:
        kind: what went wrong, coarsely.
        message: a readable description.
        status: the HTTP status, when there was a response.
        headers: the response headers (names lower-cased), e.g. ``retry-after``.
        code: the provider's error code (``"rate_limit_exceeded"``, ``"ECONNRESET"`` …).
        type: the provider's error type (``"overloaded_error"`` …).
        is_retryable: whether retrying can help; derived from ``kind``/``status`` when not given
            (408, 409, 429, 5xx, timeouts and network errors are retryable; auth never).
        cause: the lower-level error this one wraps, if any.
        exception_type: the name of the exception the adapter caught, if any.
    """

    kind: JudgeErrorKind = attrs.field(validator=attrs.validators.in_(_KINDS))
    # A provider's error body may quote the request or a reply: no secret stays in the message.
    message: str = attrs.field(default="", converter=redact_text)
    status: int | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict, converter=_lower_headers)
    code: str | None = None
    type: str | None = None
    is_retryable: bool = attrs.field()
    cause: JudgeError | None = None
    exception_type: str | None = None

    @is_retryable.default
    def _retryable_default(self) -> bool:
        return default_retryable(self.kind, self.status)

    def chain(self) -> tuple[JudgeError, ...]:
        """This error followed by its causes, outermost first."""
        out: list[JudgeError] = []
        node: JudgeError | None = self
        while node is not None and len(out) < 64:
            out.append(node)
            node = node.cause
        return tuple(out)

    def describe(self) -> str:
        """A one-line description naming the kind, status and provider code."""
        bits: list[str] = [self.kind]
        if self.status is not None:
            bits.append(f"HTTP {self.status}")
        if self.code:
            bits.append(f"code={self.code}")
        if self.type:
            bits.append(f"type={self.type}")
        head = ", ".join(bits)
        return f"{head}: {self.message}" if self.message else head
