"""A model that owns its HTTP client keeps working across event loops."""

from __future__ import annotations

import anyio

from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters import allow_model_requests
from scorecore_adapters.openai import OpenAIChatModel
from tests.adapters.http.loopback import Reply, serve


def test_owned_client_is_renewed_for_a_new_event_loop() -> None:
    """The same model answers under two successive anyio.run calls (asyncio, then trio)."""
    request = JudgeRequest(messages=[JudgeMessage(role="user", content="hi")])
    with serve() as server, allow_model_requests():
        server.enqueue(Reply("first"), Reply("second"))
        model = OpenAIChatModel("gpt-4o", base_url=server.url + "/v1", api_key="sk-test")

        async def ask() -> str:
            text = (await model.generate(request)).unwrap().text
            assert isinstance(text, str)
            return text

        async def ask_and_close() -> str:
            try:
                return await ask()
            finally:
                await model.aclose()

        assert anyio.run(ask) == "first"
        assert anyio.run(ask_and_close, backend="trio") == "second"
        assert len(server.requests) == 2
