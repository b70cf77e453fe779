"""A judge's public route to its server for exchanges other than :meth:`generate` (a batch
API's uploads, polls and downloads): its client, headers, credentials and timeout, and the
same failure mapping and scrubbing as its own calls."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, final

import httpx
from returns.result import Failure, Result, Success

from scorecore.judge import JudgeError, JudgeRequest
from scorecore_adapters._http.errors import error_from_exception, error_from_response, malformed

__all__ = ["HttpTransport"]


@final
class HttpTransport:
    """Sends requests the way an HTTP judge sends its own (the judge's ``transport``): with its
    client (the one it owns for the running event loop, or the injected one), its headers, its
    ``base_url`` credentials as Basic auth and its timeout; every failure is the
    :class:`~scorecore.JudgeError` its ``generate`` would report, scrubbed of its secrets.

    >>> from scorecore_adapters.openai import OpenAIChatModel
    >>> model = OpenAIChatModel("m", base_url="http://localhost:8000/v1", api_key="sk-" + "x" * 20)
    >>> model.transport.provider
    'openai'
    >>> model.transport.secrets()[0] == "sk-" + "x" * 20
    True
    """

    __slots__ = ("_auth", "_client", "_headers", "_provider", "_secrets", "_timeout")

    def __init__(
        self, *, provider: str, headers: Mapping[str, str], timeout: float,
        auth: httpx.Auth | None, secrets: Callable[[JudgeRequest | None], tuple[str, ...]],
        client: Callable[[], Awaitable[httpx.AsyncClient]],
    ) -> None:
        self._provider = provider
        self._headers = dict(headers)
        self._timeout = timeout
        self._auth = auth
        self._secrets = secrets
        self._client = client

    def __repr__(self) -> str:
        # The headers and auth carry credentials: never shown.
        return f"HttpTransport(provider={self._provider!r})"

    @property
    def provider(self) -> str:
        """The judge's provider protocol, which names it in error messages."""
        return self._provider

    def secrets(self, request: JudgeRequest | None = None) -> tuple[str, ...]:
        """Every secret to scrub from what the server sends back (longest first): the API key,
        the credentials of ``base_url``, credential headers and, for ``request``, credentials
        in its ``ModelSettings.extra``."""
        return self._secrets(request)

    async def send(
        self, method: str, url: str, *, json_body: Mapping[str, Any] | None = None,
        files: Mapping[str, Any] | None = None, data: Mapping[str, str] | None = None,
    ) -> Result[httpx.Response, JudgeError]:
        """Send one request: ``json_body`` as JSON, or ``files`` (and form ``data``) as
        multipart. A 2xx reply is ``Success``; anything else (an error status, a refused
        connection, a timeout) is ``Failure`` with the error the judge's own call would give."""
        secrets = self.secrets()
        headers = dict(self._headers)
        kwargs: dict[str, Any] = {}
        if json_body is not None:
            kwargs["content"] = json.dumps(json_body, ensure_ascii=False).encode()
            headers["content-type"] = "application/json"
        if files is not None:
            kwargs["files"] = files
            kwargs["data"] = data or {}
        try:
            client = await self._client()
            response = await client.request(
                method, url, headers=headers, timeout=self._timeout,
                auth=httpx.USE_CLIENT_DEFAULT if self._auth is None else self._auth, **kwargs,
            )
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            return Failure(error_from_exception(exc, provider=self.provider, secrets=secrets))
        if not response.is_success:
            return Failure(error_from_response(response, provider=self.provider, secrets=secrets))
        return Success(response)

    def json_object(self, response: httpx.Response) -> Result[dict[str, Any], JudgeError]:
        """The reply's body as a JSON object, or the malformed-reply error (not JSON, or JSON
        that is not an object)."""
        try:
            body = json.loads(response.content)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return Failure(malformed("expected a JSON object", provider=self.provider,
                                     response=response, secrets=self.secrets()))
        return Success(body)
