"""One POST of an HTTP judge: a 2xx JSON reply, or the JudgeError for whatever went wrong."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, final

import anyio.to_thread
import attrs
import httpx
from returns.result import Failure, Result, Success

from scorecore.judge import JudgeError
from scorecore_adapters._http.errors import error_from_exception, error_from_response, malformed
from scorecore_adapters._http.scrub import redact, response_headers
from scorecore_adapters._llama import watch as server_watch

__all__ = ["HttpReply", "post_json"]


@final
@attrs.frozen(kw_only=True)
class HttpReply:
    """A successful (2xx) HTTP reply whose body decoded as JSON.

    ``headers`` are the response headers, lower-cased and scrubbed of secrets.
    """

    response: httpx.Response
    headers: Mapping[str, str]
    body: Any

    @property
    def status(self) -> int:
        """The HTTP status code."""
        return self.response.status_code


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    request_timeout: float,
    provider: str,
    secrets: Iterable[str] = (),
    auth: httpx.Auth | None = None,
) -> Result[HttpReply, JudgeError]:
    """POST ``body`` as JSON; a 2xx JSON reply is ``Success``, everything else a ``Failure``.

    ``auth`` (the Basic credential of a ``base_url`` with userinfo) applies to this request
    only and takes precedence over an ``Authorization`` header and the client's own auth.
    """
    keep = tuple(secrets)
    try:
        content = json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:  # a non-JSON value in settings.extra or the schema
        return Failure(
            JudgeError(
                kind="bad_request",
                message=redact(f"{provider} request body is not JSON-serialisable: {exc}", keep),
                exception_type=type(exc).__name__,
                is_retryable=False,
            )
        )
    try:
        response = await client.post(
            url,
            content=content,
            headers={**headers, "content-type": "application/json"},
            timeout=request_timeout,
            auth=httpx.USE_CLIENT_DEFAULT if auth is None else auth,
        )
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        error = error_from_exception(exc, provider=provider, secrets=keep)
        if isinstance(exc, httpx.TransportError) and server_watch.watched(url):
            # A server run by llama_server() may have died (a native fault): say that, with
            # its signal and last output, rather than "Server disconnected".
            died = await anyio.to_thread.run_sync(server_watch.death_of, url)
            if died is not None:
                # The disconnection as the cause, not retryable either: nothing restarts it.
                return Failure(attrs.evolve(died, cause=JudgeError(
                    kind="network", message=error.message, exception_type=error.exception_type,
                    is_retryable=False)))
        return Failure(error)
    except UnicodeEncodeError as exc:  # httpx sends header values as ASCII (a key with "é")
        return Failure(
            JudgeError(
                kind="bad_request",
                message=redact(
                    f"{provider} request not sent: a header value (the API key, "
                    f"organization or default_headers) is not ASCII: {exc.reason} at "
                    f"position {exc.start}",
                    keep,
                ),
                exception_type=type(exc).__name__,
                is_retryable=False,
            )
        )
    if not response.is_success:
        return Failure(error_from_response(response, provider=provider, secrets=keep))
    try:
        parsed: Any = json.loads(response.content)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        return Failure(
            malformed(f"body is not valid JSON ({exc})", provider=provider, response=response,
                      secrets=keep)
        )
    return Success(
        HttpReply(response=response, headers=response_headers(response, keep), body=parsed)
    )
