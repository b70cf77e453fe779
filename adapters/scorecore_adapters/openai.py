"""A judge model for OpenAI and every OpenAI-compatible Chat Completions server.

:class:`OpenAIChatModel` sends ``POST {base_url}/chat/completions`` over an
``httpx.AsyncClient`` (injected, or owned and closed by :meth:`OpenAIChatModel.aclose`). It
works with OpenAI itself and with compatible servers: vLLM, Ollama, llama.cpp's server,
LM Studio, and proxies such as LiteLLM.

Native structured output uses ``response_format`` ``json_schema`` in strict mode. Strict mode
accepts a restricted schema (every property required, ``additionalProperties: false``), so
the adapter sends :func:`strict_schema` of the user's schema, and removes from the reply the
``null`` values strict mode forces into optional properties, so that the core's validation
against the user's own schema still holds. Strict mode also needs an object at the root: any
other schema (a number, an array, an ``anyOf``) is sent wrapped as the single required property
``value`` of an object, and ``value`` is unwrapped from the reply.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from typing import Any, Final, final
from urllib.parse import urlsplit

import httpx
from returns.result import Failure, Result, Success

from scorecore.judge import (
    OUTPUT_CAP_FIELDS,
    JudgeError,
    JudgeRequest,
    JudgeResponse,
    JudgeUsage,
)
from scorecore_adapters._http import (
    HttpJudgeBase,
    HttpReply,
    accepts_null,
    as_int,
    as_str,
    error_from_response,
    malformed,
    prune_optional_nulls,
    redact,
)

__all__ = ["DEFAULT_OPENAI_BASE_URL", "OpenAIChatModel", "native_schema", "strict_schema"]

DEFAULT_OPENAI_BASE_URL: Final = "https://api.openai.com/v1"
_PROVIDER: Final = "openai"
_STRUCTURED_PREFIXES: Final = ("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4")
# Hosts that implement OpenAI's current parameter names; other servers get the classic ones.
_OPENAI_HOSTS: Final = ("api.openai.com", ".openai.azure.com")
_SCHEMA_CHILD_MAPS: Final = ("properties", "$defs", "definitions", "patternProperties")
_SCHEMA_CHILD_LISTS: Final = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_CHILDREN: Final = ("items", "not", "additionalItems", "contains")
# Strict mode needs an object root; other schemas are wrapped in this property.
_WRAP_KEY: Final = "value"
# Root-level definitions stay at the root when wrapping, so "#/$defs/..." refs still resolve.
_ROOT_DEFS: Final = ("$defs", "definitions")


def _default_structured(model: str) -> bool:
    name = model.rsplit("/", 1)[-1].lower()  # "openai/gpt-4o" as routers spell it
    return name.startswith(_STRUCTURED_PREFIXES)


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
        supports_structured_output: whether the model honours ``response_format``
            ``json_schema``; by default guessed from the name (``gpt-4o*``, ``gpt-4.1*``,
            ``gpt-5*``, ``o1*``, ``o3*``, ``o4*``), ``False`` for unknown models.
        timeout: seconds allowed per request unless ``ModelSettings.timeout`` says otherwise;
            applied to injected clients too.
        organization: sent as ``OpenAI-Organization``.
        default_headers: extra headers for every request.

    The output cap (``ModelSettings.output_cap``: ``max_output_tokens``, 1,024 by default) is
    always sent: as ``max_completion_tokens`` to OpenAI and Azure OpenAI hosts (the only name
    reasoning models accept; their reasoning tokens count against it) and as ``max_tokens`` to
    any other server (the name every compatible server understands). A ``max_tokens`` or
    ``max_completion_tokens`` key in ``ModelSettings.extra`` replaces this choice.

    >>> model = OpenAIChatModel(
    ...     "gpt-4o-mini", base_url="https://api.openai.com/v1", api_key="sk-secret"
    ... )
    >>> model.provider, model.model_id, model.supports_structured_output
    ('openai', 'gpt-4o-mini', True)
    >>> model
    OpenAIChatModel('gpt-4o-mini', base_url='https://api.openai.com/v1', api_key='***')
    >>> local = OpenAIChatModel("llama3.1:8b", base_url="http://localhost:11434/v1")
    >>> local.supports_structured_output, local.base_url
    (False, 'http://localhost:11434/v1')
    """

    __slots__ = ("_organization", "_token_field")
    _provider = _PROVIDER
    _endpoint = "/chat/completions"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        supports_structured_output: bool | None = None,
        timeout: float = 60.0,
        organization: str | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            model=model,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL,
            api_key=api_key if api_key is not None else os.environ.get("OPENAI_API_KEY"),
            client=client,
            structured=(
                _default_structured(model)
                if supports_structured_output is None
                else supports_structured_output
            ),
            timeout=timeout,
            default_headers=default_headers,
        )
        self._organization = organization
        host = (urlsplit(self._base_url).hostname or "").lower()
        self._token_field = (
            "max_completion_tokens"
            if any(host == h or (h.startswith(".") and host.endswith(h)) for h in _OPENAI_HOSTS)
            else "max_tokens"
        )

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "application/json", **self._default_headers}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        if self._organization:
            headers["openai-organization"] = self._organization
        return headers

    def build_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The Chat Completions request body for ``request`` (no I/O; useful for debugging)."""
        settings = request.settings
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
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
        if request.native_schema and request.output_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.step,
                    "strict": True,
                    "schema": native_schema(request.output_schema),
                },
            }
        body.update(settings.extra)
        return body

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
        if request.native_schema and request.output_schema is not None and text:
            text = self._from_strict_reply(text, request.output_schema)
        model_id = body.get("model")
        return Success(
            JudgeResponse(
                text=text,
                usage=_usage(body.get("usage")),
                finish_reason=as_str(choice.get("finish_reason")),
                model_id=model_id if isinstance(model_id, str) else self._model,
            )
        )

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
