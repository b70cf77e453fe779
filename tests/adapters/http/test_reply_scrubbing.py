"""Secrets a server echoes into a successful reply never reach the JudgeResponse."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.judge import JudgeMessage, JudgeRequest, JudgeResponse
from scorecore_adapters import allow_model_requests
from scorecore_adapters._http.judge import HttpJudgeBase
from scorecore_adapters._http.scrub import redact
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import OpenAIChatModel
from tests.strategies import api_keys, url_passwords

SCHEMA = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["claims"],
}
PLAIN = JudgeRequest(messages=(JudgeMessage(role="user", content="hi"),), step="generate_reason")
STRUCTURED = JudgeRequest(
    messages=(JudgeMessage(role="user", content="hi"),),
    output_schema=SCHEMA,
    native_schema=True,
    step="analyze",
)
BACKENDS = ["asyncio", "trio"]
PROVIDERS = ["openai", "anthropic"]


def forms(secret: str) -> set[str]:
    """The secret as written raw and as it appears inside a JSON string."""
    return {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}


def echoing(echo: str) -> httpx.MockTransport:
    """A provider answering 200 with ``echo`` in the text, the tool input, model and stop."""

    def handler(request: httpx.Request) -> httpx.Response:
        sent: Any = json.loads(request.content)
        if request.url.path.endswith("/messages"):
            block: dict[str, Any] = (
                {"type": "tool_use", "id": "t", "name": "respond", "input": {"claims": [echo]}}
                if "tool_choice" in sent
                else {"type": "text", "text": echo}
            )
            return httpx.Response(200, json={
                "type": "message", "model": f"claude {echo}", "content": [block],
                "stop_reason": echo, "usage": {"input_tokens": 1, "output_tokens": 1},
            })
        content = json.dumps({"claims": [echo]}) if "response_format" in sent else echo
        return httpx.Response(200, json={
            "model": f"gpt {echo}",
            "choices": [{"message": {"content": content}, "finish_reason": echo}],
        })

    return httpx.MockTransport(handler)


def model(provider: str, client: httpx.AsyncClient, *, api_key: str, base: str) -> HttpJudgeBase:
    if provider == "openai":
        return OpenAIChatModel(
            "gpt-4o", base_url=base + "/v1", api_key=api_key, client=client,
            supports_structured_output=True,
        )
    return AnthropicModel("claude-x", base_url=base, api_key=api_key, client=client)


def reply(
    provider: str, backend: str, request: JudgeRequest, echo: str, *, api_key: str,
    base: str = "http://judge.test",
) -> JudgeResponse:
    async def ask() -> JudgeResponse:
        async with httpx.AsyncClient(transport=echoing(echo)) as client:
            judge = model(provider, client, api_key=api_key, base=base)
            with allow_model_requests():
                return (await judge.generate(request)).unwrap()

    return anyio.run(ask, backend=backend)


def leaked(response: JudgeResponse, secret: str) -> list[str]:
    fields = (response.text, response.model_id or "", response.finish_reason or "")
    return [form for form in forms(secret) for field in fields if form in field]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_echoed_key_is_redacted_in_a_plain_reply(provider: str, backend: str) -> None:
    """The key in a 200 reply's text (and model, stop reason) becomes ``[REDACTED]``."""
    response = reply(provider, backend, PLAIN, "your key is sk-live-123!", api_key="sk-live-123")
    assert response.text == "your key is [REDACTED]!"
    assert leaked(response, "sk-live-123") == []


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("provider", PROVIDERS)
@given(key=api_keys.filter(lambda k: len(k) >= 8), before=st.text(max_size=20),
       after=st.text(max_size=20))
def test_no_form_of_the_api_key_survives_in_a_reply(
    provider: str, backend: str, key: str, before: str, after: str
) -> None:
    """Whatever the key (of 8 characters or more: shorter ones are placeholders, below) and
    the text around it, neither a plain nor a structured reply keeps the key, raw or
    JSON-escaped."""
    for request in (PLAIN, STRUCTURED):
        response = reply(provider, backend, request, f"{before}{key}{after}{key}", api_key=key)
        assert leaked(response, key) == []


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("key", ["x", "ollama", "EMPTY"])
def test_a_placeholder_key_leaves_the_reply_intact(provider: str, backend: str, key: str) -> None:
    """A local server's placeholder key ("x", Ollama's "ollama", vLLM's "EMPTY") is no
    credential: scrubbing it corrupted replies ("explanation" came back as
    "e[REDACTED]planation" against llama.cpp with api_key="x"), so a reply keeps it."""
    echo = "an explanation: ollama EMPTY x"
    for request in (PLAIN, STRUCTURED):
        response = reply(provider, backend, request, echo, api_key=key)
        assert echo in response.text
        assert "[REDACTED]" not in response.text


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("provider", PROVIDERS)
@given(password=url_passwords, before=st.text(max_size=20))
def test_no_form_of_a_url_password_survives_in_a_reply(
    provider: str, backend: str, password: str, before: str
) -> None:
    """A password from ``https://user:password@host`` echoed in a reply is scrubbed too."""
    base = f"http://user:{quote(password, safe='')}@judge.test"
    for request in (PLAIN, STRUCTURED):
        response = reply(provider, backend, request, f"{before}{password}", api_key="k", base=base)
        assert leaked(response, password) == []


# Characters of the marker itself, so secrets that overlap it come up often.
MARKERISH = st.text("[REDACTED]ab", max_size=30)


@given(
    text=st.text(max_size=60) | MARKERISH,
    secrets=st.lists(st.text(min_size=1, max_size=12) | MARKERISH.filter(bool), max_size=4),
)
def test_redact_leaves_no_secret_and_changes_nothing_else(text: str, secrets: list[str]) -> None:
    """No secret is left, even one overlapping the marker; text holding none is unchanged."""
    out = redact(text, secrets)
    assert not any(secret in out for secret in secrets)
    if not any(secret in text for secret in secrets):
        assert out == text


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("key: sk-1", ["sk-1"], "key: [REDACTED]"),
        ("say ACT", ["ACT"], "say [REDED]"),  # the secret is part of the marker
        ("aabb", ["ab"], "a[REDACTED]b"),  # the marker keeps the halves from re-forming it
    ],
)
def test_redact_examples(text: str, secrets: list[str], expected: str) -> None:
    """The marker replaces a secret; a secret the marker itself contains is deleted."""
    assert redact(text, secrets) == expected
