"""A cache never answers for another endpoint: the key holds the judge's cache identity."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from returns.result import Success

from scorecore.evals import run_evals
from scorecore.judge import JudgeMessage, JudgeRequest, JudgeResponse
from scorecore.judge.economics import cache_key
from scorecore_adapters.anthropic import AnthropicModel
from scorecore_adapters.cache import MemoryJudgeCache
from scorecore_adapters.openai import OpenAIChatModel
from tests.judged_scorers import output_graded

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("allow_requests")]


class _Endpoints:
    """Every host (and every x-route header) answers its own score; requests are counted."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores
        self.asked: dict[str, int] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        name = request.headers.get("x-route") or request.url.host
        self.asked[name] = self.asked.get(name, 0) + 1
        text = json.dumps({"score": self.scores[name]})
        if request.url.path.endswith("/v1/messages"):
            return httpx.Response(200, json={
                "type": "message", "model": "m", "stop_reason": "end_turn",
                "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": 5, "output_tokens": 5},
            })
        return httpx.Response(200, json={
            "model": "m", "choices": [{"message": {"role": "assistant", "content": text},
                                       "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5},
        })


ITEMS = [{"id": "q", "input": "q", "output": "a"}]


async def test_two_base_urls_never_share_cache_entries(anyio_backend: str) -> None:
    """Endpoint B is asked (and answers 0.9) although A answered the same request (0.1)."""
    server = _Endpoints({"a.local": 0.1, "b.local": 0.9})
    cache = MemoryJudgeCache()
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        a = OpenAIChatModel("llama", base_url="http://a.local/v1", client=client)
        b = OpenAIChatModel("llama", base_url="http://b.local/v1", client=client)
        first = await run_evals(ITEMS, [output_graded(a)], cache=cache)
        second = await run_evals(ITEMS, [output_graded(b)], cache=cache)
        again = await run_evals(ITEMS, [output_graded(b)], cache=cache)
    assert (first.summary("s").mean, second.summary("s").mean) == (0.1, 0.9)
    assert server.asked == {"a.local": 1, "b.local": 1}
    assert again.summary("s").mean == 0.9  # B's own entry is read back


@pytest.mark.parametrize("make", [
    lambda client, route: OpenAIChatModel("m", base_url="http://h.local/v1", client=client,
                                          default_headers={"x-route": route}),
    lambda client, route: AnthropicModel("m", base_url="http://h.local", client=client,
                                         default_headers={"x-route": route}),
], ids=["openai", "anthropic"])
async def test_headers_that_change_the_reply_take_part_in_the_key(
    anyio_backend: str, make: Any,
) -> None:
    """Two routing headers on one URL are two endpoints."""
    server = _Endpoints({"a": 0.1, "b": 0.9})
    cache = MemoryJudgeCache()
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        first = await run_evals(ITEMS, [output_graded(make(client, "a"))], cache=cache)
        second = await run_evals(ITEMS, [output_graded(make(client, "b"))], cache=cache)
    assert (first.summary("s").mean, second.summary("s").mean) == (0.1, 0.9)
    assert server.asked == {"a": 1, "b": 1}


async def test_credentials_never_take_part_in_the_identity(anyio_backend: str) -> None:
    """A rotated key (or api-key header) reads the same entries; no secret is in the identity."""
    server = _Endpoints({"h.local": 0.5})
    cache = MemoryJudgeCache()
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as client:
        models = [
            OpenAIChatModel("m", base_url="http://h.local/v1", client=client, api_key=key,
                            default_headers={"api-key": f"azure-{key}",
                                             "X-Custom-Token": f"tok-{key}"})
            for key in ("sk-old-secret-0001", "sk-new-secret-0002")
        ]
        for model in models:
            await run_evals(ITEMS, [output_graded(model)], cache=cache)
    assert server.asked == {"h.local": 1}
    for model in models:
        identity = model.cache_identity
        assert identity.startswith("http://h.local/v1")
        assert "secret" not in identity
        assert "azure" not in identity
        assert "tok-" not in identity


def test_the_key_holds_the_identity_and_stays_the_same_without_one() -> None:
    """cache_key(..., identity=...) differs per identity; None is the key as it was."""
    request = JudgeRequest(messages=[JudgeMessage(role="user", content="hi")])
    plain = cache_key(request, provider="p", model_id="m")
    assert cache_key(request, provider="p", model_id="m", identity=None) == plain
    a = cache_key(request, provider="p", model_id="m", identity="http://a")
    b = cache_key(request, provider="p", model_id="m", identity="http://b")
    assert len({plain, a, b}) == 3


class _Unsure:
    """A judge whose identity cannot be read: it must not share (or fill) the cache."""

    model_id = "m"
    provider = "test"
    supports_structured_output = False

    def __init__(self, identity: Any) -> None:
        self._identity = identity
        self.calls = 0

    @property
    def cache_identity(self) -> Any:
        if isinstance(self._identity, Exception):
            raise self._identity
        return self._identity

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.calls += 1
        return Success(JudgeResponse(text='{"score": 1}'))


@pytest.mark.parametrize("identity", [RuntimeError("no"), 42, b"bytes"])
async def test_an_unreadable_identity_bypasses_the_cache(
    anyio_backend: str, identity: Any,
) -> None:
    """A raising or non-str cache_identity: every call asked, nothing stored."""
    judge = _Unsure(identity)
    cache = MemoryJudgeCache()
    for _ in range(2):
        report = await run_evals(ITEMS, [output_graded(judge)], cache=cache)
        assert report.summary("s").scored == 1
    assert judge.calls == 2
    assert len(cache) == 0
