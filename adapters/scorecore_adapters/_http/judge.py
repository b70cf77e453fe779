"""The base class of the HTTP judges (:class:`~scorecore_adapters.openai.OpenAIChatModel`,
:class:`~scorecore_adapters.anthropic.AnthropicModel`): the model name, the client it owns or
borrows, its credentials, and :meth:`HttpJudgeBase.generate`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import urlsplit

import httpx
from returns.result import Failure, Result

from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse
from scorecore.validators import misuse
from scorecore_adapters import _guard
from scorecore_adapters._http import routing as batch_routing
from scorecore_adapters._http.clients import OwnedClients
from scorecore_adapters._http.errors import error_from_response
from scorecore_adapters._http.exchange import HttpReply, post_json
from scorecore_adapters._http.scrub import (
    MIN_CONFIGURED_SECRET,
    basic_credential,
    extra_secrets,
    header_secrets,
    is_credential,
    response_headers,
    scrub_response,
    split_userinfo,
)
from scorecore_adapters._http.transport import HttpTransport
from scorecore_adapters._resources import AsyncResource

__all__ = ["HttpJudgeBase"]


class HttpJudgeBase(AsyncResource):
    """What the HTTP judges share: the model name, the client they own or borrow, the key.

    The API key is never shown: ``repr`` prints ``'***'`` in its place. Credentials written
    into ``base_url`` (``https://user:password@host/v1``) are taken out of the URL: ``repr``
    and :attr:`base_url` show it without them, requests send them as explicit Basic auth (as
    httpx would for userinfo), and the password, the raw userinfo and the Basic credential are
    secrets scrubbed from every error, like the API key.
    """

    __slots__ = (
        "_api_key",
        "_base_url",
        "_basic_auth",
        "_client",
        "_default_headers",
        "_model",
        "_structured",
        "_timeout",
        "_userinfo_secrets",
    )
    _provider: str = ""

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None,
        client: httpx.AsyncClient | None,
        structured: bool,
        timeout: float,
        default_headers: Mapping[str, str] | None,
    ) -> None:
        if not isinstance(cast(object, model), str) or not model:
            raise misuse(f"{type(self).__name__}.model", model, "must be a non-empty model name")
        self._model = model
        url, userinfo = split_userinfo(base_url.rstrip("/"))
        self._base_url = url
        self._userinfo_secrets: tuple[str, ...] = ()
        self._basic_auth: httpx.BasicAuth | None = None
        if userinfo is not None:
            user, password = userinfo
            raw = urlsplit(base_url).netloc.rpartition("@")[0]
            # Without a password the user name is the credential (``https://TOKEN@host``).
            secret = password or user
            self._basic_auth = httpx.BasicAuth(user, password)
            self._userinfo_secrets = tuple(
                s for s in (raw, basic_credential(user, password), secret, raw.partition(":")[2])
                if s
            )
        self._api_key = api_key
        # An injected client is used as is; without one the model makes its own, per loop.
        self._client: httpx.AsyncClient | OwnedClients = (
            OwnedClients() if client is None else client
        )
        self._structured = structured
        self._timeout = timeout
        self._default_headers = dict(default_headers or {})

    @property
    def model_id(self) -> str:
        """The model name sent to the server."""
        return self._model

    @property
    def provider(self) -> str:
        """The provider protocol (``"openai"`` or ``"anthropic"``)."""
        return self._provider

    @property
    def supports_structured_output(self) -> bool:
        """Whether native schemas are used for ``JudgeRequest.native_schema``."""
        return self._structured

    @property
    def base_url(self) -> str:
        """The API root requests go to."""
        return self._base_url

    @property
    def cache_identity(self) -> str:
        """Where the answers come from, for the judge cache key: the base URL, and a digest of
        the request headers that are not credentials (``default_headers``, the organization
        or API version), so two endpoints (or two routing headers) serving one model id never
        share cache entries. Credentials never take part: a rotated key reads the same
        entries.

        >>> from scorecore_adapters.openai import OpenAIChatModel
        >>> OpenAIChatModel("m", base_url="http://localhost:8000/v1").cache_identity
        'http://localhost:8000/v1'
        """
        secrets = self._secrets()
        kept = sorted(
            (name.lower(), value) for name, value in self._headers().items()
            if name.lower() != "accept" and not is_credential(name, value, secrets)
        )
        if not kept:
            return self._base_url
        digest = hashlib.sha256(json.dumps(kept, ensure_ascii=False).encode()).hexdigest()
        return f"{self._base_url} headers:{digest[:16]}"

    @property
    def transport(self) -> HttpTransport:
        """This judge's route to its server for exchanges other than :meth:`generate` (a batch
        API's files and jobs): its client, headers, credentials and timeout, and the errors
        :meth:`generate` would report, scrubbed of its secrets.

        >>> from scorecore_adapters.openai import OpenAIChatModel
        >>> OpenAIChatModel("m", base_url="http://localhost:8000/v1").transport
        HttpTransport(provider='openai')
        """
        return HttpTransport(
            provider=self._provider, headers=self._headers(), timeout=self._timeout,
            auth=self._basic_auth, secrets=self._secrets, client=self._client_for_call,
        )

    def __repr__(self) -> str:
        key = "***" if self._api_key else None
        name = type(self).__name__
        return f"{name}({self._model!r}, base_url={self._base_url!r}, api_key={key!r})"

    _endpoint: str = ""  # the path after base_url that generate() posts to

    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def build_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The provider's request body for ``request`` (no I/O; useful for debugging)."""
        raise NotImplementedError

    def _parse(self, reply: HttpReply, request: JudgeRequest) -> Result[JudgeResponse, JudgeError]:
        raise NotImplementedError

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        """Ask the model; never raises for a provider, network or payload problem.

        Returns ``Failure(JudgeError)`` with ``code="model_requests_disabled"`` inside a test
        unless requests are allowed (see :func:`scorecore_adapters.allow_model_requests`).
        """
        refused = _guard.refusal(self._model, self._provider)
        if refused is not None:
            return Failure(refused)
        router = batch_routing.ROUTER.get()
        if router is not None and router.routes(self):  # inside use_batch_api(...)
            return await router.generate(self, request)
        return await self._generate(request)

    @property
    def batch_api(self) -> bool:
        """Whether this judge's calls go through a provider batch API (inside
        :func:`scorecore_adapters.batch.use_batch_api`); they are then priced at the batch
        price."""
        router = batch_routing.ROUTER.get()
        return router is not None and router.routes(self)

    async def _generate(self, request: JudgeRequest) -> Result[JudgeResponse, JudgeError]:
        """One exchange for ``request``; a judge that may need several overrides this."""
        return await self._exchange(request, self.build_body(request))

    async def _exchange(
        self, request: JudgeRequest, body: Mapping[str, Any]
    ) -> Result[JudgeResponse, JudgeError]:
        """POST ``body`` and parse the reply to ``request``."""
        timeout = request.settings.timeout
        secrets = self._secrets(request)
        reply = await post_json(
            await self._client_for_call(),
            f"{self._base_url}{self._endpoint}",
            headers=self._headers(),
            body=body,
            request_timeout=self._timeout if timeout is None else timeout,
            provider=self._provider,
            secrets=secrets,
            auth=self._basic_auth,
        )
        return reply.bind(lambda r: self._parse(r, request)).map(
            lambda response: scrub_response(response, secrets)
        )

    def read_reply(
        self, request: JudgeRequest, body: object, *, status: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> Result[JudgeResponse, JudgeError]:
        """Read a reply to ``request`` that came by another route than :meth:`generate` (a
        batch result line) exactly as :meth:`generate` reads its own: a non-2xx ``status`` is
        the provider's error, a 2xx body goes through the same parsing and repair, and every
        secret is scrubbed."""
        secrets = self._secrets(request)
        response = httpx.Response(status, json=body, headers=dict(headers or {}))
        if not response.is_success:
            return Failure(error_from_response(response, provider=self._provider,
                                               secrets=secrets))
        reply = HttpReply(response=response, headers=response_headers(response, secrets), body=body)
        return self._parse(reply, request).map(
            lambda parsed: scrub_response(self._finish_reply(parsed, request), secrets)
        )

    def _finish_reply(self, response: JudgeResponse, request: JudgeRequest) -> JudgeResponse:
        """What :meth:`read_reply` does to a parsed reply besides scrubbing (none here)."""
        del request
        return response

    async def aclose(self) -> None:
        """Close the HTTP client this model created for the running event loop; an injected
        client is left open. The model stays usable: a later call creates a new client."""
        if isinstance(self._client, OwnedClients):
            await self._client.aclose()

    def _secrets(self, request: JudgeRequest | None = None) -> tuple[str, ...]:
        """Every secret to scrub from what the server sends back: the API key, the
        credentials of ``base_url``, credential headers in ``default_headers`` and, for a
        request, credentials in its ``ModelSettings.extra``."""
        # A placeholder key for a local server (``"x"``, ``"ollama"``, ``"EMPTY"``) is no
        # credential, and scrubbing it from replies would corrupt them (every "x" in a JSON
        # reply's keys): like a short header value, it is left alone.
        key = self._api_key if len(self._api_key or "") >= MIN_CONFIGURED_SECRET else None
        raw = {
            *self._userinfo_secrets, *((key,) if key else ()),
            *header_secrets(self._default_headers),
            *(() if request is None else extra_secrets(request.settings.extra)),
        }
        # A secret echoed inside JSON text (a structured reply, an error body) is escaped.
        found = {
            form
            for secret in raw
            for form in (
                secret,
                json.dumps(secret)[1:-1],
                json.dumps(secret, ensure_ascii=False)[1:-1],
            )
        }
        # Longest first, so a secret containing another is replaced whole.
        return tuple(sorted(found, key=len, reverse=True))

    async def _client_for_call(self) -> httpx.AsyncClient:
        if isinstance(self._client, OwnedClients):
            return await self._client.get()
        return self._client
