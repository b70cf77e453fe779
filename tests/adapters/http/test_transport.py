"""``HttpJudgeBase.transport``: a judge's route for exchanges besides ``generate`` sends what
``generate`` sends (headers, Basic auth from ``base_url``) and fails the way it fails."""

from __future__ import annotations

import base64

import httpx
import pytest
from returns.result import Failure, Success

from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import OpenAIChatModel

KEY = "sk-transport-key-0123456789"
PASSWORD = "pw-transport-0123456789"


@pytest.mark.anyio
async def test_send_uses_the_judges_headers_and_base_url_credentials(anyio_backend: str) -> None:
    """A JSON body goes out as JSON, with the judge's credentials: the Basic auth taken out of
    ``base_url`` wins over the API key, as in ``generate``."""
    del anyio_backend
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"id": "b1"})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    model = OpenAIChatModel("m", base_url=f"https://u:{PASSWORD}@judge.test/v1", api_key=KEY,
                            client=client)
    transport = model.transport
    sent = await transport.send("POST", f"{model.base_url}/batches", json_body={"a": "é"})
    assert isinstance(sent, Success)
    assert transport.json_object(sent.unwrap()) == Success({"id": "b1"})
    (request,) = seen
    assert request.headers["content-type"] == "application/json"
    assert request.content == '{"a": "é"}'.encode()
    basic = base64.b64encode(f"u:{PASSWORD}".encode()).decode()
    assert request.headers["authorization"] == f"Basic {basic}"
    assert PASSWORD not in repr(transport)
    assert KEY not in repr(transport)


@pytest.mark.anyio
async def test_failures_are_the_judges_errors_scrubbed(anyio_backend: str) -> None:
    """An error status maps as ``generate`` maps it, with the key scrubbed from the message;
    a 2xx body that is not a JSON object is the malformed-reply error."""
    del anyio_backend

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/bad"):
            return httpx.Response(429, json={"error": {"type": "rate_limit_error",
                                                       "message": f"slow down {KEY}"}})
        return httpx.Response(200, json=["not", "an", "object"])

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    model = AnthropicModel("claude-test", base_url="https://judge.test", api_key=KEY,
                           client=client)
    transport = model.transport
    refused = await transport.send("GET", "https://judge.test/bad")
    assert isinstance(refused, Failure)
    error = refused.failure()
    assert error.kind == "rate_limit"
    assert error.is_retryable
    assert KEY not in error.message
    assert "[REDACTED]" in error.message
    listed = await transport.send("GET", "https://judge.test/list")
    malformed = transport.json_object(listed.unwrap())
    assert isinstance(malformed, Failure)
    assert malformed.failure().code == "malformed_response"
    assert KEY in transport.secrets()
