"""OpenAIChatModel's structured-output negotiation against servers that speak different dialects.

Each fake server below accepts some ``response_format`` types and refuses the others the way a
real server does (OpenAI's 400, FastAPI's 422, llama-cpp-python's 500); "auto" must settle on
the first mode the server takes, remember it, record it on the judge execution, and never step
down for a refusal that is about something else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import attrs
import httpx
import pytest
from returns.result import Failure, Success

from scorecore import (
    JudgeConfig,
    ModelSettings,
    PromptStep,
    ScorePromptStep,
    ScorerDefinitionError,
    create_scorer,
    to_mastra_json,
)
from scorecore.judge import JudgeMessage, JudgeRequest, schema_in_prompt
from scorecore.judge.economics import DEFAULT_OUTPUT_CAP
from scorecore_adapters._guard import allow_model_requests
from scorecore_adapters.openai import OpenAIChatModel, refuses_response_format
from scorecore_adapters.testing import judge_error
from tests.adapters.http.loopback import Error, Reply, serve

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["verdict"],
}
SCHEMA_TEXT = json.dumps(SCHEMA, ensure_ascii=False, sort_keys=True)
BASE = "http://judge.local/v1"


def _completion(content: str) -> httpx.Response:
    return httpx.Response(200, json={
        "model": "small",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    })


def openai_400(kind: str) -> httpx.Response:
    """OpenAI's (and vLLM's) shape for a response_format a model does not take."""
    return httpx.Response(400, json={"error": {
        "message": f"Invalid parameter: 'response_format' of type '{kind}' is not supported.",
        "type": "invalid_request_error", "param": "response_format", "code": None,
    }})


def fastapi_422(kind: str) -> httpx.Response:
    """A FastAPI server validating the body (the loc names the field)."""
    return httpx.Response(422, json={"detail": [{
        "type": "literal_error", "loc": ["body", "response_format", "type"],
        "msg": "Input should be 'text' or 'json_object'", "input": kind,
    }]})


def llama_cpp_500(kind: str) -> httpx.Response:
    """llama-cpp-python wraps every request it cannot validate as a 500."""
    return httpx.Response(500, json={"error": {
        "message": (
            "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
            f"'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': '{kind}'}}"
        ),
        "type": "internal_server_error", "param": None, "code": None,
    }})


class Server:
    """An httpx.MockTransport handler: a Chat Completions server taking only some modes.

    A request's mode is its ``response_format.type`` (``"prompt"`` without one). A taken mode
    answers ``reply`` (or, given a list, its next item); any other gets ``refuse(mode)``.
    """

    def __init__(
        self,
        takes: set[str],
        *,
        refuse: Callable[[str], httpx.Response] = openai_400,
        reply: str | list[str] = '{"verdict": "yes"}',
    ) -> None:
        self.takes = takes
        self.refuse = refuse
        self.replies = iter(reply) if isinstance(reply, list) else None
        self.reply = reply if isinstance(reply, str) else ""
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        mode = mode_of(body)
        if mode not in self.takes:
            return self.refuse(mode)
        return _completion(self.reply if self.replies is None else next(self.replies))

    @property
    def modes(self) -> list[str]:
        return [mode_of(b) for b in self.bodies]


def mode_of(body: dict[str, Any]) -> str:
    rf = body.get("response_format")
    return str(rf["type"]) if isinstance(rf, dict) else "prompt"


def schema_mentions(body: dict[str, Any]) -> int:
    """How many times the schema is written into the messages."""
    return sum(m["content"].count(SCHEMA_TEXT) for m in body["messages"])


def native_request(**settings: Any) -> JudgeRequest:
    return JudgeRequest(
        messages=(JudgeMessage(role="system", content="You judge."),
                  JudgeMessage(role="user", content="Is the answer right?")),
        output_schema=SCHEMA,
        native_schema=True,
        settings=ModelSettings(**settings),
        step="analyze",
    )


@pytest.fixture(autouse=True)
def _allowed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with allow_model_requests():
        yield


def model_for(server: Server, **kwargs: Any) -> tuple[OpenAIChatModel, httpx.AsyncClient]:
    client = httpx.AsyncClient(transport=httpx.MockTransport(server))
    return OpenAIChatModel("small", base_url=BASE, client=client, **kwargs), client


async def test_a_server_that_takes_json_schema_keeps_it(anyio_backend: str) -> None:
    """OpenAI-like: strict json_schema works first time; one request, reported and remembered."""
    server = Server({"json_schema"})
    model, client = model_for(server)
    async with client:
        first = (await model.generate(native_request())).unwrap()
        await model.generate(native_request())
    assert server.modes == ["json_schema", "json_schema"]
    assert first.structured_output == "json_schema"
    assert model.negotiated_structured_output == "json_schema"
    assert schema_mentions(server.bodies[0]) == 0  # the schema rides in response_format


@pytest.mark.parametrize("refuse", [openai_400, fastapi_422, llama_cpp_500])
async def test_a_server_that_takes_json_object_settles_on_it(
    anyio_backend: str, refuse: Callable[[str], httpx.Response]
) -> None:
    """llama.cpp-like: json_schema refused, the same request retried as json_object with the
    schema; the next call goes straight to json_object."""
    server = Server({"json_object"}, refuse=refuse)
    model, client = model_for(server)
    async with client:
        first = (await model.generate(native_request())).unwrap()
        second = (await model.generate(native_request())).unwrap()
    assert server.modes == ["json_schema", "json_object", "json_object"]
    assert server.bodies[1]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert (first.structured_output, second.structured_output) == ("json_object", "json_object")
    assert json.loads(first.text) == {"verdict": "yes"}
    assert model.negotiated_structured_output == "json_object"
    # The grammar holds the reply: the schema is not also written into the prompt (a small
    # model rambled inside a string with it there; docs/local-judges.md).
    assert [schema_mentions(b) for b in server.bodies] == [0, 0, 0]


async def test_a_server_that_takes_neither_ends_in_the_prompt(anyio_backend: str) -> None:
    """Both formats refused: the schema goes into the prompt, once, with no response_format."""
    server = Server({"prompt"}, refuse=llama_cpp_500)
    model, client = model_for(server)
    async with client:
        first = (await model.generate(native_request())).unwrap()
        await model.generate(native_request())
    assert server.modes == ["json_schema", "json_object", "prompt", "prompt"]
    assert first.structured_output == "prompt"
    assert model.negotiated_structured_output == "prompt"
    assert [schema_mentions(b) for b in server.bodies] == [0, 0, 1, 1]
    assert server.bodies[2]["messages"][-1]["content"].startswith("Is the answer right?")


def _error(status: int, message: str, **extra: Any) -> Callable[[str], httpx.Response]:
    return lambda _mode: httpx.Response(status, json={"error": {"message": message, **extra}})


@pytest.mark.parametrize(("refuse", "kind"), [
    (_error(400, "Invalid 'messages[1].content': string too long."), "bad_request"),
    (_error(401, "Incorrect API key provided (response_format was fine)",
            code="invalid_api_key"), "auth"),
    (_error(400, "This model's maximum context length is 2048 tokens (response_format).",
            code="context_length_exceeded", param="messages"), "context_length"),
    (_error(429, "Rate limit reached; response_format retried later", code="rate_limit_exceeded"),
     "rate_limit"),
    (_error(500, "CUDA out of memory"), "server"),
    (_error(404, "The model `small` does not exist"), "bad_request"),
])
async def test_a_refusal_for_another_reason_is_not_a_format_refusal(
    anyio_backend: str, refuse: Callable[[str], httpx.Response], kind: str
) -> None:
    """A bad key, a 400 about the messages, a context overflow, a rate limit or a crash is
    returned as it is: one request, no step down, nothing remembered."""
    server = Server(set(), refuse=refuse)
    model, client = model_for(server)
    async with client:
        result = await model.generate(native_request())
    assert isinstance(result, Failure)
    assert result.failure().kind == kind
    assert server.modes == ["json_schema"]
    assert model.negotiated_structured_output is None


async def test_a_5xx_naming_response_format_steps_down(anyio_backend: str) -> None:
    """A 503 whose body names response_format is a refusal; a 503 that does not is not."""
    said = _error(503, "backend cannot handle response_format json_schema")
    server = Server({"json_object"}, refuse=said)
    model, client = model_for(server)
    async with client:
        assert (await model.generate(native_request())).unwrap().structured_output == "json_object"
    assert server.modes == ["json_schema", "json_object"]


def test_refusal_classification_reads_message_code_and_type() -> None:
    """The word may come in the message, the code or the type; the status must fit."""
    assert refuses_response_format(judge_error(400, code="unsupported_response_format"))
    assert refuses_response_format(judge_error(422, message="json_object is not allowed"))
    assert not refuses_response_format(judge_error(403, message="response_format"))
    assert not refuses_response_format(judge_error(None, message="response_format"))
    assert not refuses_response_format(judge_error(400, message="messages must not be empty"))


async def test_concurrent_first_calls_each_step_down_at_most_once(anyio_backend: str) -> None:
    """Twenty first calls at once: every one succeeds in json_object, none sends more than two
    requests, and afterwards a call goes straight to json_object."""
    server = Server({"json_object"}, refuse=llama_cpp_500)
    model, client = model_for(server)
    results: list[str | None] = []

    async def one() -> None:
        results.append((await model.generate(native_request())).unwrap().structured_output)

    async with client:
        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(one)
        assert results == ["json_object"] * 20
        assert len(server.bodies) <= 40
        before = len(server.bodies)
        await model.generate(native_request())
    assert server.modes[before:] == ["json_object"]


async def test_remembered_per_model_name(anyio_backend: str) -> None:
    """The memory is per (base URL, model): a request sending another model name negotiates
    on its own."""
    server = Server({"json_object"})
    model, client = model_for(server)
    other = native_request(extra={"model": "bigger"})
    async with client:
        await model.generate(native_request())
        await model.generate(other)
    assert server.modes == ["json_schema", "json_object", "json_schema", "json_object"]


async def test_fixed_modes_do_not_negotiate(anyio_backend: str) -> None:
    """An explicit mode is sent as asked and a refusal of it is returned, not stepped around."""
    refusing = Server(set())
    model, client = model_for(refusing, structured_output="json_schema")
    async with client:
        assert isinstance(await model.generate(native_request()), Failure)
    assert refusing.modes == ["json_schema"]

    server = Server({"json_object"})
    model, client = model_for(server, structured_output="json_object")
    async with client:
        reply = (await model.generate(native_request())).unwrap()
    assert server.modes == ["json_object"]
    assert reply.structured_output == "json_object"
    assert schema_mentions(server.bodies[0]) == 0  # the grammar holds it


@pytest.mark.parametrize("mode", ["auto", "json_schema", "json_object", "prompt"])
async def test_every_mode_sends_the_output_cap(anyio_backend: str, mode: str) -> None:
    """Whatever the mode (and every request of a negotiation), the reply has a token cap."""
    server = Server({"prompt"})
    model, client = model_for(server, structured_output=mode)
    async with client:
        await model.generate(native_request(max_output_tokens=96))
    assert server.bodies
    assert all(body["max_tokens"] == 96 for body in server.bodies)


def test_alias_and_mode_must_agree() -> None:
    """supports_structured_output is an alias; a conflicting pair is refused naming both."""
    assert OpenAIChatModel("m", structured_output="json_schema",
                           supports_structured_output=True).structured_output == "json_schema"
    with pytest.raises(ScorerDefinitionError) as raised:
        OpenAIChatModel("m", structured_output="json_object", supports_structured_output=True)
    assert "supports_structured_output" in str(raised.value)
    assert "structured_output='json_object'" in str(raised.value)
    with pytest.raises(ScorerDefinitionError, match=r"structured_output must be .*'grammar'"):
        OpenAIChatModel("m", structured_output="grammar")  # type: ignore[arg-type]


def test_schema_in_prompt_writes_the_schema_once() -> None:
    """The kernel's own wording, appended to the last user message; never twice."""
    moved = schema_in_prompt(native_request())
    assert not moved.native_schema
    assert moved.messages[0].content == "You judge."
    assert moved.messages[-1].content.count(SCHEMA_TEXT) == 1
    assert schema_in_prompt(moved) is moved


def _scorer(model: OpenAIChatModel) -> Any:
    return (
        create_scorer(id="verdict", description="a verdict, then a score",
                      judge=JudgeConfig(model=model, instructions="You judge."))
        .analyze(PromptStep(description="verdict", output_schema=SCHEMA,
                            create_prompt=lambda _c: "Is the answer right?"))
        .generate_score(lambda c: 1.0 if c.results.analyze_step_result["verdict"] == "yes"
                        else 0.0)
    )


@pytest.mark.parametrize(("takes", "settled"), [
    ({"json_schema"}, "json_schema"),
    ({"json_object"}, "json_object"),
    ({"prompt"}, "prompt"),
])
async def test_the_mode_is_recorded_on_the_execution(
    anyio_backend: str, takes: set[str], settled: str
) -> None:
    """Through the kernel: the execution (and its stored row) says which mode answered, and the
    schema is written into the prompt only in prompt mode (once); the other modes carry it in
    response_format."""
    server = Server(takes)
    model, client = model_for(server)
    async with client:
        scorer = _scorer(model)
        first = (await scorer.run(input="q", output="a")).unwrap()
        second = (await scorer.run(input="q", output="a")).unwrap()
    for result in (first, second):
        (execution,) = result.judge["analyze"]
        assert execution.structured_output == settled
        assert result.score == 1.0
    row = to_mastra_json(first)["judge"]["analyze"]["executions"][0]
    assert row["structuredOutput"] == settled
    # No settings given: every request, in every mode, carries the default output cap.
    assert {b.get("max_tokens") for b in server.bodies} == {DEFAULT_OUTPUT_CAP}
    assert all(schema_mentions(b) == (1 if mode_of(b) == "prompt" else 0)
               for b in server.bodies)


async def test_prompt_mode_leaves_the_schema_to_the_kernel(anyio_backend: str) -> None:
    """structured_output="prompt": the kernel writes the schema (once), no response_format is
    sent, and the execution says "prompt"."""
    server = Server({"prompt"})
    model, client = model_for(server, structured_output="prompt")
    async with client:
        result = (await _scorer(model).run(input="q", output="a")).unwrap()
    assert server.modes == ["prompt"]
    assert schema_mentions(server.bodies[0]) == 1
    assert result.judge["analyze"][0].structured_output == "prompt"


async def test_plain_text_steps_send_no_format(anyio_backend: str) -> None:
    """A reason step has no schema: nothing is negotiated and nothing is recorded."""
    server = Server({"prompt"}, reply="Because.")
    model, client = model_for(server)
    scorer = (
        create_scorer(id="r", description="r", judge=JudgeConfig(model=model, instructions="i"))
        .generate_score(lambda _c: 1.0)
        .generate_reason(PromptStep(description="why", create_prompt=lambda _c: "why?"))
    )
    async with client:
        result = (await scorer.run(input="q", output="a")).unwrap()
    assert server.modes == ["prompt"]
    assert result.reason == "Because."
    assert result.judge["generate_reason"][0].structured_output is None
    assert model.negotiated_structured_output is None


async def test_negotiation_over_real_http(anyio_backend: str) -> None:
    """Against the loopback HTTP server: llama-cpp-python's 500, then the json_object reply."""
    with serve() as srv:
        srv.enqueue(
            Error(500, type="internal_server_error",
                  message="1 validation error: ('body', 'response_format', 'type')"),
            Reply({"verdict": "no"}),
        )
        async with OpenAIChatModel("small", base_url=f"{srv.url}/v1") as model:
            result = await model.generate(native_request())
    assert isinstance(result, Success)
    assert json.loads(result.unwrap().text) == {"verdict": "no"}
    assert [r.body.get("response_format", {}).get("type") for r in srv.requests] == [
        "json_schema", "json_object",
    ]


async def test_a_score_prompt_step_negotiates_too(anyio_backend: str) -> None:
    """generate_score's own schema goes through the same negotiation."""
    server = Server({"json_object"}, reply='{"score": 0.5}')
    model, client = model_for(server)
    scorer = (
        create_scorer(id="s", description="s", judge=JudgeConfig(model=model, instructions="i"))
        .generate_score(ScorePromptStep(description="score", create_prompt=lambda _c: "rate"))
    )
    async with client:
        result = (await scorer.run(input="q", output="a")).unwrap()
    assert result.score == 0.5
    assert result.judge["generate_score"][0].structured_output == "json_object"


async def test_the_format_fallback_keeps_the_grammar_in_json_object_mode(
    anyio_backend: str,
) -> None:
    """When the first reply fails the schema, the core asks again with the schema in the
    system prompt (so a server that ignores ``"schema"`` learns it then); a json_object server
    still gets the schema as a grammar for that request, so constrained decoding is never
    dropped, and the schema is written into the prompt once."""
    server = Server({"json_object"}, reply=['{"verdict": "maybe"}', '{"verdict": "no"}'])
    model, client = model_for(server)
    async with client:
        result = (await _scorer(model).run(input="q", output="a")).unwrap()
    assert server.modes == ["json_schema", "json_object", "json_object"]
    assert server.bodies[2]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert [schema_mentions(b) for b in server.bodies] == [0, 0, 1]
    (execution,) = result.judge["analyze"]
    assert (execution.attempt_count, execution.structured_output) == (2, "json_object")
    assert result.score == 0.0


async def test_a_refused_schema_does_not_undo_a_mode_that_worked(anyio_backend: str) -> None:
    """A server that answered in json_schema and then refuses one step's schema (as OpenAI
    refuses a schema its strict mode cannot express) steps down for that request only: the
    next ordinary request goes straight to json_schema again."""
    odd = {"type": "object", "properties": {"n": {"not": {"type": "string"}}}, "required": ["n"]}

    def refuse_odd(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
        if "not" in json.dumps(sent):
            return httpx.Response(400, json={"error": {
                "message": "Invalid schema for response_format 'analyze': 'not' is not permitted.",
                "type": "invalid_request_error", "param": "response_format"}})
        return plain(request)

    plain = Server({"json_schema", "json_object"})
    client = httpx.AsyncClient(transport=httpx.MockTransport(refuse_odd))
    model = OpenAIChatModel("small", base_url=BASE, client=client)
    async with client:
        await model.generate(native_request())
        odd_reply = await model.generate(attrs.evolve(native_request(), output_schema=odd))
        await model.generate(native_request())
    assert odd_reply.unwrap().structured_output == "json_object"
    assert plain.modes == ["json_schema", "json_object", "json_schema"]
    assert model.negotiated_structured_output == "json_schema"


# A schema llama.cpp's converter refuses as written: a property documented but not typed (an
# ``Any`` field) is "Unrecognized schema", and llama-cpp-python's server then silently decodes
# under a grammar for *any* JSON instead of the schema's.
UNTYPED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["yes", "no"], "description": "the verdict"},
        "evidence": {"description": "anything the judge found"},
    },
    "required": ["verdict", "evidence"],
    "additionalProperties": False,
}


async def test_json_object_mode_sends_a_schema_llama_cpp_can_turn_into_a_grammar(
    anyio_backend: str,
) -> None:
    """The schema in ``{"type": "json_object", "schema": ...}`` is rewritten as LocalModel's is
    (annotations dropped, an untyped node made "any JSON value"), so the server's converter
    takes it instead of falling back to a grammar for any JSON; its meaning is unchanged."""
    from llama_cpp import llama_grammar  # noqa: PLC0415 - the local extra, which make test installs

    with pytest.raises(AssertionError, match="Unrecognized schema"):
        llama_grammar.json_schema_to_gbnf(json.dumps(UNTYPED))
    server = Server({"json_object"}, reply='{"verdict": "yes", "evidence": [1, "x"]}')
    model, client = model_for(server, structured_output="json_object")
    request = attrs.evolve(native_request(), output_schema=UNTYPED)
    async with client:
        reply = (await model.generate(request)).unwrap()
    sent = server.bodies[0]["response_format"]
    assert sent["type"] == "json_object"
    assert llama_grammar.json_schema_to_gbnf(json.dumps(sent["schema"]))
    assert sent["schema"]["required"] == ["verdict", "evidence"]
    assert sent["schema"]["properties"]["verdict"]["enum"] == ["yes", "no"]
    assert sent["schema"]["additionalProperties"] is False
    assert reply.structured_output == "json_object"
    # Only the grammar carries the schema: the prompt is the step's own.
    assert all("anything the judge found" not in m["content"]
               for m in server.bodies[0]["messages"])
