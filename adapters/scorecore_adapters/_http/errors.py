"""Every way an HTTP judge's exchange can fail, as a JudgeError.

With :func:`scorecore_adapters._http.exchange.post_json` this is the exception boundary of
the HTTP adapters. It catches exactly the
exceptions httpx and JSON decoding can raise for a provider, network or payload problem and
turns each into a :class:`~scorecore.JudgeError`; anything else (a bug, cancellation) is not
caught. Secrets never reach an error: request headers are never copied, and every message,
provider code/type and response header value is scrubbed of the adapter's secrets.

How failures map (``kind`` / retryable / ``code`` of the cause):

- HTTP status >= 400: kind from :func:`scorecore.judge.retry.kind_for` on the status and the
  provider's ``error.code``/``error.type``; all response headers kept (``retry-after`` …).
- ``httpx.TimeoutException``: ``timeout`` / yes / ``ETIMEDOUT``.
- ``httpx.ConnectError``, ``ReadError``, ``WriteError``, ``RemoteProtocolError`` (a connection
  refused, reset or dropped mid-response): ``network`` / yes / ``ECONNREFUSED``,
  ``ECONNRESET`` … read from the underlying ``OSError``; a peer closing the connection early
  is reported as ``ECONNRESET``, as Node reports a "socket hang up".
- any other ``httpx.HTTPError`` or an invalid URL: ``unknown`` / no.
- a header value httpx cannot send (not ASCII: an API key with "é"): ``bad_request`` / no,
  nothing sent.
- a 2xx body that is not JSON, or lacks the fields the protocol promises: ``unknown`` / no,
  with the status and headers.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Iterable
from typing import Any, Final

import httpx

from scorecore.judge import JudgeError
from scorecore.judge.retry import kind_for
from scorecore.validators import is_int, is_number
from scorecore_adapters._http.scrub import redact, response_headers

__all__ = ["as_int", "as_str", "error_from_exception", "error_from_response", "malformed"]

_MAX_BODY_IN_MESSAGE: Final = 500
_PEER_CLOSED_HINTS: Final = (
    "peer closed connection",
    "server disconnected",
    "connection reset",
    "connection closed",
)


def as_str(value: object) -> str | None:
    """A provider field as text: strings as given, numbers (some servers send ``code: 400``)
    as their decimal form, anything else ``None``."""
    if isinstance(value, str):
        return value
    if is_number(value):
        return str(value)
    return None


def as_int(value: object) -> int | None:
    """A token count: an ``int`` (not ``bool``), otherwise ``None``."""
    return value if is_int(value) else None


def _snippet(body: bytes | str) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text.strip()
    if len(text) > _MAX_BODY_IN_MESSAGE:
        return text[:_MAX_BODY_IN_MESSAGE] + "…"
    return text


def error_from_response(
    response: httpx.Response, *, provider: str, secrets: Iterable[str] = ()
) -> JudgeError:
    """The error for a non-2xx reply, read from the provider's error body when there is one.

    Understands OpenAI's ``{"error": {"message", "type", "code"}}``, Anthropic's
    ``{"type": "error", "error": {"type", "message"}}`` and the ``{"error": "text"}`` of some
    OpenAI-compatible servers (Ollama).
    """
    keep = tuple(secrets)
    status = response.status_code
    message: str | None = None
    code: str | None = None
    type_: str | None = None
    try:
        body: Any = json.loads(response.content)
    except ValueError:  # not JSON (an HTML proxy page, a truncated body): keep the text
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            message = as_str(err.get("message"))
            code = as_str(err.get("code"))
            type_ = as_str(err.get("type"))
        elif isinstance(err, str):
            message = err
        elif isinstance(body.get("message"), str):
            message = body["message"]
    if message is None:
        snippet = _snippet(response.content)
        message = snippet or response.reason_phrase or "no error body"
    kind = kind_for(status, code, type_)
    if kind == "bad_request" and "prompt is too long" in message.lower():
        kind = "context_length"  # Anthropic reports context overflow only in the message
    return JudgeError(
        kind=kind,
        message=redact(f"{provider} returned HTTP {status}: {message}", keep),
        status=status,
        headers=response_headers(response, keep),
        # A server may echo anything into these too (a proxy put the credential in "code").
        code=None if code is None else redact(code, keep),
        type=None if type_ is None else redact(type_, keep),
    )


def malformed(
    what: str,
    *,
    provider: str,
    response: httpx.Response | None = None,
    secrets: Iterable[str] = (),
) -> JudgeError:
    """The error for a 2xx reply that does not follow the protocol (not JSON, fields missing)."""
    keep = tuple(secrets)
    status = response.status_code if response is not None else None
    detail = f"malformed {provider} response"
    if status is not None:
        detail += f" (HTTP {status})"
    detail += f": {what}"
    if response is not None:
        snippet = _snippet(response.content)
        detail += f"; body: {snippet!r}" if snippet else "; empty body"
    return JudgeError(
        kind="unknown",
        message=redact(detail, keep),
        status=status,
        headers=response_headers(response, keep) if response is not None else {},
        code="malformed_response",
        is_retryable=False,
    )


def _os_error(exc: BaseException) -> OSError | None:
    """The first ``OSError`` with an errno in the cause/context chain (and exception groups)."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, OSError) and node.errno is not None:
            return node
        if isinstance(node, BaseExceptionGroup):
            stack.extend(reversed(node.exceptions))
        stack.extend(nxt for nxt in (node.__context__, node.__cause__) if nxt is not None)
    return None


def _errno_code(exc: BaseException) -> tuple[str | None, OSError | None]:
    os_error = _os_error(exc)
    if os_error is not None and os_error.errno is not None:
        return errno.errorcode.get(os_error.errno), os_error
    text = str(exc).lower()
    if isinstance(exc, httpx.ConnectError) and "refused" in text:
        return "ECONNREFUSED", None
    if isinstance(exc, httpx.ReadError | httpx.WriteError | httpx.RemoteProtocolError) and any(
        hint in text for hint in _PEER_CLOSED_HINTS
    ):
        return "ECONNRESET", None
    return None, None


def error_from_exception(
    exc: httpx.HTTPError | httpx.InvalidURL, *, provider: str, secrets: Iterable[str] = ()
) -> JudgeError:
    """The error for an exception raised while sending the request or reading the reply."""
    keep = tuple(secrets)
    name = type(exc).__name__
    text = redact(str(exc) or name, keep)
    if isinstance(exc, httpx.TimeoutException):
        return JudgeError(
            kind="timeout",
            message=f"{provider} request timed out ({name}): {text}",
            code=None,
            exception_type=name,
            cause=JudgeError(kind="timeout", message=text, code="ETIMEDOUT", exception_type=name),
        )
    if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError | httpx.ProxyError):
        code, os_error = _errno_code(exc)
        if code is None and isinstance(exc, httpx.RemoteProtocolError):
            code = "ECONNRESET"  # the peer broke the exchange mid-way: a "socket hang up"
        cause = (
            JudgeError(
                kind="network",
                message=redact(str(os_error), keep) if os_error is not None else text,
                code=code,
                exception_type=type(os_error).__name__ if os_error is not None else name,
                is_retryable=True,
            )
            if code is not None
            else None
        )
        return JudgeError(
            kind="network",
            message=f"{provider} connection failed ({name}): {text}",
            exception_type=name,
            cause=cause,
            is_retryable=True,
        )
    return JudgeError(
        kind="unknown",
        message=f"{provider} request failed ({name}): {text}",
        exception_type=name,
        is_retryable=False,
    )

