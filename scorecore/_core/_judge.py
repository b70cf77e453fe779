"""The judge as an effect: request/response values, the error value, the ports.

The core never performs I/O. A prompt step becomes a :class:`JudgeRequest` value handed to a
:class:`JudgeModel`; the model answers ``Success(JudgeResponse)`` or ``Failure(JudgeError)``.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, Protocol, TypeAlias, cast, final, runtime_checkable

import attrs
from returns.result import Result

from scorecore._core._failed_call import JudgeError
from scorecore._core._logprobs import TokenLogprob, check_top_logprobs
from scorecore._core._redact import redacted_repr
from scorecore._core._slot_init import fast_init
from scorecore.validators import check_count, is_int, is_number, misuse

__all__ = [
    "DEFAULT_OUTPUT_CAP",
    "OUTPUT_CAP_FIELDS",
    "Abort",
    "ErrorProcessor",
    "InputProcessor",
    "JsonPromptInjection",
    "JudgeMessage",
    "JudgeModel",
    "JudgeRequest",
    "JudgeResponse",
    "JudgeUsage",
    "ModelSettings",
    "OutputProcessor",
    "Retry",
    "RetryClassifier",
    "SchemaChecker",
    "StepName",
    "StructuredOutputMode",
    "reply_with_text",
    "stored_reply",
]

StepName: TypeAlias = Literal["preprocess", "analyze", "generate_score", "generate_reason"]
JsonPromptInjection: TypeAlias = Literal["auto", "inline", "system"] | bool
StructuredOutputMode: TypeAlias = Literal[
    "json_schema", "json_object", "tool", "grammar", "prompt", "native"
]
"""How a judge reply was held to the step's schema (see :attr:`JudgeResponse.structured_output`).

``"json_schema"``: the provider's strict JSON-schema output; ``"json_object"``: JSON mode with
the schema (llama.cpp's dialect); ``"tool"``: a forced tool call (Anthropic); ``"grammar"``:
grammar-constrained decoding in process; ``"prompt"``: the schema written into the prompt only;
``"native"``: the model's own native structured output, unnamed by its adapter.
"""

_MODES: tuple[str, ...] = StructuredOutputMode.__args__  # type: ignore[attr-defined]

DEFAULT_OUTPUT_CAP: Final = 1024
"""The output tokens a judge reply may have when neither the step nor the run sets a cap."""

OUTPUT_CAP_FIELDS: Final = ("max_tokens", "max_completion_tokens")
"""Provider body fields in ``ModelSettings.extra`` that set the output cap themselves."""


@final
@attrs.frozen(kw_only=True)
class JudgeMessage:
    """One message sent to a judge: ``role`` is ``"system"`` or ``"user"``, ``content`` text."""

    role: Literal["system", "user"] = attrs.field(
        validator=attrs.validators.in_(("system", "user"))
    )
    content: str = attrs.field(validator=attrs.validators.instance_of(str))


def _count(name: str) -> Callable[[object, object, int], None]:
    def check(_inst: object, _attr: object, value: object) -> None:
        check_count(f"ModelSettings.{name}", value, minimum=0)

    return check


def _int_or_none(name: str, *, minimum: int | None) -> Callable[[object, object, int | None], None]:
    def check(_inst: object, _attr: object, value: object) -> None:
        if value is None:
            return
        if minimum is None:
            if not is_int(value):
                raise misuse(f"ModelSettings.{name}", value, "must be an int or None")
        elif not is_int(value) or value < minimum:
            raise misuse(f"ModelSettings.{name}", value, f"must be an int >= {minimum} or None")

    return check


def _finite_or_none(name: str) -> Callable[[object, object, float | None], None]:
    def check(_inst: object, _attr: object, value: float | None) -> None:
        if value is None:
            return
        try:
            finite = is_number(value) and math.isfinite(value)
        except OverflowError:  # an int too large for a float
            finite = False
        if not finite:
            raise misuse(f"ModelSettings.{name}", value, "must be a finite number")

    return check


def _top_logprobs(_inst: object, _attr: object, value: int | None) -> None:
    check_top_logprobs("JudgeRequest.top_logprobs", value)


def _logprobs(
    _inst: object, _attr: object, value: tuple[TokenLogprob, ...] | None
) -> None:
    if value is not None and not (
        type(value) is tuple and all(type(t) is TokenLogprob for t in value)
    ):
        raise misuse("JudgeResponse.logprobs", value, "must be a tuple of TokenLogprob or None")


# Every reply (each one a cache hit reads back too) is checked: a str text and a known mode
# pass on one exact check, anything else is judged, and refused, by attrs' own validators.
_TEXT_IS_STR: Final = attrs.validators.instance_of(str)
_MODE_IS_KNOWN: Final = attrs.validators.optional(attrs.validators.in_(_MODES))


def _reply_text(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if type(value) is not str:
        _TEXT_IS_STR(inst, attr, cast("str", value))


def _reply_mode(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not (type(value) is str and value in _MODES):
        _MODE_IS_KNOWN(inst, attr, cast("StructuredOutputMode | None", value))


def _to_messages(messages: Iterable[JudgeMessage]) -> tuple[JudgeMessage, ...]:
    return tuple(messages)


@final
@attrs.frozen(kw_only=True)
class ModelSettings:
    """Sampling and transport settings passed to the judge model.

    ``timeout`` is in seconds. ``extra`` holds provider-specific body fields, sent as given.
    ``max_retries`` (default 0) retries a failed model call whose error is retryable, or
    unclassified (kind ``"unknown"`` without an HTTP status), that many times, waiting 1 s,
    2 s, 4 s … (at least what the provider's ``Retry-After`` asks, capped at 30 s), before
    any error processor sees the error, as Mastra's model-level retries do.
    Every call counts in ``model_call_count`` and every wait in ``waits``.

    ``max_output_tokens`` caps the reply's output tokens. A step that sets no cap (neither it
    nor a ``max_tokens``/``max_completion_tokens`` in ``extra``) is sent the run's cap
    (``run_evals(max_output_tokens=...)``, ``scorecore eval --max-output-tokens``), else the
    judge model's own default (``AnthropicModel(max_tokens=...)``), else 1,024 tokens; a hard
    budget reserves exactly the cap that is sent (:attr:`output_cap`).
    """

    temperature: float | None = attrs.field(default=None, validator=_finite_or_none("temperature"))
    top_p: float | None = attrs.field(default=None, validator=_finite_or_none("top_p"))
    max_output_tokens: int | None = attrs.field(
        default=None, validator=_int_or_none("max_output_tokens", minimum=1)
    )
    seed: int | None = attrs.field(default=None, validator=_int_or_none("seed", minimum=None))
    timeout: float | None = attrs.field(default=None, validator=_finite_or_none("timeout"))
    # Provider body fields may carry credentials: never show them in a repr.
    extra: Mapping[str, Any] = attrs.field(factory=dict, repr=redacted_repr)
    # Mastra's modelSettings.maxRetries: retries of the model call itself,
    # before error processors see the error (scorecore._core._backoff.model_retry_wait).
    max_retries: int = attrs.field(default=0, validator=_count("max_retries"))

    @property
    def output_cap(self) -> int | None:
        """The most output tokens a reply may have: what the adapters send and the budget
        reserves.

        A ``max_tokens`` or ``max_completion_tokens`` in ``extra`` (sent to the provider as
        given) wins, the larger when both are set; then ``max_output_tokens``; then the
        default, 1,024. ``None`` when ``extra`` sets the cap to something other than a whole
        number >= 1 (how the provider reads it is unknown).

        >>> ModelSettings().output_cap, ModelSettings(max_output_tokens=64).output_cap
        (1024, 64)
        >>> ModelSettings(max_output_tokens=64, extra={"max_tokens": 4096}).output_cap
        4096
        """
        given: list[object] = [self.extra[n] for n in OUTPUT_CAP_FIELDS if n in self.extra]
        if given:
            caps = [value for value in given if is_int(value) and value >= 1]
            return max(caps) if len(caps) == len(given) else None
        return DEFAULT_OUTPUT_CAP if self.max_output_tokens is None else self.max_output_tokens


def with_default_cap(settings: ModelSettings, default: int) -> ModelSettings:
    """``settings`` with ``max_output_tokens=default`` unless they choose a cap themselves
    (``max_output_tokens``, or a cap field in ``extra``) — internal: the judge loop sends every
    request with its cap written in, so the adapters send it and the cache key holds it."""
    extra = settings.extra
    # OUTPUT_CAP_FIELDS, spelt out: a generator per judge call is the warm path's cost.
    if settings.max_output_tokens is not None or "max_tokens" in extra or (
        "max_completion_tokens" in extra
    ):
        return settings
    # Every execution of a step asks this of the same settings: the capped copy is kept (a
    # frozen value, sharing ``extra`` as evolve does), keyed by the settings' identity.
    key = (id(settings), default)
    kept = _CAPPED.get(key)
    if kept is not None and kept[0] is settings:
        return kept[1]
    capped = attrs.evolve(settings, max_output_tokens=default)
    if len(_CAPPED) >= _CAPPED_SIZE:
        _CAPPED.clear()
    _CAPPED[key] = (settings, capped)
    return capped


_CAPPED: dict[tuple[int, int], tuple[ModelSettings, ModelSettings]] = {}
_CAPPED_SIZE: Final = 256


@final
@attrs.frozen(kw_only=True)
class JudgeRequest:
    """What a prompt step asks of a judge model.

    Attributes:
        messages: the system instructions first, then the user prompt.
        output_schema: the JSON schema the reply must satisfy; ``None`` for plain text.
        native_schema: ``True`` when the adapter must use the provider's native structured
            output for ``output_schema``; ``False`` when the schema (if any) is already written
            into the messages.
        settings: the model settings.
        step: which scorer step asks.
        top_logprobs: ``None`` (the default) asks for no log-probabilities; a number from 0
            to 20 asks the judge for each generated token's log-probability and that many
            likeliest alternatives (:class:`JudgeResponse`'s ``logprobs``). A step sets it only when
            it reads them (``ScorePromptStep(score_from="probabilities")``); a judge that has
            none answers without them.
    """

    messages: tuple[JudgeMessage, ...] = attrs.field(converter=_to_messages)
    output_schema: Mapping[str, Any] | None = None
    native_schema: bool = False
    settings: ModelSettings = attrs.field(factory=ModelSettings)
    step: StepName = "generate_score"
    top_logprobs: int | None = attrs.field(default=None, validator=_top_logprobs)


@final
@attrs.frozen(kw_only=True)
class JudgeUsage:
    """Token usage of one or more judge calls (summed when several were made)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None

    def __add__(self, other: JudgeUsage) -> JudgeUsage:
        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return JudgeUsage(**{
            f.name: add(getattr(self, f.name), getattr(other, f.name))
            for f in attrs.fields(JudgeUsage)
        })


@final
@attrs.frozen(kw_only=True)
class JudgeResponse:
    """A judge model's reply: its text, token usage and finish reason.

    ``structured_output`` says how the adapter held the reply to the request's schema (an
    OpenAI-compatible server may have negotiated ``"json_object"`` or ``"prompt"`` for a
    native request); ``None`` when the adapter does not say. It is recorded on the judge
    execution.

    ``logprobs`` holds each generated token's log-probability and its likeliest alternatives
    when the request asked for them (:attr:`JudgeRequest.top_logprobs`) and the provider gave
    them; ``None`` otherwise. The judge cache keeps them, so a warm re-run reads the same.
    """

    text: str = attrs.field(validator=_reply_text)
    usage: JudgeUsage = attrs.field(factory=JudgeUsage)
    finish_reason: str | None = None
    model_id: str | None = None
    structured_output: StructuredOutputMode | None = attrs.field(
        default=None, validator=_reply_mode
    )
    # Checked, not converted: the judge loop copies responses with fast_replace, which a
    # converter would refuse.
    logprobs: tuple[TokenLogprob, ...] | None = attrs.field(default=None, validator=_logprobs)


# A stored reply's two values, built by setting their slots (fast_init): stored_reply checks
# every field JudgeResponse's validators check, on exact types, before building one.
_new_usage: Final = fast_init(JudgeUsage)
_new_reply: Final = fast_init(JudgeResponse, checked_by_caller=True)


def stored_reply(
    *,
    text: object,
    input_tokens: object,
    output_tokens: object,
    total_tokens: object,
    reasoning_tokens: object,
    cached_input_tokens: object,
    finish_reason: object,
    model_id: object,
    structured_output: object,
) -> JudgeResponse | None:
    """A reply a judge cache stored, from its fields as read back, or ``None`` when a field
    holds what no reply does (the cache then counts the entry as unreadable).

    It builds what ``JudgeResponse(text=..., usage=JudgeUsage(...), ...)`` builds, several
    times faster, for a cache that reads replies back on every hit of a warm re-run. Checked
    on exact types: ``text`` a ``str``; each token count ``None`` or an ``int`` (not a
    ``bool``); ``finish_reason`` and ``model_id`` ``None`` or a ``str``;
    ``structured_output`` ``None`` or a ``str``, where a mode this version does not know
    (stored by a newer one) reads as ``None``: the reply is still good, its mode unknown. A
    reply with log-probabilities is built with ``JudgeResponse`` itself.

    >>> reply = stored_reply(
    ...     text="yes", input_tokens=12, output_tokens=1, total_tokens=None,
    ...     reasoning_tokens=None, cached_input_tokens=None, finish_reason="stop",
    ...     model_id=None, structured_output="native")
    >>> reply == JudgeResponse(text="yes", usage=JudgeUsage(input_tokens=12, output_tokens=1),
    ...                        finish_reason="stop", structured_output="native")
    True
    >>> stored_reply(
    ...     text="yes", input_tokens=True, output_tokens=1, total_tokens=None,
    ...     reasoning_tokens=None, cached_input_tokens=None, finish_reason=None,
    ...     model_id=None, structured_output=None) is None
    True
    """
    if type(text) is not str:
        return None
    for count in (input_tokens, output_tokens, total_tokens, reasoning_tokens,
                  cached_input_tokens):
        if count is not None and type(count) is not int:
            return None
    if (finish_reason is not None and type(finish_reason) is not str) or (
        model_id is not None and type(model_id) is not str
    ):
        return None
    mode = None
    if structured_output is not None:
        if type(structured_output) is not str:
            return None
        mode = structured_output if structured_output in _MODES else None
    usage = _new_usage(input_tokens, output_tokens, total_tokens, reasoning_tokens,
                       cached_input_tokens)
    return _new_reply(text, usage, finish_reason, model_id, mode, None)


def reply_with_text(reply: JudgeResponse, text: object) -> JudgeResponse | None:
    """``reply`` with ``text`` in place of its own, or ``None`` when ``text`` is not a ``str``.

    It builds what ``attrs.evolve(reply, text=text)`` builds, several times faster than that
    or :func:`stored_reply`, for a cache whose rows differ from one another in their text
    only (it reads the rest of a row once and keeps that reply).

    >>> reply = stored_reply(
    ...     text="yes", input_tokens=12, output_tokens=1, total_tokens=None,
    ...     reasoning_tokens=None, cached_input_tokens=None, finish_reason="stop",
    ...     model_id=None, structured_output=None)
    >>> reply_with_text(reply, "no") == attrs.evolve(reply, text="no")
    True
    >>> reply_with_text(reply, b"no") is None
    True
    """
    if type(text) is not str:
        return None
    return _new_reply(text, reply.usage, reply.finish_reason, reply.model_id,
                      reply.structured_output, reply.logprobs)


@runtime_checkable
class JudgeModel(Protocol):
    """The judge model port: answers one :class:`JudgeRequest`.

    Contract: ``generate`` returns ``Success(JudgeResponse)`` or ``Failure(JudgeError)`` and
    never raises for a provider, network or payload problem (cancellation still propagates).
    ``model_id`` and ``provider`` are reported in telemetry; ``supports_structured_output``
    says whether the model honours a native JSON schema (``JudgeRequest.native_schema``).

    A model may also offer two optional properties the core reads:

    - ``default_output_cap`` (an ``int`` >= 1): the output cap of steps that set none and run
      without a run-wide cap (``AnthropicModel(max_tokens=...)`` does); without it they get
      1,024. Either way the request arrives with the cap in ``settings.max_output_tokens``,
      and the model must send it (:attr:`ModelSettings.output_cap`).
    - ``cache_identity`` (a ``str``): where the answers come from besides ``provider`` and
      ``model_id`` — the HTTP judges give their base URL and a digest of the headers that
      change the reply (never a credential); a local model would give its model file. It is
      part of the judge cache key, so two endpoints serving one model id never share
      entries. A ``cache_identity`` that raises or is not a ``str`` keeps the model's calls
      out of the cache altogether (asked every time, never stored).
    - ``batch_api`` (``True``): the model answers through a provider's batch API; its calls
      are priced, and reserved by a budget, at :meth:`ModelPrice.for_batch` prices.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def supports_structured_output(self) -> bool: ...

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]: ...


def model_default_cap(model: object) -> int | None:
    """A model's ``default_output_cap`` when it offers a usable one (internal)."""
    try:
        value = getattr(model, "default_output_cap", None)
    except Exception:  # noqa: BLE001 - a user's model is a boundary: a raising property is none
        return None
    # None (most models) without is_int's call: every prompt step's execution asks.
    return value if value is not None and is_int(value) and value >= 1 else None


@runtime_checkable
class SchemaChecker(Protocol):
    """A judge model that can tell, when a scorer is built, whether it can answer a schema.

    An optional capability of a :class:`JudgeModel`. When a prompt step is added to a scorer,
    the core resolves the step's judge; if that model has ``check_output_schema``, it is
    called with the JSON schema the step's reply must satisfy (the step's ``output_schema``,
    the one generated from its ``output_type``, or the default ``{"score": number}`` schema of
    a :class:`~scorecore.ScorePromptStep`; a ``generate_reason`` step asks for plain text and
    is not checked). It returns ``None`` when the model can answer the schema, or a sentence
    saying what it cannot answer; the step is then refused with a
    :class:`~scorecore.ScorerDefinitionError` quoting it, before anything runs.

    Contract: pure and quick (no model call): a local model converting the schema into a
    decoding grammar is the use case (``scorecore_adapters.local.LocalModel``).

    >>> class NoArrays:
    ...     def check_output_schema(self, schema, /):
    ...         return "it cannot answer arrays" if "array" in repr(schema) else None
    >>> isinstance(NoArrays(), SchemaChecker)
    True
    """

    def check_output_schema(self, schema: Mapping[str, Any], /) -> str | None: ...


@final
@attrs.frozen(kw_only=True)
class Abort:
    """Returned by an input or output processor to stop the judge call with a reason."""

    reason: str


@final
@attrs.frozen(kw_only=True)
class Retry:
    """An error processor's answer: retry the failed judge call after ``after`` seconds."""

    after: float = attrs.field(default=0.0)

    @after.validator
    def _check(self, _attr: object, value: float) -> None:
        try:
            usable = is_number(value) and math.isfinite(value) and value >= 0
        except OverflowError:  # an int too large for a float
            usable = False
        if not usable:
            raise misuse("Retry.after", value, "must be a finite number >= 0")


class InputProcessor(Protocol):
    """Transforms the judge's messages before the call (redact, truncate …).

    Contract: return the messages to send (possibly unchanged) or :class:`Abort` to fail the
    step with a reason; may be sync or async. An exception fails the step too.
    """

    def process_input(
        self, messages: tuple[JudgeMessage, ...], /
    ) -> Sequence[JudgeMessage] | Abort | Awaitable[Sequence[JudgeMessage] | Abort]: ...


class OutputProcessor(Protocol):
    """Transforms (or rejects) the judge's raw reply text before it is parsed.

    Contract: return the text to use or :class:`Abort`; may be sync or async.
    """

    def process_output(self, text: str, /) -> str | Abort | Awaitable[str | Abort]: ...


class ErrorProcessor(Protocol):
    """Decides whether a failed judge call is retried.

    Contract: given the error, the number of retries already made for this judge call (shared
    by all processors of the call; 0 before the first retry) and the request, return
    :class:`Retry` (wait ``after`` seconds, then retry) or ``None`` (do not retry). The
    processor must not sleep itself: the core waits through the runtime's ``Sleep`` port.
    An exception is reported in telemetry (the execution's ``processor_errors``) and treated
    as ``None``; when no processor asks to retry, the failure's stop reason is then
    ``"processor_raised"``.

    A processor may also offer a pure ``would_retry(error) -> bool`` (see
    :class:`RetryClassifier`): it tells the core why retrying stopped (``"processor_limit"``
    or ``"budget_spent"`` rather than ``"not_retryable"``) for errors it retries although
    their ``is_retryable`` flag is false.
    """

    def process_error(
        self, error: JudgeError, retry_count: int, request: JudgeRequest, /
    ) -> Retry | Awaitable[Retry | None] | None: ...


@runtime_checkable
class RetryClassifier(Protocol):
    """An error processor that can say, without side effects, whether it retries an error.

    Contract: ``would_retry(error)`` is ``True`` when the processor would answer
    :class:`Retry` for ``error`` had neither its own limit nor the judge's budget been
    reached. It must not call hooks, delay functions or anything else with effects; the core
    asks it only to name why retrying stopped. Without it the core reads ``error.is_retryable``.
    """

    def would_retry(self, error: JudgeError, /) -> bool: ...
