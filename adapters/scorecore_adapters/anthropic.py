"""A judge model for Anthropic's Messages API.

:class:`AnthropicModel` sends ``POST {base_url}/v1/messages`` with the ``x-api-key`` and
``anthropic-version`` headers over an ``httpx.AsyncClient`` (injected, or owned and closed by
:meth:`AnthropicModel.aclose`). System messages are joined into the top-level ``system``
field. Native structured output forces a tool call: the schema becomes the ``input_schema`` of
a tool named ``respond`` and the tool's input, serialised as JSON, is the reply text (with
any ``null`` the model put into an optional, non-nullable property removed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Final, final

import httpx
from returns.result import Failure, Result, Success

from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.validators import is_int, misuse
from scorecore_adapters._http.errors import as_int, as_str, error_from_response, malformed
from scorecore_adapters._http.exchange import HttpReply
from scorecore_adapters._http.judge import HttpJudgeBase
from scorecore_adapters._http.nulls import prune_optional_nulls

__all__ = ["DEFAULT_ANTHROPIC_BASE_URL", "RESPOND_TOOL", "AnthropicModel"]

DEFAULT_ANTHROPIC_BASE_URL: Final = "https://api.anthropic.com"
RESPOND_TOOL: Final = "respond"
"""The name of the tool forced for native structured output."""

_PROVIDER: Final = "anthropic"
# A tool's input_schema must describe an object; other schemas are wrapped in this property.
_WRAP_KEY: Final = "value"
# Stop reasons in the vocabulary of JudgeResponse.finish_reason (OpenAI's).
_FINISH: Final[Mapping[str, str]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "tool_use": "tool_calls",
}


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object"


def _usage(raw: object) -> JudgeUsage:
    if not isinstance(raw, Mapping):
        return JudgeUsage()
    fresh = as_int(raw.get("input_tokens"))
    cache_read = as_int(raw.get("cache_read_input_tokens"))
    cache_write = as_int(raw.get("cache_creation_input_tokens"))
    output = as_int(raw.get("output_tokens"))
    parts = [n for n in (fresh, cache_read, cache_write) if n is not None]
    # Anthropic's input_tokens excludes cache reads and writes; JudgeUsage counts all input,
    # as OpenAI's prompt_tokens does, so the two providers' figures compare.
    total_input = sum(parts) if parts else None
    return JudgeUsage(
        input_tokens=total_input,
        output_tokens=output,
        total_tokens=(
            None if total_input is None and output is None else (total_input or 0) + (output or 0)
        ),
        cached_input_tokens=cache_read,
    )


@final
class AnthropicModel(HttpJudgeBase):
    """A judge answering through Anthropic's Messages API.

    Args:
        model: the model name (``"claude-sonnet-4-5"`` …).
        base_url: the API root, before ``/v1/messages``; defaults to ``ANTHROPIC_BASE_URL``,
            then ``https://api.anthropic.com``.
        api_key: sent as ``x-api-key``; defaults to ``ANTHROPIC_API_KEY``. When neither is
            set no key header is sent (a proxy that adds it).
        client: an ``httpx.AsyncClient`` to send requests with; the caller keeps ownership.
            Without one the model creates its own, one per event loop, reused by every call
            under that loop and closed by :meth:`aclose`, ``async with``, or at the latest
            when that loop ends.
        max_tokens: the output cap (Anthropic's required ``max_tokens``) of steps that set
            none (no ``ModelSettings.max_output_tokens`` and no ``max_tokens`` in ``extra``)
            and run without a run-wide cap (``--max-output-tokens``); offered to the core as
            :attr:`default_output_cap`, so a budget reserves what is sent.
        timeout: seconds allowed per request unless ``ModelSettings.timeout`` says otherwise;
            applied to injected clients too.
        anthropic_version: the ``anthropic-version`` header.
        supports_structured_output: whether native schemas (a forced tool call) are used.
        default_headers: extra headers for every request (``anthropic-beta`` …).

    ``ModelSettings.seed`` is ignored: the Messages API has no seed.

    >>> model = AnthropicModel(
    ...     "claude-sonnet-4-5", base_url="https://api.anthropic.com", api_key="sk-ant-secret"
    ... )
    >>> model.provider, model.model_id, model.supports_structured_output
    ('anthropic', 'claude-sonnet-4-5', True)
    >>> model
    AnthropicModel('claude-sonnet-4-5', base_url='https://api.anthropic.com', api_key='***')
    """

    __slots__ = ("_max_tokens", "_version")
    _provider = _PROVIDER
    _endpoint = "/v1/messages"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        max_tokens: int = 1024,
        timeout: float = 60.0,
        anthropic_version: str = "2023-06-01",
        supports_structured_output: bool = True,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        if not is_int(max_tokens) or max_tokens < 1:
            raise misuse("AnthropicModel.max_tokens", max_tokens, "must be an int >= 1")
        super().__init__(
            model=model,
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_ANTHROPIC_BASE_URL,
            api_key=api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY"),
            client=client,
            structured=supports_structured_output,
            timeout=timeout,
            default_headers=default_headers,
        )
        self._max_tokens = max_tokens
        self._version = anthropic_version

    @property
    def default_output_cap(self) -> int:
        """The output cap of steps that set none (the ``max_tokens`` argument)."""
        return self._max_tokens

    def _headers(self) -> dict[str, str]:
        headers = {
            "accept": "application/json",
            "anthropic-version": self._version,
            **self._default_headers,
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def build_body(self, request: JudgeRequest) -> dict[str, Any]:
        """The Messages API request body for ``request`` (no I/O; useful for debugging)."""
        settings = request.settings
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        users = [m.content for m in request.messages if m.role == "user"]
        # One user turn: the request's user messages as consecutive text blocks.
        content: str | list[dict[str, str]] = (
            users[0] if len(users) == 1 else [{"type": "text", "text": u} for u in users]
        )
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": settings.max_output_tokens or self._max_tokens,
            "messages": [{"role": "user", "content": content}],
        }
        if system:
            body["system"] = system
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        if settings.top_p is not None:
            body["top_p"] = settings.top_p
        if request.native_schema and request.output_schema is not None:
            schema = dict(request.output_schema)
            if not _is_object_schema(schema):
                # $defs stay at the root, where the schema's "#/$defs/…" references point.
                defs: dict[str, Any] = {
                    k: schema.pop(k) for k in ("$defs", "definitions") if k in schema
                }
                schema = {
                    "type": "object",
                    "properties": {_WRAP_KEY: schema},
                    "required": [_WRAP_KEY],
                    **defs,
                }
            body["tools"] = [
                {
                    "name": RESPOND_TOOL,
                    "description": "Give your answer by calling this tool with it as the input.",
                    "input_schema": schema,
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": RESPOND_TOOL}
        body.update(settings.extra)
        return body

    def _parse(self, reply: HttpReply, request: JudgeRequest) -> Result[JudgeResponse, JudgeError]:
        body = reply.body
        secrets = self._secrets(request)

        def bad(what: str) -> Result[JudgeResponse, JudgeError]:
            return Failure(
                malformed(what, provider=_PROVIDER, response=reply.response, secrets=secrets)
            )

        if not isinstance(body, dict):
            return bad("expected a JSON object")
        if body.get("type") == "error" or ("content" not in body and "error" in body):
            return Failure(
                error_from_response(reply.response, provider=_PROVIDER, secrets=secrets)
            )
        blocks = body.get("content")
        if not isinstance(blocks, list):
            return bad("missing 'content'")
        forced = request.native_schema and request.output_schema is not None
        texts: list[str] = []
        tool_input: object = None
        for block in blocks:
            if not isinstance(block, dict):
                return bad("a 'content' block is not an object")
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use" and block.get("name") == RESPOND_TOOL:
                tool_input = block.get("input")
        stop = as_str(body.get("stop_reason"))
        if forced and tool_input is not None:
            value = tool_input
            if (
                request.output_schema is not None
                and not _is_object_schema(request.output_schema)
                and isinstance(tool_input, dict)
                and _WRAP_KEY in tool_input
            ):
                value = tool_input[_WRAP_KEY]
            if request.output_schema is not None:
                value = prune_optional_nulls(value, request.output_schema)
            text = json.dumps(value, ensure_ascii=False)
            finish = "stop" if stop == "tool_use" else _FINISH.get(stop or "", stop)
        else:
            # No forced answer (or it was cut off): hand the core whatever text there is, so
            # it can report the format problem with the raw output.
            text = "".join(texts)
            finish = _FINISH.get(stop or "", stop)
        model_id = body.get("model")
        return Success(
            JudgeResponse(
                text=text,
                usage=_usage(body.get("usage")),
                finish_reason=finish,
                model_id=model_id if isinstance(model_id, str) else self._model,
                structured_output="tool" if forced else None,
            )
        )
