"""AnthropicModel: request bodies and headers, reply mapping, and a real loopback server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from scorecore import JudgeModel, ModelSettings
from scorecore.judge import JudgeMessage, JudgeRequest, JudgeResponse, JudgeUsage
from scorecore_adapters.anthropic import RESPOND_TOOL, AnthropicModel
from tests.adapters.http.loopback import LoopbackServer, Reply

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("allow_requests")]

SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"],
}

MESSAGE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "Fine."}],
    "stop_reason": "end_turn",
    "usage": {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    },
}


def request(**kwargs: Any) -> JudgeRequest:
    kwargs.setdefault("messages", (
        JudgeMessage(role="system", content="Be strict."),
        JudgeMessage(role="system", content="Answer in JSON."),
        JudgeMessage(role="user", content="Score this."),
    ))
    return JudgeRequest(**kwargs)


class Capture:
    """An httpx.MockTransport handler that records requests and answers a fixed reply."""

    def __init__(self, reply: dict[str, Any] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self._reply = reply or MESSAGE

    def __call__(self, req: httpx.Request) -> httpx.Response:
        self.requests.append(req)
        return httpx.Response(200, json=self._reply)

    @property
    def body(self) -> Any:
        return json.loads(self.requests[-1].content)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def run(cap: Capture, req: JudgeRequest | None = None,
              make: Callable[[httpx.AsyncClient], AnthropicModel] | None = None) -> Any:
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = (make or (lambda c: AnthropicModel("claude-x", api_key="sk-ant", client=c)))(
            client)
        return await model.generate(req or request())


async def test_is_a_judge_model(anyio_backend: str) -> None:
    """The class satisfies the JudgeModel port."""
    assert isinstance(AnthropicModel("claude-x", api_key="k"), JudgeModel)


async def test_plain_request_body_and_headers(anyio_backend: str) -> None:
    """System messages join into ``system``; the key and version go in their headers."""
    cap = Capture()
    result = await run(cap)
    sent = cap.requests[0]
    assert str(sent.url) == "https://api.anthropic.com/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert cap.body == {
        "model": "claude-x",
        "max_tokens": 1024,
        "system": "Be strict.\n\nAnswer in JSON.",
        "messages": [{"role": "user", "content": "Score this."}],
    }
    assert result.unwrap() == JudgeResponse(
        text="Fine.",
        usage=JudgeUsage(input_tokens=130, output_tokens=5, total_tokens=135,
                         cached_input_tokens=100),
        finish_reason="stop",
        model_id="claude-sonnet-4-5-20250929",
    )


async def test_several_user_messages_become_blocks(anyio_backend: str) -> None:
    """Consecutive user messages form one user turn of text blocks; no system, no field."""
    cap = Capture()
    await run(cap, request(messages=(JudgeMessage(role="user", content="a"),
                                     JudgeMessage(role="user", content="b"))))
    assert "system" not in cap.body
    assert cap.body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]


async def test_native_schema_forces_the_respond_tool(anyio_backend: str) -> None:
    """A native schema becomes a forced tool; its input is returned as JSON text."""
    reply = {**MESSAGE, "stop_reason": "tool_use", "content": [
        {"type": "text", "text": "Let me answer."},
        {"type": "tool_use", "id": "toolu_1", "name": RESPOND_TOOL, "input": {"score": 0.9}},
    ]}
    cap = Capture(reply)
    result = await run(cap, request(output_schema=SCHEMA, native_schema=True))
    assert cap.body["tools"] == [{
        "name": "respond",
        "description": "Give your answer by calling this tool with it as the input.",
        "input_schema": SCHEMA,
    }]
    assert cap.body["tool_choice"] == {"type": "tool", "name": "respond"}
    response = result.unwrap()
    assert json.loads(response.text) == {"score": 0.9}
    assert response.finish_reason == "stop"
    assert response.structured_output == "tool"  # recorded on the judge execution


async def test_non_object_schema_is_wrapped(anyio_backend: str) -> None:
    """A tool input must be an object: other schemas are wrapped and unwrapped again."""
    schema = {"type": "array", "items": {"type": "string"}}
    reply = {**MESSAGE, "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "t", "name": RESPOND_TOOL, "input": {"value": ["a", "b"]}},
    ]}
    cap = Capture(reply)
    result = await run(cap, request(output_schema=schema, native_schema=True))
    assert cap.body["tools"][0]["input_schema"] == {
        "type": "object", "properties": {"value": schema}, "required": ["value"],
    }
    assert json.loads(result.unwrap().text) == ["a", "b"]


async def test_inline_schema_sends_no_tools(anyio_backend: str) -> None:
    """With native_schema=False the schema is in the messages; no tool is forced."""
    cap = Capture()
    await run(cap, request(output_schema=SCHEMA, native_schema=False))
    assert "tools" not in cap.body
    assert "tool_choice" not in cap.body


async def test_missing_tool_call_falls_back_to_text(anyio_backend: str) -> None:
    """A reply cut off before the tool call hands the text to the core, finish ``length``."""
    reply = {**MESSAGE, "stop_reason": "max_tokens",
             "content": [{"type": "text", "text": "I think"}]}
    result = await run(Capture(reply), request(output_schema=SCHEMA, native_schema=True))
    assert (result.unwrap().text, result.unwrap().finish_reason) == ("I think", "length")


async def test_settings_mapping(anyio_backend: str) -> None:
    """Temperature, top_p and max tokens map; seed is ignored; extra is merged last."""
    cap = Capture()
    settings = ModelSettings(temperature=0.0, top_p=0.5, max_output_tokens=64, seed=3,
                             extra={"metadata": {"user_id": "u"}})
    await run(cap, request(settings=settings))
    body = cap.body
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.0, 0.5, 64)
    assert "seed" not in body
    assert body["metadata"] == {"user_id": "u"}


async def test_env_fallbacks_and_headers(anyio_backend: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL are used; version and extra headers are sent."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://proxy.local/")
    cap = Capture()
    model_ref: list[AnthropicModel] = []

    def make(client: httpx.AsyncClient) -> AnthropicModel:
        model = AnthropicModel("claude-x", client=client, anthropic_version="2024-01-01",
                               default_headers={"anthropic-beta": "x"}, max_tokens=10)
        model_ref.append(model)
        return model

    await run(cap, make=make)
    sent = cap.requests[0]
    assert str(sent.url) == "http://proxy.local/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-env"
    assert sent.headers["anthropic-version"] == "2024-01-01"
    assert sent.headers["anthropic-beta"] == "x"
    assert cap.body["max_tokens"] == 10
    assert "sk-ant-env" not in repr(model_ref[0])


async def test_no_key_sends_no_key_header(anyio_backend: str) -> None:
    """Without any key (a proxy adds it) no x-api-key header is sent."""
    cap = Capture()
    await run(cap, make=lambda c: AnthropicModel("claude-x", client=c))
    assert "x-api-key" not in cap.requests[0].headers


def test_repr_hides_key() -> None:
    """The API key never appears in the repr."""
    model = AnthropicModel("claude-x", api_key="sk-ant-very-secret", base_url="http://x")
    assert "very-secret" not in repr(model)
    assert repr(model) == "AnthropicModel('claude-x', base_url='http://x', api_key='***')"


def test_rejects_bad_max_tokens() -> None:
    """max_tokens must be positive: misuse raises at construction."""
    with pytest.raises(ValueError, match="max_tokens"):
        AnthropicModel("claude-x", max_tokens=0)


async def test_loopback_round_trip(anyio_backend: str, server: LoopbackServer) -> None:
    """Against a real HTTP server, with an owned client closed by ``async with``."""
    server.enqueue(Reply({"score": 0.25}))
    async with AnthropicModel("claude-x", base_url=server.url, api_key="sk-loop") as model:
        result = await model.generate(request(output_schema=SCHEMA, native_schema=True))
    assert json.loads(result.unwrap().text) == {"score": 0.25}
    assert result.unwrap().usage == JudgeUsage(input_tokens=10, output_tokens=2,
                                               total_tokens=12)
    seen = server.requests[0]
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == "sk-loop"
    assert seen.body["tool_choice"] == {"type": "tool", "name": "respond"}


async def test_optional_nulls_in_tool_input_are_removed(anyio_backend: str) -> None:
    """A null the model puts into an optional, non-nullable property is dropped."""
    schema = {**SCHEMA, "properties": {**SCHEMA["properties"], "note": {"type": "string"}}}
    reply = {**MESSAGE, "stop_reason": "tool_use", "content": [
        {"type": "tool_use", "id": "t", "name": RESPOND_TOOL,
         "input": {"score": 1, "note": None}},
    ]}
    result = await run(Capture(reply), request(output_schema=schema, native_schema=True))
    assert json.loads(result.unwrap().text) == {"score": 1}
