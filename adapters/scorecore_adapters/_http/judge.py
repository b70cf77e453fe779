"""Shared plumbing of the HTTP judges: one POST, every way it can fail as a JudgeError, and
the reply repair both judges apply (:func:`prune_optional_nulls`).

This module is the exception boundary of the HTTP adapters. It catches exactly the
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

import base64
import errno
import hashlib
import json
import threading
import weakref
from collections.abc import AsyncGenerator, Iterable, Mapping
from types import TracebackType
from typing import Any, Final, Self, cast, final
from urllib.parse import unquote, urlsplit, urlunsplit

import anyio.lowlevel
import anyio.to_thread
import attrs
import httpx
from returns.result import Failure, Result, Success

from scorecore import redact_secrets
from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse
from scorecore.judge.retry import kind_for
from scorecore.validators import is_int, is_number, misuse
from scorecore_adapters import _batch_switch, _guard, _local_servers

__all__ = [
    "HttpReply",
    "accepts_null",
    "as_int",
    "as_str",
    "error_from_exception",
    "error_from_response",
    "malformed",
    "post_json",
    "prune_optional_nulls",
    "redact",
    "scrub_response",
    "split_userinfo",
]

_REDACTED: Final = "[REDACTED]"
_MAX_BODY_IN_MESSAGE: Final = 500
_PEER_CLOSED_HINTS: Final = (
    "peer closed connection",
    "server disconnected",
    "connection reset",
    "connection closed",
)


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


def accepts_null(schema: object) -> bool:
    """Whether a JSON schema (as far as its ``type``/``anyOf``/``enum`` tell) admits ``null``."""
    if not isinstance(schema, Mapping):
        return True  # ``true`` or an unknown form: anything goes
    type_ = schema.get("type")
    if type_ is None:
        alternatives = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(alternatives, list):
            return any(accepts_null(alt) for alt in alternatives)
        return "enum" not in schema and "const" not in schema
    return type_ == "null" or (isinstance(type_, list) and "null" in type_)


def prune_optional_nulls(value: Any, schema: Any) -> Any:
    """``value`` without the ``null``s in properties ``schema`` leaves optional and non-null.

    OpenAI's strict mode makes optional properties nullable and the model then sends
    ``null`` for them; Claude's tool inputs sometimes do the same. Dropping those keys turns
    the reply into what the user's own schema expects, so the core's validation holds.
    Follows ``properties`` and ``items``; other combinators are left alone.
    """
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return value
        required = set(schema.get("required") or ())
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key)
            if item is None and key not in required and key in props and not accepts_null(sub):
                continue
            out[key] = prune_optional_nulls(item, sub)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [prune_optional_nulls(item, schema["items"]) for item in value]
    return value


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every non-empty secret replaced by ``[REDACTED]``; no secret is left in
    the result, even one that overlaps the marker or re-forms once another is replaced.

    >>> redact("key=sk-123 again sk-123", ["sk-123"])
    'key=[REDACTED] again [REDACTED]'
    """
    keep = [secret for secret in secrets if secret]
    for secret in keep:
        text = text.replace(secret, _REDACTED)
    # Only a secret that is part of the marker (or spans a replacement) gets here; deleting
    # shortens the text on every pass, so this ends.
    while any(secret in text for secret in keep):
        for secret in keep:
            text = text.replace(secret, "")
    return text


def scrub_response(response: JudgeResponse, secrets: Iterable[str]) -> JudgeResponse:
    """``response`` with every secret removed from the text the provider sent back.

    A server may echo anything into a successful reply (a proxy that repeats the request, a
    model asked to print its headers); the reply text ends up in results, telemetry and
    stores, so it is scrubbed like an error body.
    """
    keep = tuple(secrets)
    if not keep:
        return response
    return attrs.evolve(
        response,
        text=redact(response.text, keep),
        finish_reason=None if response.finish_reason is None
        else redact(response.finish_reason, keep),
        model_id=None if response.model_id is None else redact(response.model_id, keep),
    )


def _headers(response: httpx.Response, secrets: Iterable[str]) -> dict[str, str]:
    # Response headers only (request headers carry the key); duplicates are comma-joined.
    keep = tuple(secrets)
    return {k.lower(): redact(v, keep) for k, v in response.headers.items()}


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
        headers=_headers(response, keep),
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
        headers=_headers(response, keep) if response is not None else {},
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
        if isinstance(exc, httpx.TransportError) and _local_servers.watched(url):
            # A server run by llama_server() may have died (a native fault): say that, with
            # its signal and last output, rather than "Server disconnected".
            died = await anyio.to_thread.run_sync(_local_servers.death_of, url)
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
        HttpReply(response=response, headers=_headers(response, keep), body=parsed)
    )


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without its ``user:password@`` part, and the (percent-decoded) pair if any.

    >>> split_userinfo("https://u:p%40ss@host:8080/v1")
    ('https://host:8080/v1', ('u', 'p@ss'))
    >>> split_userinfo("http://localhost:11434/v1")
    ('http://localhost:11434/v1', None)
    """
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), (unquote(user), unquote(password))


def _basic_credential(user: str, password: str) -> str:
    # What httpx.BasicAuth puts after "Basic " (it encodes both parts as UTF-8).
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def _is_credential(name: str, value: str, secrets: Iterable[str] = ()) -> bool:
    """Whether a header carries a credential: its name or value looks like one (the rules of
    :func:`scorecore.redact_secrets`: ``Authorization``, ``api-key``, ``X-…-Token``,
    ``Bearer …`` …), or it holds one of the model's own secrets."""
    if redact_secrets({name: value}) != {name: value}:
        return True
    return any(secret and secret in value for secret in secrets)


# A configured value shorter than this is no credential (``X-Auth-Enabled: 1``): scrubbing it
# from every reply would break the replies ("1" in every score), so it is left alone.
_MIN_CONFIGURED_SECRET = 8
_AUTH_SCHEME = ("bearer ", "basic ", "token ")
_PUNCTUATION = ",.;:!?'\"()[]{}<>"


def _credential_forms(value: str) -> list[str]:
    """A credential value, and its token without an ``Authorization`` scheme."""
    forms = [value.strip()]
    lowered = forms[0].lower()
    for scheme in _AUTH_SCHEME:
        if lowered.startswith(scheme):
            forms.append(forms[0][len(scheme):].strip())
    return [form for form in forms if len(form) >= _MIN_CONFIGURED_SECRET]


def _header_secrets(headers: Mapping[str, object]) -> list[str]:
    """The values of the headers that carry credentials (``api-key``, ``X-…-Auth`` …)."""
    return [
        form for name, value in headers.items()
        if isinstance(value, str) and _is_credential(name, value)
        for form in _credential_forms(value)
    ]


def _extra_secrets(extra: Mapping[str, Any]) -> list[str]:
    """Credential values anywhere in ``ModelSettings.extra``: text under a key that names one
    (``api_key``, ``session_token`` …, at any depth), or text shaped like one (``sk-…``,
    ``Bearer …``), by the rules of :func:`scorecore.redact_secrets`."""
    found: list[str] = []
    stack: list[tuple[object, bool]] = [(extra, False)]
    while stack and len(found) < 1_000:
        value, secret_key = stack.pop()
        if isinstance(value, str):
            if secret_key or redact_secrets(value) == _REDACTED:
                found.extend(_credential_forms(value))
            elif redact_secrets(value) != value:
                # A credential inside a longer text ("use sk-… for billing"): its word.
                found.extend(
                    form for word in value.split()
                    if redact_secrets(word) != word
                    for form in _credential_forms(word.strip(_PUNCTUATION))
                )
        elif isinstance(value, Mapping):
            for key, item in value.items():
                named = isinstance(key, str) and redact_secrets({key: None}) != {key: None}
                stack.append((item, named))
        elif isinstance(value, list | tuple):
            stack.extend((item, secret_key) for item in value)
    return found


def _loop_has_ended(loop: object) -> bool:
    # asyncio loops say so. A trio run closes every keeper (which forgets its client) before
    # trio.run returns, so a trio token still listed belongs to a live run.
    is_closed = getattr(loop, "is_closed", None)
    return callable(is_closed) and bool(is_closed())


async def _keeper(
    client: httpx.AsyncClient, owner: weakref.ref[_OwnedClients], loop: object
) -> AsyncGenerator[None, None]:
    """Stays suspended at its ``yield`` for as long as ``client`` is in use; closing it closes
    the client.

    Both asyncio (``shutdown_asyncgens``, run by ``asyncio.run`` and ``anyio.run``) and trio
    close the async generators still alive when their event loop ends, so a client is closed
    on its own loop before that loop goes away, even if the model is never closed; the
    model's ``aclose()`` closes it earlier. A model dropped unclosed while its loop runs has
    its keeper closed by that loop's async-generator finaliser (trio adds a
    ``ResourceWarning`` saying so).
    """
    try:
        yield
    finally:
        clients = owner()
        if clients is not None:
            clients.forget(loop, client)
        await client.aclose()


@final
@attrs.frozen(kw_only=True)
class _Owned:
    client: httpx.AsyncClient
    keeper: AsyncGenerator[None, None]


@final
class _OwnedClients:
    """The ``httpx.AsyncClient`` s a model created: exactly one per event loop.

    A client's connections belong to the event loop that opened them, so each loop (an
    asyncio loop, a trio run) gets its own client, reused by every call made under it and
    closed when that loop ends or the model is closed. Loops are told apart by anyio's
    event-loop token: its ``native_token`` is the asyncio loop object or the ``TrioToken``,
    one object for the whole life of a loop (``current_token()`` itself makes a new wrapper
    on every call, so it cannot be compared by identity).
    """

    __slots__ = ("__weakref__", "_by_loop", "_lock")

    def __init__(self) -> None:
        self._by_loop: dict[object, _Owned] = {}
        # A model may be shared by event loops running in several threads.
        self._lock = threading.RLock()  # re-entrant: a keeper closed inline may forget itself

    async def get(self) -> httpx.AsyncClient:
        """The client of the running event loop, created on first use."""
        loop = anyio.lowlevel.current_token().native_token
        with self._lock:
            owned = self._by_loop.get(loop)
            if owned is not None:
                return owned.client
            for ended in [key for key in self._by_loop if _loop_has_ended(key)]:
                # Closed without finalising its async generators: nothing can close its
                # client any more; at least do not keep the dead loop alive.
                del self._by_loop[ended]
            client = httpx.AsyncClient()
            keeper = _keeper(client, weakref.ref(self), loop)
            self._by_loop[loop] = _Owned(client=client, keeper=keeper)
        # The first step runs to the ``yield`` without suspending, and registers the keeper
        # with this loop's async-generator hooks; calls arriving meanwhile already see it.
        await anext(keeper)
        return client

    def forget(self, loop: object, client: httpx.AsyncClient) -> None:
        """Drop ``client`` (being closed) if it is still the one listed for ``loop``."""
        with self._lock:
            owned = self._by_loop.get(loop)
            if owned is not None and owned.client is client:
                del self._by_loop[loop]

    async def aclose(self) -> None:
        """Close the running loop's client (a later call creates a new one).

        Clients made under other event loops are not touched: their connections belong to
        those loops, which close them when they end.
        """
        loop = anyio.lowlevel.current_token().native_token
        with self._lock:
            owned = self._by_loop.pop(loop, None)
        if owned is not None:
            await owned.keeper.aclose()


class HttpJudgeBase:
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
                s for s in (raw, _basic_credential(user, password), secret, raw.partition(":")[2])
                if s
            )
        self._api_key = api_key
        # An injected client is used as is; without one the model makes its own, per loop.
        self._client: httpx.AsyncClient | _OwnedClients = (
            _OwnedClients() if client is None else client
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
            if name.lower() != "accept" and not _is_credential(name, value, secrets)
        )
        if not kept:
            return self._base_url
        digest = hashlib.sha256(json.dumps(kept, ensure_ascii=False).encode()).hexdigest()
        return f"{self._base_url} headers:{digest[:16]}"

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
        router = _batch_switch.ROUTER.get()
        if router is not None and router.routes(self):  # inside use_batch_api(...)
            return await router.generate(self, request)
        return await self._generate(request)

    @property
    def batch_api(self) -> bool:
        """Whether this judge's calls go through a provider batch API (inside
        :func:`scorecore_adapters.batch.use_batch_api`); they are then priced at the batch
        price."""
        router = _batch_switch.ROUTER.get()
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
        reply = HttpReply(response=response, headers=_headers(response, secrets), body=body)
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
        if isinstance(self._client, _OwnedClients):
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _secrets(self, request: JudgeRequest | None = None) -> tuple[str, ...]:
        """Every secret to scrub from what the server sends back: the API key, the
        credentials of ``base_url``, credential headers in ``default_headers`` and, for a
        request, credentials in its ``ModelSettings.extra``."""
        # A placeholder key for a local server (``"x"``, ``"ollama"``, ``"EMPTY"``) is no
        # credential, and scrubbing it from replies would corrupt them (every "x" in a JSON
        # reply's keys): like a short header value, it is left alone.
        key = self._api_key if len(self._api_key or "") >= _MIN_CONFIGURED_SECRET else None
        raw = {
            *self._userinfo_secrets, *((key,) if key else ()),
            *_header_secrets(self._default_headers),
            *(() if request is None else _extra_secrets(request.settings.extra)),
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
        if isinstance(self._client, _OwnedClients):
            return await self._client.get()
        return self._client
