"""Every way an HTTP judge call fails becomes a JudgeError value, never an exception.

The first half drives the mapping with ``httpx.MockTransport``; the second half injects real
faults from the loopback server (429, 503, 529, dropped and refused connections, slow replies,
invalid JSON) through a real ``httpx.AsyncClient``, for both protocols.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from returns.result import Failure, Success

from scorecore import JudgeModel, ModelSettings
from scorecore.judge import JudgeError, JudgeMessage, JudgeRequest
from scorecore_adapters._http.errors import error_from_exception
from scorecore_adapters._http.scrub import redact
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import OpenAIChatModel
from scorecore_adapters.retry import StreamErrorRetryProcessor
from tests.adapters.http.loopback import (
    Drop,
    Error,
    LoopbackServer,
    Raw,
    Reply,
    Slow,
    free_port,
)

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("allow_requests")]

KEY = "sk-test-SECRET-0123456789"
PROVIDERS = ["openai", "anthropic"]
REQUEST = JudgeRequest(messages=(JudgeMessage(role="user", content="Score this."),))
SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"],
}


def make_model(provider: str, client: httpx.AsyncClient, base: str = "http://judge.test",
               timeout: float = 5.0) -> JudgeModel:
    if provider == "openai":
        return OpenAIChatModel("m", base_url=f"{base}/v1", api_key=KEY, client=client,
                               timeout=timeout)
    return AnthropicModel("m", base_url=base, api_key=KEY, client=client, timeout=timeout)


async def call_mock(provider: str, handler: Callable[[httpx.Request], httpx.Response],
                    req: JudgeRequest = REQUEST) -> JudgeError:
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        result = await make_model(provider, client).generate(req)
    assert isinstance(result, Failure), result
    error: JudgeError = result.failure()
    assert_no_secret(error)
    return error


def assert_no_secret(error: JudgeError) -> None:
    for node in error.chain():
        assert KEY not in repr(node)


def openai_error(status: int, type_: str | None, code: str | None, message: str,
                 headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers,
                          json={"error": {"message": message, "type": type_, "code": code}})


def anthropic_error(status: int, type_: str, message: str,
                    headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers, json={
        "type": "error", "error": {"type": type_, "message": message}, "request_id": "req_1",
    })


async def test_openai_rate_limit_keeps_all_headers(anyio_backend: str) -> None:
    """A 429 keeps status, every response header, the provider code/type, and is retryable."""
    headers = {"retry-after": "2", "retry-after-ms": "1500", "x-request-id": "abc"}
    error = await call_mock("openai", lambda _r: openai_error(
        429, "requests", "rate_limit_exceeded", "Rate limit reached", headers))
    assert error.kind == "rate_limit"
    assert error.status == 429
    assert error.is_retryable
    assert error.code == "rate_limit_exceeded"
    assert error.type == "requests"
    assert {k: error.headers[k] for k in headers} == headers
    assert "Rate limit reached" in error.message


@pytest.mark.parametrize(
    "case",
    [
        (401, "invalid_request_error", "invalid_api_key", "auth", False),
        (403, None, None, "auth", False),
        (400, "invalid_request_error", "context_length_exceeded", "context_length", False),
        (400, "invalid_request_error", None, "bad_request", False),
        (404, "invalid_request_error", "model_not_found", "bad_request", False),
        (408, None, None, "timeout", True),
        (409, None, None, "bad_request", True),
        (500, "server_error", None, "server", True),
        (503, None, None, "server", True),
    ],
)
async def test_openai_status_mapping(
    anyio_backend: str, case: tuple[int, str | None, str | None, str, bool]
) -> None:
    """Status and provider code decide the kind and the retry flag."""
    status, type_, code, kind, retryable = case
    error = await call_mock("openai", lambda _r: openai_error(status, type_, code, "boom"))
    assert (error.kind, error.is_retryable, error.status) == (kind, retryable, status)


async def test_key_echoed_by_provider_is_redacted(anyio_backend: str) -> None:
    """A provider echoing the key in its message or a header never leaks it into the error."""
    error = await call_mock("openai", lambda _r: openai_error(
        401, "invalid_request_error", "invalid_api_key", f"Incorrect API key provided: {KEY}",
        {"x-echo": f"Bearer {KEY}"}))
    assert error.kind == "auth"
    assert KEY not in error.message
    assert "[REDACTED]" in error.message
    assert KEY not in error.headers["x-echo"]


async def test_request_headers_are_never_copied(anyio_backend: str) -> None:
    """Only response headers reach the error; the Authorization header never does."""
    error = await call_mock("openai", lambda _r: openai_error(500, None, None, "x"))
    assert "authorization" not in error.headers
    assert "x-api-key" not in error.headers


@pytest.mark.parametrize(
    ("status", "type_", "kind", "retryable"),
    [
        (529, "overloaded_error", "server", True),
        (429, "rate_limit_error", "rate_limit", True),
        (401, "authentication_error", "auth", False),
        (403, "permission_error", "auth", False),
        (400, "invalid_request_error", "bad_request", False),
        (500, "api_error", "server", True),
    ],
)
async def test_anthropic_status_mapping(anyio_backend: str, status: int, type_: str, kind: str,
                                        retryable: bool) -> None:
    """Anthropic's error types map like OpenAI's; 529 overloaded is a retryable server error."""
    error = await call_mock("anthropic", lambda _r: anthropic_error(status, type_, "nope"))
    assert (error.kind, error.is_retryable, error.status, error.type) == (
        kind, retryable, status, type_)


async def test_anthropic_prompt_too_long_is_context_length(anyio_backend: str) -> None:
    """Anthropic reports context overflow only in the message; it still maps to context_length."""
    error = await call_mock("anthropic", lambda _r: anthropic_error(
        400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"))
    assert error.kind == "context_length"


async def test_ollama_style_string_error(anyio_backend: str) -> None:
    """``{"error": "text"}`` (Ollama) and numeric codes (vLLM) are understood."""
    error = await call_mock("openai", lambda _r: httpx.Response(404, json={
        "error": "model 'x' not found"}))
    assert error.message.endswith("model 'x' not found")
    numeric = await call_mock("openai", lambda _r: httpx.Response(400, json={
        "error": {"message": "bad", "type": "BadRequestError", "code": 400}}))
    assert numeric.code == "400"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_error_status_with_html_body(anyio_backend: str, provider: str) -> None:
    """A non-JSON error page keeps its status and a snippet of the text."""
    error = await call_mock(provider, lambda _r: httpx.Response(502, text="<h1>Bad gateway</h1>"))
    assert (error.kind, error.status, error.is_retryable) == ("server", 502, True)
    assert "Bad gateway" in error.message


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "body",
    [b"{not json", b'{"id": "x"', b"", b"[1, 2]", b'{"id": "x"}', b'{"choices": [], "content": 3}'],
)
async def test_malformed_success_bodies(anyio_backend: str, provider: str, body: bytes) -> None:
    """Invalid, truncated or shapeless 200 bodies are clear, non-retryable unknown errors."""
    error = await call_mock(provider, lambda _r: httpx.Response(200, content=body))
    assert error.kind == "unknown"
    assert error.status == 200
    assert error.code == "malformed_response"
    assert not error.is_retryable
    assert "malformed" in error.message


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("exc", "kind", "code"),
    [
        (httpx.ConnectError("[Errno 111] Connection refused"), "network", "ECONNREFUSED"),
        (httpx.ReadError("Connection reset by peer"), "network", "ECONNRESET"),
        (httpx.RemoteProtocolError("Server disconnected without sending a response."),
         "network", "ECONNRESET"),
        (httpx.ReadTimeout("timed out"), "timeout", "ETIMEDOUT"),
        (httpx.ConnectTimeout("timed out"), "timeout", "ETIMEDOUT"),
        (httpx.PoolTimeout("timed out"), "timeout", "ETIMEDOUT"),
    ],
)
async def test_transport_exceptions(anyio_backend: str, provider: str, exc: httpx.HTTPError,
                                    kind: str, code: str) -> None:
    """Transport exceptions become retryable network/timeout errors with an errno-like cause."""

    def boom(_r: httpx.Request) -> httpx.Response:
        raise exc

    error = await call_mock(provider, boom)
    assert error.kind == kind
    assert error.is_retryable
    assert error.status is None
    assert error.exception_type == type(exc).__name__
    assert error.cause is not None
    assert error.cause.code == code


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_other_httpx_errors_are_not_retryable(anyio_backend: str, provider: str) -> None:
    """A decoding error or an unsupported URL scheme is unknown and not retryable."""

    def boom(_r: httpx.Request) -> httpx.Response:
        raise httpx.DecodingError("bad gzip")

    error = await call_mock(provider, boom)
    assert (error.kind, error.is_retryable) == ("unknown", False)
    async with httpx.AsyncClient() as client:
        result = await make_model(provider, client, base="ftp://judge.test").generate(REQUEST)
    assert isinstance(result, Failure)
    assert result.failure().kind == "unknown"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_unserialisable_extra_is_a_failure(anyio_backend: str, provider: str) -> None:
    """A non-JSON value in settings.extra is a bad_request failure, not an exception."""
    req = JudgeRequest(messages=REQUEST.messages,
                       settings=ModelSettings(extra={"x": object()}))
    error = await call_mock(provider, lambda _r: httpx.Response(200), req)
    assert error.kind == "bad_request"


def test_os_error_in_exception_group_gives_errno() -> None:
    """An OSError inside an exception group (trio's connect) still names the errno."""
    exc = httpx.ConnectError("all attempts failed")
    exc.__cause__ = ExceptionGroup("all", [ConnectionRefusedError(111, "refused")])
    error = error_from_exception(exc, provider="openai")
    assert error.cause is not None
    assert error.cause.code == "ECONNREFUSED"
    assert error.cause.exception_type == "ConnectionRefusedError"


def test_redact() -> None:
    """Every secret occurrence is replaced; empty secrets are ignored."""
    assert redact("a KEY b KEY", ["KEY", ""]) == "a [REDACTED] b [REDACTED]"


# --- real faults from the loopback server -------------------------------------------------


async def call_server(provider: str, server: LoopbackServer, *actions: Any,
                      model_timeout: float = 5.0, req: JudgeRequest = REQUEST) -> Any:
    server.enqueue(*actions)
    async with httpx.AsyncClient() as client:
        return await make_model(provider, client, base=server.url,
                                      timeout=model_timeout).generate(req)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_429_with_retry_after(anyio_backend: str, provider: str,
                                             server: LoopbackServer) -> None:
    """A real 429 carries Retry-After and retry-after-ms and is retryable."""
    result = await call_server(provider, server, Error(
        429, type="rate_limit_error", code="rate_limit_exceeded",
        headers={"Retry-After": "3", "retry-after-ms": "2500"}))
    error = result.failure()
    assert (error.kind, error.status, error.is_retryable) == ("rate_limit", 429, True)
    assert error.headers["retry-after"] == "3"
    assert error.headers["retry-after-ms"] == "2500"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_503(anyio_backend: str, provider: str, server: LoopbackServer) -> None:
    """A real 503 is a retryable server error."""
    error = (await call_server(provider, server, Error(503, message="down"))).failure()
    assert (error.kind, error.status, error.is_retryable) == ("server", 503, True)


async def test_loopback_529_overloaded(anyio_backend: str, server: LoopbackServer) -> None:
    """Anthropic's 529 overloaded_error is retryable."""
    result = await call_server("anthropic", server, Error(529, type="overloaded_error",
                                                          message="Overloaded"))
    error = result.failure()
    assert (error.kind, error.status, error.type, error.is_retryable) == (
        "server", 529, "overloaded_error", True)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_drop_mid_response(anyio_backend: str, provider: str,
                                          server: LoopbackServer) -> None:
    """A connection closed part-way through the body is a retryable network error."""
    error = (await call_server(provider, server, Drop(after_bytes=20))).failure()
    assert (error.kind, error.is_retryable, error.status) == ("network", True, None)
    assert error.cause is not None
    assert error.cause.code == "ECONNRESET"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_reset_before_response(anyio_backend: str, provider: str,
                                              server: LoopbackServer) -> None:
    """A reset (RST) before any response is a retryable network error with ECONNRESET."""
    error = (await call_server(provider, server, Drop())).failure()
    assert (error.kind, error.is_retryable) == ("network", True)
    assert error.cause is not None
    assert error.cause.code == "ECONNRESET"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_connection_refused(anyio_backend: str, provider: str) -> None:
    """Nothing listening is a retryable network error with ECONNREFUSED."""
    async with httpx.AsyncClient() as client:
        model = make_model(provider, client, base=f"http://127.0.0.1:{free_port()}")
        error = (await model.generate(REQUEST)).failure()
    assert (error.kind, error.is_retryable) == ("network", True)
    assert error.cause is not None
    assert error.cause.code == "ECONNREFUSED"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_slow_reply_times_out(anyio_backend: str, provider: str,
                                             server: LoopbackServer) -> None:
    """A reply slower than the timeout is a retryable timeout; the server thread is released."""
    error = (await call_server(provider, server, Slow(1.0), model_timeout=0.2)).failure()
    assert (error.kind, error.is_retryable) == ("timeout", True)
    assert error.exception_type == "ReadTimeout"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_settings_timeout(anyio_backend: str, provider: str,
                                         server: LoopbackServer) -> None:
    """ModelSettings.timeout overrides the model's timeout for one request."""
    req = JudgeRequest(messages=REQUEST.messages, settings=ModelSettings(timeout=0.2))
    result = await call_server(provider, server, Slow(1.0), model_timeout=30.0, req=req)
    assert result.failure().kind == "timeout"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_invalid_json(anyio_backend: str, provider: str,
                                     server: LoopbackServer) -> None:
    """A 200 whose body is not JSON is a clear unknown error with the status."""
    error = (await call_server(provider, server, Raw(200, b'{"choices": ['))).failure()
    assert (error.kind, error.status, error.code) == ("unknown", 200, "malformed_response")
    assert "not valid JSON" in error.message


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_schema_mismatch_is_passed_through(anyio_backend: str, provider: str,
                                                          server: LoopbackServer) -> None:
    """Valid JSON that misses the schema is a Success: validating it is the core's job."""
    req = JudgeRequest(messages=REQUEST.messages, output_schema=SCHEMA, native_schema=True)
    result = await call_server(provider, server, Reply({"scor": "high"}), req=req)
    assert isinstance(result, Success)
    assert json.loads(result.unwrap().text) == {"scor": "high"}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_recovers_after_faults(anyio_backend: str, provider: str,
                                              server: LoopbackServer) -> None:
    """The same client keeps working after a 429, a reset and a drop."""
    server.enqueue(Error(429), Drop(), Drop(after_bytes=5), Reply("fine"))
    async with httpx.AsyncClient() as client:
        model = make_model(provider, client, base=server.url)
        kinds = [(await model.generate(REQUEST)).failure().kind for _ in range(3)]
        final = await model.generate(REQUEST)
    assert kinds == ["rate_limit", "network", "network"]
    assert final.unwrap().text == "fine"
    assert len(server.requests) == 4


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_loopback_faults_drive_the_retry_processor(anyio_backend: str, provider: str,
                                                         server: LoopbackServer) -> None:
    """The errors read by StreamErrorRetryProcessor: waits from headers, no retry on auth."""
    server.enqueue(
        Error(429, headers={"retry-after": "3"}),
        Error(429, headers={"retry-after": "3", "retry-after-ms": "1500"}),
        Error(529, type="overloaded_error"),
        Drop(),
        Slow(1.0),
        Raw(200, b"{nope"),
        Error(401, type="authentication_error", code="invalid_api_key"),
        Reply("done"),
    )
    processor = StreamErrorRetryProcessor(max_retries=5, delay=0.25)
    waits: list[float | None] = []
    async with httpx.AsyncClient() as client:
        model = make_model(provider, client, base=server.url, timeout=0.2)
        while isinstance(result := await model.generate(REQUEST), Failure):
            decision = await processor.process_error(result.failure(), 0, REQUEST)
            waits.append(None if decision is None else decision.after)
    assert waits == [3.0, 1.5, 0.25, 0.25, 0.25, None, None]
    assert result.unwrap().text == "done"
