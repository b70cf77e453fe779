"""OpenAIChatModel asks for token log-probabilities only when a request does, and reads them."""

from __future__ import annotations

import copy
import math
from typing import Any

import httpx
import pytest

from scorecore.judge import TokenLogprob
from scorecore_adapters.openai import OpenAIChatModel
from tests.adapters.test_openai import COMPLETION, Capture, _no_env, request

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("allow_requests")]
__all__ = ["_no_env"]  # the autouse fixture, used by being imported

WITH_LOGPROBS: dict[str, Any] = copy.deepcopy(COMPLETION)
WITH_LOGPROBS["choices"][0]["logprobs"] = {"content": [
    {"token": '{"score": ', "logprob": 0.0, "bytes": None, "top_logprobs": []},
    {"token": "4", "logprob": -0.25, "bytes": [52], "top_logprobs": [
        {"token": "4", "logprob": -0.25, "bytes": [52]},
        {"token": "3", "logprob": -1.75, "bytes": [51]},
    ]},
    {"token": "}", "logprob": -9999.0, "bytes": None, "top_logprobs": []},
], "refusal": None}


async def _reply(body: dict[str, Any], top_logprobs: int | None) -> tuple[Any, Any]:
    cap = Capture(lambda _r: httpx.Response(200, json=body))
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        result = await model.generate(request(top_logprobs=top_logprobs))
    return cap.body, result.unwrap()


async def test_a_request_asking_for_logprobs_sends_and_reads_them(anyio_backend: str) -> None:
    """logprobs and top_logprobs go in the body; choices[0].logprobs.content comes back."""
    body, response = await _reply(WITH_LOGPROBS, 5)
    assert (body["logprobs"], body["top_logprobs"]) == (True, 5)
    assert response.logprobs == (
        TokenLogprob(token='{"score": ', logprob=0.0),
        TokenLogprob(token="4", logprob=-0.25, top=[("4", -0.25), ("3", -1.75)]),
        TokenLogprob(token="}", logprob=-9999.0),
    )
    assert math.isclose(math.exp(response.logprobs[1].logprob), 0.7788, abs_tol=1e-4)


async def test_a_request_asking_for_none_sends_nothing_and_reads_none(anyio_backend: str) -> None:
    """Without the setting the body is as before and a reply's logprobs are not read."""
    body, response = await _reply(WITH_LOGPROBS, None)
    assert "logprobs" not in body
    assert "top_logprobs" not in body
    assert response.logprobs is None


@pytest.mark.parametrize("logprobs", [None, {"content": None}, {"content": [{"token": 4}]}])
async def test_a_reply_without_usable_logprobs_is_still_a_reply(
    anyio_backend: str, logprobs: Any
) -> None:
    """A provider that gives none (or a malformed list) answers with logprobs None."""
    body = copy.deepcopy(COMPLETION)
    body["choices"][0]["logprobs"] = logprobs
    _, response = await _reply(body, 3)
    assert response.text == '{"score": 0.5}'
    assert response.logprobs is None
