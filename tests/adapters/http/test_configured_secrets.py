"""Every configured secret is scrubbed from what a server sends back, not only the API key.

Credentials in ``default_headers`` (Azure's ``api-key``, custom auth headers) and in
``ModelSettings.extra`` (a key-named field at any depth) that a server echoes into a reply or an
error never reach a ``JudgeResponse``/``JudgeError``, so never a row, the cache, ``show``,
``--output`` or the HTML report.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import httpx
import pytest

from scorecore import JudgeConfig, ModelSettings, PromptStep, create_scorer
from scorecore.evals import run_evals
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters._http.judge import HttpJudgeBase
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.openai import OpenAIChatModel
from scorecore_adapters.testing import InMemoryScoreStore

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("allow_requests")]

AZURE_KEY = "azure0key0f00d1234567890"
CUSTOM = "custom-gateway-credential-42"
BEARER = "gw-bearer-token-abcdef123"
EXTRA_KEY = "extra-field-secret-0099"
NESTED = "nested-session-token-777"
SHAPED = "sk-proj-abcdefghij1234567890XYZ"  # a credential's shape, under no telling key
SECRETS = (AZURE_KEY, CUSTOM, BEARER, EXTRA_KEY, NESTED, SHAPED)

HEADERS = {
    "api-key": AZURE_KEY,  # Azure OpenAI's key header
    "X-Gateway-Auth": CUSTOM,  # a custom auth header
    "Proxy-Authorization": f"Bearer {BEARER}",
    "x-route": "eu-west",  # not a credential: never scrubbed
}
SETTINGS = ModelSettings(extra={
    "api_key": EXTRA_KEY,
    "metadata": {"session_token": NESTED, "team": "eu-west"},
    "user": f"bill to {SHAPED}, please",
})


def _echo(status: int) -> httpx.MockTransport:
    """A server that echoes every header value and the body it got into its reply."""

    def handler(request: httpx.Request) -> httpx.Response:
        echoed = " ".join(f"{k}={v}" for k, v in request.headers.items())
        echoed += " body=" + request.content.decode()
        if status != 200:
            return httpx.Response(status, json={"error": {"message": echoed, "code": echoed}})
        if request.url.path.endswith("/messages"):
            return httpx.Response(200, json={
                "type": "message", "model": f"m {echoed}", "stop_reason": "end_turn",
                "content": [{"type": "text", "text": echoed}],
                "usage": {"input_tokens": 1, "output_tokens": 1},
            })
        return httpx.Response(200, json={
            "model": f"m {echoed}",
            "choices": [{"message": {"content": echoed}, "finish_reason": "stop"}],
        })

    return httpx.MockTransport(handler)


def _model(provider: str, client: httpx.AsyncClient) -> HttpJudgeBase:
    if provider == "openai":
        return OpenAIChatModel("gpt-4o", base_url="http://judge.test/v1", api_key="sk-k-1234567",
                               client=client, default_headers=HEADERS)
    return AnthropicModel("claude-x", base_url="http://judge.test", api_key="sk-k-1234567",
                          client=client, default_headers=HEADERS)


def _forms(secret: str) -> set[str]:
    return {secret, json.dumps(secret)[1:-1]}


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS for form in _forms(s) if form in text]


REQUEST = JudgeRequest(messages=(JudgeMessage(role="user", content="hi"),), settings=SETTINGS,
                       step="generate_reason")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_echoed_header_and_extra_secrets_are_scrubbed_from_a_reply(
    anyio_backend: str, provider: str,
) -> None:
    """The reply's text, model id and finish reason keep no configured secret; other header
    values (a routing header) are left as they are."""
    async with httpx.AsyncClient(transport=_echo(200)) as client:
        response = (await _model(provider, client).generate(REQUEST)).unwrap()
    text = json.dumps(attrs.asdict(response))
    assert _leaks(text) == []
    assert "[REDACTED]" in response.text
    assert "eu-west" in response.text


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [400, 500])
async def test_echoed_header_and_extra_secrets_are_scrubbed_from_an_error(
    anyio_backend: str, provider: str, status: int,
) -> None:
    """An error body echoing them (message, code) keeps none either."""
    async with httpx.AsyncClient(transport=_echo(status)) as client:
        error = (await _model(provider, client).generate(REQUEST)).failure()
    assert _leaks(f"{error.message} {error.code} {error.type} {dict(error.headers)}") == []


async def test_no_configured_secret_reaches_rows_or_the_cache(anyio_backend: str) -> None:
    """End to end: the stored rows and the cached replies keep no configured secret."""
    store, cache = InMemoryScoreStore(), MemoryJudgeCache()
    async with httpx.AsyncClient(transport=_echo(200)) as client:
        judge = _model("openai", client)
        scorer = create_scorer(id="echo", description="d", judge=JudgeConfig(
            model=judge, instructions="Grade.", model_settings=SETTINGS,
        )).generate_score(lambda ctx: 1.0).generate_reason(
            PromptStep(description="r", create_prompt=lambda ctx: "why?"))
        await run_evals([{"id": "a", "input": "q", "output": "o"}], [scorer], store=store,
                        cache=cache, batch_id="b")
    rows = json.dumps([attrs.asdict(r) for r in store.rows.values()], default=str)
    assert "[REDACTED]" in rows
    assert _leaks(rows) == []
    cached = json.dumps([attrs.asdict(r) for r in cache.entries.values()], default=str)
    assert _leaks(cached) == []


def test_short_values_of_credential_headers_are_not_scrubbed_everywhere() -> None:
    """A flag under a credential-looking name (``X-Auth-Enabled: 1``) is no secret: scrubbing
    every "1" would break every score."""
    model = OpenAIChatModel("m", base_url="http://judge.test/v1",
                            default_headers={"X-Auth-Enabled": "1", "api-key": AZURE_KEY})
    secrets = model.transport.secrets()
    assert "1" not in secrets
    assert AZURE_KEY in secrets
    assert all(len(s) >= 8 for s in secrets)
    scrubbed_reply: Any = model.transport.secrets(REQUEST)
    assert EXTRA_KEY in scrubbed_reply
    assert NESTED in scrubbed_reply
