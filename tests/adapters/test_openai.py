"""OpenAIChatModel: request bodies and headers, reply mapping, and a real loopback server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from returns.result import Failure, Success

from scorecore import (
    JudgeConfig,
    JudgeModel,
    ModelSettings,
    PromptStep,
    ScorePromptStep,
    create_scorer,
)
from scorecore.judge import JudgeMessage, JudgeRequest, JudgeResponse
from scorecore_adapters.openai import OpenAIChatModel, native_schema, strict_schema
from tests.adapters.http.loopback import LoopbackServer, Reply

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("allow_requests")]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "note": {"type": "string"},
        "tags": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "weight": {"type": "number"}},
                "required": ["name"],
            },
        },
    },
    "required": ["score"],
}

COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-1",
    "model": "gpt-4o-2024-08-06",
    "choices": [{
        "index": 0,
        "message": {"role": "assistant", "content": '{"score": 0.5}'},
        "finish_reason": "stop",
    }],
    "usage": {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "prompt_tokens_details": {"cached_tokens": 64},
        "completion_tokens_details": {"reasoning_tokens": 7},
    },
}


def request(**kwargs: Any) -> JudgeRequest:
    kwargs.setdefault("messages", (
        JudgeMessage(role="system", content="You are strict."),
        JudgeMessage(role="user", content="Score this."),
    ))
    return JudgeRequest(**kwargs)


class Capture:
    """An httpx.MockTransport handler that records requests and answers a fixed reply."""

    def __init__(self, reply: Callable[[httpx.Request], httpx.Response] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self._reply = reply or (lambda _r: httpx.Response(200, json=COMPLETION))

    def __call__(self, req: httpx.Request) -> httpx.Response:
        self.requests.append(req)
        return self._reply(req)

    @property
    def body(self) -> Any:
        return json.loads(self.requests[-1].content)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def generate(model: OpenAIChatModel, req: JudgeRequest | None = None) -> Any:
    return await model.generate(req or request())


async def test_is_a_judge_model(anyio_backend: str) -> None:
    """The class satisfies the JudgeModel port."""
    assert isinstance(OpenAIChatModel("gpt-4o", api_key="k"), JudgeModel)


async def test_plain_request_body_and_headers(anyio_backend: str) -> None:
    """Without a schema the body has model, messages and the default output cap (1,024);
    the key goes in Authorization."""
    cap = Capture()
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="sk-secret", client=client,
                                organization="org-1", default_headers={"x-extra": "1"})
        result = await generate(model)
    sent = cap.requests[0]
    assert str(sent.url) == "https://api.openai.com/v1/chat/completions"
    assert sent.method == "POST"
    assert sent.headers["authorization"] == "Bearer sk-secret"
    assert sent.headers["openai-organization"] == "org-1"
    assert sent.headers["x-extra"] == "1"
    assert sent.headers["content-type"] == "application/json"
    assert cap.body == {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are strict."},
            {"role": "user", "content": "Score this."},
        ],
        "max_completion_tokens": 1024,
    }
    assert result == Success(JudgeResponse(
        text='{"score": 0.5}',
        usage=result.unwrap().usage,
        finish_reason="stop",
        model_id="gpt-4o-2024-08-06",
    ))


async def test_native_schema_is_strict_response_format(anyio_backend: str) -> None:
    """A native schema is sent as strict json_schema named after the step."""
    cap = Capture()
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        await generate(model, request(output_schema=SCHEMA, native_schema=True, step="analyze"))
    assert cap.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "analyze", "strict": True, "schema": strict_schema(SCHEMA)},
    }


async def test_inline_schema_sends_no_response_format(anyio_backend: str) -> None:
    """A schema already written into the messages (native_schema=False) is not sent natively."""
    cap = Capture()
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        await generate(model, request(output_schema=SCHEMA, native_schema=False))
    assert "response_format" not in cap.body


def test_strict_schema_transform() -> None:
    """Every object requires all properties, forbids extras; optional ones become nullable."""
    assert strict_schema(SCHEMA) == {
        "type": "object",
        "properties": {
            "score": {"type": "number"},
            "note": {"type": ["string", "null"]},
            "tags": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "weight": {"type": ["number", "null"]},
                    },
                    "required": ["name", "weight"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["score", "note", "tags"],
        "additionalProperties": False,
    }
    assert SCHEMA["required"] == ["score"]  # the input is untouched


def test_strict_schema_enums_and_untyped() -> None:
    """Optional enums gain null; untyped optional properties are wrapped in anyOf."""
    out = strict_schema({
        "type": "object",
        "properties": {"level": {"type": "string", "enum": ["a", "b"]}, "x": {"enum": [1, 2]}},
    })
    assert out["properties"] == {
        "level": {"type": ["string", "null"], "enum": ["a", "b", None]},
        "x": {"anyOf": [{"enum": [1, 2]}, {"type": "null"}]},
    }


async def test_strict_nulls_are_removed_from_the_reply(anyio_backend: str) -> None:
    """Nulls strict mode forces into optional properties are dropped, so the user's schema holds."""
    reply = {"score": 1, "note": None, "tags": [{"name": "a", "weight": None}]}
    completion = {**COMPLETION, "choices": [{
        "index": 0, "message": {"role": "assistant", "content": json.dumps(reply)},
        "finish_reason": "stop",
    }]}
    cap = Capture(lambda _r: httpx.Response(200, json=completion))
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        native = await generate(model, request(output_schema=SCHEMA, native_schema=True))
        inline = await generate(model, request(output_schema=SCHEMA, native_schema=False))
    assert json.loads(native.unwrap().text) == {"score": 1, "tags": [{"name": "a"}]}
    assert json.loads(inline.unwrap().text) == reply


async def test_settings_mapping_openai_host(anyio_backend: str) -> None:
    """Settings map to body fields; OpenAI gets max_completion_tokens; extra is merged last."""
    cap = Capture()
    settings = ModelSettings(temperature=0.2, top_p=0.9, max_output_tokens=50, seed=7,
                             extra={"logprobs": False, "temperature": 0.1})
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        await generate(model, request(settings=settings))
    body = cap.body
    assert body["temperature"] == 0.1
    assert body["top_p"] == 0.9
    assert body["max_completion_tokens"] == 50
    assert "max_tokens" not in body
    assert body["seed"] == 7
    assert body["logprobs"] is False


async def test_compatible_server_gets_max_tokens(anyio_backend: str) -> None:
    """Other servers get max_tokens; an explicit field in extra replaces the choice."""
    cap = Capture()
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("llama3.1", base_url="http://localhost:11434/v1/", client=client)
        await generate(model, request(settings=ModelSettings(max_output_tokens=5)))
        assert cap.body["max_tokens"] == 5
        assert str(cap.requests[-1].url) == "http://localhost:11434/v1/chat/completions"
        extra = ModelSettings(max_output_tokens=5, extra={"max_completion_tokens": 9})
        await generate(model, request(settings=extra))
        assert cap.body["max_completion_tokens"] == 9
        assert "max_tokens" not in cap.body


async def test_no_key_no_authorization_header(anyio_backend: str) -> None:
    """A local server without a key gets no Authorization header at all."""
    cap = Capture()
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("llama3.1", base_url="http://localhost:8000/v1", client=client)
        await generate(model)
    assert "authorization" not in cap.requests[0].headers


async def test_env_fallbacks(anyio_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENAI_BASE_URL and OPENAI_API_KEY are used when no argument is given."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://vllm.local:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    cap = Capture()
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", client=client)
        await generate(model)
    assert str(cap.requests[0].url) == "http://vllm.local:8000/v1/chat/completions"
    assert cap.requests[0].headers["authorization"] == "Bearer sk-from-env"
    assert "sk-from-env" not in repr(model)


async def test_usage_and_finish_mapping(anyio_backend: str) -> None:
    """Usage details and finish_reason map onto JudgeUsage and the response."""
    async with httpx.AsyncClient(transport=httpx.MockTransport(Capture())) as client:
        result = await generate(OpenAIChatModel("gpt-4o", api_key="k", client=client))
    usage = result.unwrap().usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (100, 20, 120)
    assert (usage.reasoning_tokens, usage.cached_input_tokens) == (7, 64)


async def test_settings_timeout_overrides_default(anyio_backend: str) -> None:
    """The per-request timeout comes from the settings, else from the constructor."""
    cap = Capture()
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client, timeout=3.0)
        await generate(model)
        await generate(model, request(settings=ModelSettings(timeout=0.5)))
    assert cap.requests[0].extensions["timeout"]["read"] == 3.0
    assert cap.requests[1].extensions["timeout"]["read"] == 0.5


def test_structured_output_defaults_to_auto_for_every_model() -> None:
    """Every model, known family or not, negotiates ("auto"); the old flag is an alias.

    Moved from the name-guessing default (gpt-4o* native, others prompt-only), which scored
    0 of 8 runs on a real llama.cpp server.
    """
    for name in ("gpt-4o-mini", "gpt-3.5-turbo", "llama3.1:8b", "qwen2.5", "openai/gpt-4o"):
        model = OpenAIChatModel(name, api_key="k")
        assert (model.structured_output, model.supports_structured_output) == ("auto", True)
    forced = OpenAIChatModel("qwen2.5", supports_structured_output=True)
    assert forced.structured_output == "json_schema"
    assert OpenAIChatModel("gpt-4o", supports_structured_output=False).structured_output == "prompt"
    assert not OpenAIChatModel("gpt-4o", structured_output="prompt").supports_structured_output


def test_repr_hides_key() -> None:
    """The API key never appears in the repr."""
    model = OpenAIChatModel("gpt-4o", api_key="sk-very-secret", base_url="http://x/v1")
    assert "sk-very-secret" not in repr(model)
    assert repr(model) == "OpenAIChatModel('gpt-4o', base_url='http://x/v1', api_key='***')"


async def test_refusal_is_a_failure(anyio_backend: str) -> None:
    """A strict-mode refusal (content null, refusal text) is a non-retryable failure."""
    completion = {**COMPLETION, "choices": [{
        "index": 0, "message": {"role": "assistant", "content": None, "refusal": "No."},
        "finish_reason": "stop",
    }]}
    transport = httpx.MockTransport(lambda _r: httpx.Response(200, json=completion))
    async with httpx.AsyncClient(transport=transport) as client:
        result = await generate(OpenAIChatModel("gpt-4o", api_key="k", client=client))
    assert isinstance(result, Failure)
    assert result.failure().code == "refusal"
    assert not result.failure().is_retryable


async def test_owned_client_is_closed(anyio_backend: str, server: LoopbackServer) -> None:
    """A model without an injected client creates one and closes it on exit."""
    async with OpenAIChatModel("gpt-4o", base_url=f"{server.url}/v1") as model:
        assert (await generate(model)).unwrap().text == "ok"
    await model.aclose()  # idempotent


async def test_injected_client_stays_open(anyio_backend: str, server: LoopbackServer) -> None:
    """aclose() leaves an injected client to its owner."""
    async with httpx.AsyncClient() as client:
        model = OpenAIChatModel("gpt-4o", base_url=f"{server.url}/v1", client=client)
        await model.aclose()
        assert not client.is_closed
        assert (await generate(model)).unwrap().text == "ok"


async def test_loopback_round_trip(anyio_backend: str, server: LoopbackServer) -> None:
    """Against a real HTTP server: the request arrives as sent and the reply maps back."""
    server.enqueue(Reply({"score": 0.75}, usage={"prompt_tokens": 3, "completion_tokens": 4,
                                                  "total_tokens": 7}))
    async with httpx.AsyncClient() as client:
        model = OpenAIChatModel("local-model", base_url=f"{server.url}/v1", api_key="sk-loop",
                                client=client, supports_structured_output=True)
        result = await model.generate(request(output_schema=SCHEMA, native_schema=True))
    response = result.unwrap()
    assert json.loads(response.text) == {"score": 0.75}
    assert response.usage.total_tokens == 7
    assert response.model_id == "local-model"
    seen = server.requests[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-loop"
    assert seen.body["response_format"]["json_schema"]["strict"] is True


def completion(content: str) -> httpx.Response:
    body = {**COMPLETION, "choices": [{
        "index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop",
    }]}
    return httpx.Response(200, json=body)


async def test_non_object_root_is_wrapped_and_unwrapped(anyio_backend: str) -> None:
    """Strict mode needs an object root: a number schema goes out as {"value": number} and the
    reply's value comes back unwrapped."""
    cap = Capture(lambda _r: completion('{"value": 0.75}'))
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        result = await generate(
            model, request(output_schema={"type": "number"}, native_schema=True)
        )
    assert cap.body == {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are strict."},
            {"role": "user", "content": "Score this."},
        ],
        "max_completion_tokens": 1024,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "generate_score",
                "strict": True,
                "schema": {
                    "type": "object",
                    "properties": {"value": {"type": "number"}},
                    "required": ["value"],
                    "additionalProperties": False,
                },
            },
        },
    }
    assert result.unwrap().text == "0.75"


async def test_array_root_is_wrapped_strictly_and_unwrapped(anyio_backend: str) -> None:
    """The wrapped schema is made strict inside; forced nulls are pruned after unwrapping."""
    schema = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"claim": {"type": "string"}, "note": {"type": "string"}},
            "required": ["claim"],
        },
    }
    reply = json.dumps({"value": [{"claim": "a", "note": None}, {"claim": "b", "note": "x"}]})
    cap = Capture(lambda _r: completion(reply))
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        result = await generate(model, request(output_schema=schema, native_schema=True))
    assert cap.body["response_format"]["json_schema"]["schema"] == {
        "type": "object",
        "properties": {"value": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "claim": {"type": "string"},
                    "note": {"type": ["string", "null"]},
                },
                "required": ["claim", "note"],
                "additionalProperties": False,
            },
        }},
        "required": ["value"],
        "additionalProperties": False,
    }
    assert json.loads(result.unwrap().text) == [{"claim": "a"}, {"claim": "b", "note": "x"}]


def test_wrapping_keeps_root_definitions_at_the_root() -> None:
    """$defs stay at the root so "#/$defs/..." references still resolve after wrapping."""
    schema = {
        "anyOf": [{"$ref": "#/$defs/n"}, {"type": "string"}],
        "$defs": {"n": {"type": "number"}},
    }
    assert native_schema(schema) == {
        "type": "object",
        "properties": {"value": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "string"}]}},
        "required": ["value"],
        "additionalProperties": False,
        "$defs": {"n": {"type": "number"}},
    }
    assert native_schema(SCHEMA) == strict_schema(SCHEMA)


@pytest.mark.parametrize("content", ['{"score": 1}', "0.5", "not json", "[1]"])
async def test_a_reply_that_is_not_the_wrapper_is_passed_through(
    anyio_backend: str, content: str
) -> None:
    """A reply without the wrapper is handed over verbatim for the core to report."""
    cap = Capture(lambda _r: completion(content))
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        result = await generate(
            model, request(output_schema={"type": "number"}, native_schema=True)
        )
    assert result.unwrap().text == content


async def test_inline_non_object_schema_is_not_unwrapped(anyio_backend: str) -> None:
    """Without native structured output nothing is wrapped, so a {"value": …} reply stays."""
    cap = Capture(lambda _r: completion('{"value": 1}'))
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        result = await generate(
            model, request(output_schema={"type": "number"}, native_schema=False)
        )
    assert "response_format" not in cap.body
    assert result.unwrap().text == '{"value": 1}'


async def test_scorer_validates_the_unwrapped_reply(anyio_backend: str) -> None:
    """Through the core: a native number-schema step gets the unwrapped number as its result."""
    replies = iter(['{"value": ["a", "b"]}', '{"score": 0.25}'])
    cap = Capture(lambda _r: completion(next(replies)))
    async with httpx.AsyncClient(transport=httpx.MockTransport(cap)) as client:
        model = OpenAIChatModel("gpt-4o", api_key="k", client=client)
        scorer = (
            create_scorer(
                id="claims",
                description="claims then a score",
                judge=JudgeConfig(model=model, instructions="Be strict."),
            )
            .analyze(PromptStep(
                description="claims",
                output_schema={"type": "array", "items": {"type": "string"}},
                create_prompt=lambda _c: "list the claims",
            ))
            .generate_score(ScorePromptStep(description="score", create_prompt=lambda _c: "rate"))
        )
        outcome = (await scorer.run(input="q", output="a")).unwrap()
    assert outcome.analyze_step_result == ["a", "b"]
    assert outcome.score == 0.25
    first = json.loads(cap.requests[0].content)
    assert first["response_format"]["json_schema"]["schema"]["required"] == ["value"]
