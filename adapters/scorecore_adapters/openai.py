"""A judge model for OpenAI and every OpenAI-compatible Chat Completions server.

:class:`OpenAIChatModel` sends ``POST {base_url}/chat/completions`` over an
``httpx.AsyncClient`` (injected, or owned and closed by :meth:`OpenAIChatModel.aclose`). It
works with OpenAI itself and with compatible servers: vLLM, Ollama, llama.cpp's server,
LM Studio, and proxies such as LiteLLM.

Structured output is negotiated (``structured_output="auto"``, the default): strict
``json_schema`` first; when the server refuses ``response_format`` the same request is sent
once as ``{"type": "json_object", "schema": ...}`` (llama.cpp's dialect), then with the schema
in the prompt only. The mode that worked is remembered per base URL and model for the life of
the :class:`OpenAIChatModel` and reported on each reply (``JudgeResponse.structured_output``),
so every judge execution records it.

Strict ``json_schema`` mode accepts a restricted schema (every property required,
``additionalProperties: false``), so the adapter sends :func:`strict_schema` of the user's
schema, and removes from the reply the ``null`` values strict mode forces into optional
properties, so that the core's validation against the user's own schema still holds. Strict
mode also needs an object at the root: any other schema (a number, an array, an ``anyOf``) is
sent wrapped as the single required property ``value`` of an object, and ``value`` is
unwrapped from the reply.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import threading
from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, final
from urllib.parse import urlsplit

import attrs
import httpx
from returns.result import Failure, Result, Success

from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse, JudgeUsage, schema_in_prompt
from scorecore.judge.economics import OUTPUT_CAP_FIELDS
from scorecore.validators import misuse
from scorecore_adapters._grammar import GrammarUnsupported, grammar_schema
from scorecore_adapters._http.errors import as_int, as_str, error_from_response, malformed
from scorecore_adapters._http.exchange import HttpReply
from scorecore_adapters._http.judge import HttpJudgeBase
from scorecore_adapters._http.nulls import accepts_null, prune_optional_nulls
from scorecore_adapters._http.scrub import redact
from scorecore_adapters._logprobs import from_choice, logprob_body

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "OpenAIChatModel",
    "StructuredOutput",
    "native_schema",
    "refuses_response_format",
    "strict_schema",
]

DEFAULT_OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
_PROVIDER: Final = "openai"

StructuredOutput: TypeAlias = Literal["auto", "json_schema", "json_object", "prompt"]
"""How :class:`OpenAIChatModel` holds a judge's reply to the step's schema.

``"json_schema"``: ``response_format`` ``json_schema`` in strict mode (OpenAI, vLLM, Ollama,
LM Studio); ``"json_object"``: ``{"type": "json_object", "schema": ...}`` (llama.cpp's
server, which then decodes under a grammar; the schema is not also written into the prompt,
which made a small model ramble inside a string: a server that ignores ``"schema"`` gets it
in the prompt from the core's second attempt, when the first reply does not fit);
``"prompt"``: the schema in the prompt only; ``"auto"``: the first of these the server accepts.
"""

_Mode: TypeAlias = Literal["json_schema", "json_object", "prompt"]
_CHOICES: Final[tuple[StructuredOutput, ...]] = ("auto", "json_schema", "json_object", "prompt")
# What "auto" tries after a mode the server refused.
_FALLBACK: Final[Mapping[_Mode, _Mode | None]] = {
    "json_schema": "json_object",
    "json_object": "prompt",
    "prompt": None,
}
_RANK: Final[Mapping[_Mode, int]] = {"json_schema": 0, "json_object": 1, "prompt": 2}
# A refusal of response_format names it (or one of its types) in the error; a 400 about the
# messages, a bad key or a context overflow does not, and is never taken for one.
_FORMAT_WORDS: Final = ("response_format", "json_schema", "json_object")
_REFUSING_KINDS: Final = frozenset({"bad_request", "server", "unknown"})
# Hosts that implement OpenAI's current parameter names; other servers get the classic ones.
_OPENAI_HOSTS: Final = ("api.openai.com", ".openai.azure.com")
_SCHEMA_CHILD_MAPS: Final = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_CHILD_LISTS: Final = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_CHILDREN: Final = ("items", "not", "additionalItems", "contains")
# Strict mode needs an object root; other schemas are wrapped in this property.
_WRAP_KEY: Final = "value"
# Root-level definitions stay at the root when wrapping, so "#/$defs/..." refs still resolve.
_ROOT_DEFS: Final = ("$defs", "definitions")


def refuses_response_format(error: JudgeError) -> bool:
    """Whether ``error`` is a server refusing ``response_format`` (what "auto" steps down on).

    A 400 or 422, or a 5xx (llama-cpp-python answers a request it cannot validate with a
    500), whose message, code or type names ``response_format``, ``json_schema`` or
    ``json_object``. Never an authentication, rate-limit or context-length error.
    """
    status = error.status
    if status is None or not (status in (400, 422) or 500 <= status <= 599):
        return False
    if error.kind not in _REFUSING_KINDS:
        return False
    said = " ".join(part for part in (error.message, error.code, error.type) if part).lower()
    return any(word in said for word in _FORMAT_WORDS)


def _resolve_mode(
    structured_output: object, supports_structured_output: object
) -> StructuredOutput:
    if structured_output is not None and structured_output not in _CHOICES:
        raise misuse(
            "OpenAIChatModel.structured_output", structured_output,
            'must be "auto", "json_schema", "json_object" or "prompt"',
        )
    if supports_structured_output is None:
        return structured_output or "auto"
    if not isinstance(supports_structured_output, bool):
        raise misuse(
            "OpenAIChatModel.supports_structured_output", supports_structured_output,
            "must be True, False or None",
        )
    alias: StructuredOutput = "json_schema" if supports_structured_output else "prompt"
    if structured_output is not None and structured_output != alias:
        raise misuse(
            "OpenAIChatModel.supports_structured_output", supports_structured_output,
            f"(an alias of structured_output={alias!r}) conflicts with "
            f"structured_output={structured_output!r}; give only structured_output",
        )
    return alias


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if accepts_null(schema):
        return schema
    type_ = schema.get("type")
    if isinstance(type_, str):
        out = {**schema, "type": [type_, "null"]}
    elif isinstance(type_, list):
        out = {**schema, "type": [*type_, "null"]}
    else:
        return {"anyOf": [schema, {"type": "null"}]}
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def _strict(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_CHILD_MAPS and isinstance(value, dict):
            out[key] = {name: _strict(sub) for name, sub in value.items()}
        elif key in _SCHEMA_CHILD_LISTS and isinstance(value, list):
            out[key] = [_strict(sub) for sub in value]
        elif key in _SCHEMA_CHILDREN:
            out[key] = _strict(value)
        else:
            out[key] = value
    type_ = out.get("type")
    is_object = type_ == "object" or (isinstance(type_, list) and "object" in type_)
    if is_object or "properties" in out:
        props: dict[str, Any] = out.get("properties") or {}
        required = set(out.get("required") or ())
        out["properties"] = {
            name: sub if name in required or not isinstance(sub, dict) else _nullable(sub)
            for name, sub in props.items()
        }
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON schema OpenAI's strict structured output accepts, derived from ``schema``.

    Every object lists all its properties in ``required`` and gets
    ``additionalProperties: false``; a property that was optional becomes nullable instead.
    The input is not modified.

    >>> strict_schema({
    ...     "type": "object",
    ...     "properties": {"score": {"type": "number"}, "note": {"type": "string"}},
    ...     "required": ["score"],
    ... }) == {
    ...     "type": "object",
    ...     "properties": {"score": {"type": "number"}, "note": {"type": ["string", "null"]}},
    ...     "required": ["score", "note"],
    ...     "additionalProperties": False,
    ... }
    True
    """
    result = _strict(copy.deepcopy(dict(schema)))
    assert isinstance(result, dict)  # noqa: S101 - _strict maps a dict to a dict
    return result


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object"


def native_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``response_format`` schema sent for ``schema``: :func:`strict_schema` of it, with a
    non-object root wrapped as the required property ``value`` of an object.

    >>> native_schema({"type": "number"}) == {
    ...     "type": "object",
    ...     "properties": {"value": {"type": "number"}},
    ...     "required": ["value"],
    ...     "additionalProperties": False,
    ... }
    True
    """
    if _is_object_schema(schema):
        return strict_schema(schema)
    inner = {k: v for k, v in schema.items() if k not in _ROOT_DEFS}
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {_WRAP_KEY: inner},
        "required": [_WRAP_KEY],
    }
    wrapped.update({k: schema[k] for k in _ROOT_DEFS if k in schema})
    return strict_schema(wrapped)


def _for_the_grammar(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema sent with ``json_object``: rewritten for llama.cpp's converter when it can
    be, else as written (the server then decides; the core's check still reads the reply)."""
    try:
        return grammar_schema(schema)
    except GrammarUnsupported:
        return dict(schema)


def _usage(raw: object) -> JudgeUsage:
    if not isinstance(raw, Mapping):
        return JudgeUsage()
    completion = raw.get("completion_tokens_details")
    prompt = raw.get("prompt_tokens_details")
    return JudgeUsage(
        input_tokens=as_int(raw.get("prompt_tokens")),
        output_tokens=as_int(raw.get("completion_tokens")),
        total_tokens=as_int(raw.get("total_tokens")),
        reasoning_tokens=(
            as_int(completion.get("reasoning_tokens")) if isinstance(completion, Mapping) else None
        ),
        cached_input_tokens=(
            as_int(prompt.get("cached_tokens")) if isinstance(prompt, Mapping) else None
        ),
    )


@final
class OpenAIChatModel(HttpJudgeBase):
    """A judge answering through an OpenAI-compatible Chat Completions endpoint.

    Args:
        model: the model name sent as ``model`` (``"gpt-4o-mini"``, ``"llama3.1:8b"`` …).
        base_url: the API root, ending before ``/chat/completions``; defaults to
            ``OPENAI_BASE_URL``, then ``https://api.openai.com/v1``.
        api_key: sent as ``Authorization: Bearer …``; defaults to ``OPENAI_API_KEY``. When
            neither is set (a local server) no ``Authorization`` header is sent.
        client: an ``httpx.AsyncClient`` to send requests with; the caller keeps ownership.
            Without one the model creates its own, one per event loop, reused by every call
            under that loop and closed by :meth:`aclose`, ``async with``, or at the latest
            when that loop ends.
        structured_output: how replies are held to a step's schema (see
            :data:`StructuredOutput`); default ``"auto"``: strict ``json_schema``, then
            ``json_object`` with the schema, then the prompt only, whichever the server
            accepts first. Only a refusal of ``response_format`` (see
            :func:`refuses_response_format`) steps down; the mode that worked is remembered
            for this base URL and model as long as the model object lives.
        supports_structured_output: the older spelling: ``True`` is
            ``structured_output="json_schema"``, ``False`` is ``"prompt"``; giving both is an
            error unless they agree.
        timeout: seconds allowed per request unless ``ModelSettings.timeout`` says otherwise;
            applied to injected clients too. A slow local model may need more than the
            default 60 s: raise it here or per scorer with ``ModelSettings(timeout=...)``.
        organization: sent as ``OpenAI-Organization``.
        default_headers: extra headers for every request.

    The output cap (``ModelSettings.output_cap``: ``max_output_tokens``, 1,024 by default) is
    always sent, in every structured-output mode: as ``max_completion_tokens`` to OpenAI and
    Azure OpenAI hosts (the only name reasoning models accept; their reasoning tokens count
    against it) and as ``max_tokens`` to any other server (the name every compatible server
    understands). A ``max_tokens`` or ``max_completion_tokens`` key in ``ModelSettings.extra``
    replaces this choice.

    >>> model = OpenAIChatModel(
    ...     "gpt-4o-mini", base_url="https://api.openai.com/v1", api_key="sk-secret"
    ... )
    >>> model.provider, model.model_id, model.structured_output
    ('openai', 'gpt-4o-mini', 'auto')
    >>> model
    OpenAIChatModel('gpt-4o-mini', base_url='https://api.openai.com/v1', api_key='***')
    >>> local = OpenAIChatModel("llama3.1:8b", base_url="http://localhost:11434/v1")
    >>> local.supports_structured_output, local.negotiated_structured_output
    (True, None)
    >>> OpenAIChatModel("qwen2.5", supports_structured_output=False).structured_output
    'prompt'
    """

    __slots__ = ("_mode", "_negotiated", "_negotiated_lock", "_organization", "_token_field")
    _provider = _PROVIDER
    _endpoint = "/chat/completions"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        structured_output: StructuredOutput | None = None,
        supports_structured_output: bool | None = None,
        timeout: float = 60.0,
        organization: str | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        mode = _resolve_mode(structured_output, supports_structured_output)
        super().__init__(
            model=model,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL,
            api_key=api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"),
            client=client,
            # Every mode but "prompt" takes native requests: the adapter itself writes the
            # schema into the prompt when it ends up in prompt mode.
            structured=mode != "prompt",
            timeout=timeout,
            default_headers=default_headers,
        )
        self._mode: StructuredOutput = mode
        # What "auto" settled on, per (base URL, model name sent), and whether a reply came in
        # that mode; shared by every event loop and thread this model is used from.
        self._negotiated: dict[tuple[str, str], tuple[_Mode, bool]] = {}
        self._negotiated_lock = threading.Lock()
        self._organization = organization
        host = (urlsplit(self._base_url).hostname or "").lower()
        self._token_field = (
            "max_completion_tokens"
            if any(host == h or (h.startswith(".") and host.endswith(h)) for h in _OPENAI_HOSTS)
            else "max_tokens"
        )

    @property
    def structured_output(self) -> StructuredOutput:
        """The structured-output mode asked for (``"auto"`` unless given)."""
        return self._mode

    @property
    def negotiated_structured_output(self) -> StructuredOutput | None:
        """What ``"auto"`` settled on for this model's endpoint, or ``None`` before the first
        reply to a structured request (and for the fixed modes)."""
        with self._negotiated_lock:
            found = self._negotiated.get((self._base_url, self._model))
        return None if found is None else found[0]

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "application/json", **self._default_headers}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        if self._organization:
            headers["openai-organization"] = self._organization
        return headers

    def build_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The Chat Completions request body for ``request`` (no I/O; useful for debugging):
        what the next call would send first, in the mode negotiated so far."""
        return self._body(request, self._first_mode(self._model_for(request)))

    def _model_for(self, request: JudgeRequest) -> str:
        sent = request.settings.extra.get("model", self._model)
        return sent if isinstance(sent, str) else self._model

    def _first_mode(self, model: str) -> _Mode:
        if self._mode != "auto":
            return self._mode
        with self._negotiated_lock:
            found = self._negotiated.get((self._base_url, model))
        return "json_schema" if found is None else found[0]

    def _settle(self, model: str, mode: _Mode, *, worked: bool) -> None:
        """Remember ``mode`` (a reply came in it) or that the server refused the mode before
        it (``mode`` is where to start next time).

        A refusal only ever moves the remembered mode down, so concurrent first calls that
        each step down once agree on where they end; and never below a mode that has worked:
        a server that answered in ``json_schema`` and then refuses one step's schema (OpenAI
        refuses schemas its strict mode cannot express) steps down for that request only,
        and that request's reply in a lower mode does not move the remembered one either.
        """
        key = (self._base_url, model)
        with self._negotiated_lock:
            known = self._negotiated.get(key)
            if worked:
                if known is None or not known[1] or _RANK[mode] < _RANK[known[0]]:
                    self._negotiated[key] = (mode, True)
            elif known is None or (not known[1] and _RANK[mode] > _RANK[known[0]]):
                self._negotiated[key] = (mode, False)

    def _body(self, request: JudgeRequest, mode: _Mode) -> dict[str, Any]:
        settings = request.settings
        native = request.native_schema and request.output_schema is not None
        # json_object: the grammar holds the reply to the schema, which is not written into
        # the prompt as well (SmolLM2 over llama.cpp's server ran on inside a string in 6 of
        # 60 greedy replies with it there, 0 of 60 without; docs/local-judges.md). A server
        # that ignores "schema" gets it in the prompt from the core's format fallback.
        sent = request if not native or mode != "prompt" else schema_in_prompt(request)
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in sent.messages],
        }
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        if settings.top_p is not None:
            body["top_p"] = settings.top_p
        cap = settings.output_cap  # the one cap the budget reserves; extra's own field wins
        if cap is not None and not any(name in settings.extra for name in OUTPUT_CAP_FIELDS):
            body[self._token_field] = cap
        if settings.seed is not None:
            body["seed"] = settings.seed
        if native and mode == "json_schema" and request.output_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.step,
                    "strict": True,
                    "schema": native_schema(request.output_schema),
                },
            }
        elif mode == "json_object" and request.output_schema is not None:
            # llama.cpp's dialect: the server compiles the schema into a grammar. A request
            # whose schema the core already wrote into the prompt (its format fallback) is
            # held to the grammar too: the schema is the user's own, so nothing in the reply
            # needs undoing. The schema sent is rewritten for llama.cpp's converter (same
            # meaning): one it refuses makes llama-cpp-python's server fall back, silently,
            # to a grammar for any JSON.
            body["response_format"] = {
                "type": "json_object",
                "schema": _for_the_grammar(request.output_schema),
            }
        body.update(logprob_body(request))
        body.update(settings.extra)
        return body

    async def _generate(self, request: JudgeRequest) -> Result[JudgeResponse, JudgeError]:
        model = self._model_for(request)
        mode = self._first_mode(model)
        negotiates = (
            self._mode == "auto"
            and request.native_schema
            and request.output_schema is not None
            and "response_format" not in request.settings.extra
        )
        while True:
            result = (await self._exchange(request, self._body(request, mode))).map(
                functools.partial(self._in_mode, request=request, mode=mode)
            )
            if not negotiates:
                return result
            if isinstance(result, Success):
                self._settle(model, mode, worked=True)
                return result
            fallback = _FALLBACK[mode]
            if fallback is None or not refuses_response_format(result.failure()):
                return result
            self._settle(model, fallback, worked=False)
            mode = fallback

    def _parse(
        self, reply: HttpReply, request: JudgeRequest
    ) -> Result[JudgeResponse, JudgeError]:
        body = reply.body
        response = reply.response
        secrets = self._secrets(request)

        def bad(what: str) -> Result[JudgeResponse, JudgeError]:
            return Failure(malformed(what, provider=_PROVIDER, response=response, secrets=secrets))

        if not isinstance(body, dict):
            return bad("expected a JSON object")
        if "choices" not in body and "error" in body:
            # Some proxies answer 200 with an error body.
            return Failure(error_from_response(response, provider=_PROVIDER, secrets=secrets))
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices:
            return bad("missing or empty 'choices'")
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            return bad("'choices[0].message' is missing")
        content = message.get("content")
        refusal = message.get("refusal")
        if content is None and isinstance(refusal, str) and refusal:
            return Failure(
                JudgeError(
                    kind="unknown",
                    message=redact(f"openai model refused: {refusal}", secrets),
                    status=reply.status,
                    headers=reply.headers,
                    code="refusal",
                    is_retryable=False,
                )
            )
        if content is not None and not isinstance(content, str):
            return bad("'choices[0].message.content' is not text")
        text = content or ""
        model_id = body.get("model")
        return Success(
            JudgeResponse(
                text=text,
                usage=_usage(body.get("usage")),
                finish_reason=as_str(choice.get("finish_reason")),
                model_id=model_id if isinstance(model_id, str) else self._model,
                logprobs=None if request.top_logprobs is None else from_choice(choice),
            )
        )

    def _finish_reply(self, response: JudgeResponse, request: JudgeRequest) -> JudgeResponse:
        # A reply read back for a body built by build_body: in the mode build_body used.
        return self._in_mode(
            response, request=request, mode=self._first_mode(self._model_for(request))
        )

    @staticmethod
    def _in_mode(response: JudgeResponse, *, request: JudgeRequest, mode: _Mode) -> JudgeResponse:
        """The reply as the user's schema expects it, tagged with the mode that produced it."""
        if request.output_schema is None:
            return response
        text = response.text
        if request.native_schema and mode == "json_schema" and text:
            text = OpenAIChatModel._from_strict_reply(text, request.output_schema)
        said: _Mode | None
        if "response_format" in request.settings.extra:
            said = None  # a response_format of the user's own (ModelSettings.extra)
        elif request.native_schema or mode == "json_object":
            said = mode  # json_object holds even a prompt-routed request to the grammar
        else:
            said = "prompt"
        return attrs.evolve(response, text=text, structured_output=said)

    @staticmethod
    def _from_strict_reply(text: str, schema: Mapping[str, Any]) -> str:
        """The reply as the user's schema expects it: unwrapped, without forced ``null``s."""
        try:
            value = json.loads(text)
        except ValueError:  # the core reports unparseable replies with the raw text
            return text
        if not _is_object_schema(schema):
            if not (isinstance(value, dict) and _WRAP_KEY in value):
                return text  # not the wrapper: let the core report it against the schema
            unwrapped = prune_optional_nulls(value[_WRAP_KEY], schema)
            return json.dumps(unwrapped, ensure_ascii=False)
        pruned = prune_optional_nulls(value, schema)
        return text if pruned == value else json.dumps(pruned, ensure_ascii=False)
