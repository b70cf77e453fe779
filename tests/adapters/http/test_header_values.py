"""A header value httpx cannot send is a Failure naming the problem, never an exception."""

from __future__ import annotations

import anyio
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters import allow_model_requests
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.openai import OpenAIChatModel

REQUEST = JudgeRequest(messages=(JudgeMessage(role="user", content="hi"),))

non_ascii_keys = st.tuples(
    st.text(max_size=10), st.characters(min_codepoint=0x80, exclude_categories=["Cs"]),
    st.text(max_size=10),
).map("".join)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@given(key=non_ascii_keys)
def test_a_non_ascii_api_key_is_a_bad_request_failure(
    provider: str, backend: str, key: str
) -> None:
    """Nothing is sent; the error says which values must be ASCII and does not show the key."""
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    async def ask() -> None:
        transport = httpx.MockTransport(record)
        async with httpx.AsyncClient(transport=transport) as client:
            model = (
                OpenAIChatModel("gpt-4o", base_url="http://x/v1", api_key=key, client=client)
                if provider == "openai"
                else AnthropicModel("claude-x", base_url="http://x", api_key=key, client=client)
            )
            with allow_model_requests():
                error = (await model.generate(REQUEST)).failure()
        assert error.kind == "bad_request"
        assert not error.is_retryable
        assert "not ASCII" in error.message
        assert key not in error.message

    anyio.run(ask, backend=backend)
    assert sent == []
