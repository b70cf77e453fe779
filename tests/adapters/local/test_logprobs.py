"""LocalModel gives token log-probabilities on the bundled model, in process and in its worker
(``real_model``; skipped without llama_cpp, except under ``CI=true``)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from scorecore.judge import JudgeMessage, JudgeRequest, ModelSettings

pytestmark = [pytest.mark.real_model, pytest.mark.anyio]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("isolation", ["process", "in_process"])
async def test_a_request_for_logprobs_gets_one_per_generated_token(
    anyio_backend: str, isolation: Any
) -> None:
    """Each generated token comes with its log-probability and its alternatives, the
    generated one among them; a request asking for none gets none."""
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    model = LocalModel(isolation=isolation)
    messages = [JudgeMessage(role="user", content="Is Paris in France? Answer yes or no.")]
    settings = ModelSettings(max_output_tokens=4)
    asked = (await model.generate(
        JudgeRequest(messages=messages, settings=settings, top_logprobs=3))).unwrap()
    plain = (await model.generate(JudgeRequest(messages=messages, settings=settings))).unwrap()
    assert plain.logprobs is None
    assert asked.text == plain.text
    assert asked.logprobs is not None
    assert "".join(t.token for t in asked.logprobs) == asked.text
    for token in asked.logprobs:
        assert token.logprob <= 0.0
        assert 3 <= len(token.top) <= 4  # the generated token is added when not in the top 3
        assert token.token in dict(token.top)
        assert math.fsum(math.exp(lp) for _, lp in token.top) <= 1.0 + 1e-6
