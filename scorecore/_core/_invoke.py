"""Running one prompt step's judge execution: processors, retries, the format fallback.

This is the one loop in the core that waits: it sleeps only through the runtime's ``Sleep``
port and reads time only from its ``Clock`` port.

A step gets at most two format attempts. A reply that does not parse or validate is retried
with the schema written into the instructions; a valid reply that restates the step's worked
example (:class:`~scorecore.judge.WorkedExample`) is retried as it was sent but without the example,
with a line saying the example is not the data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypeVar

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._backoff import model_retry_wait
from scorecore._core._cache import NO_SCHEMA_KEY
from scorecore._core._causes import (
    ExampleEcho,
    JudgeExecutionError,
    JudgeFailed,
    JudgeOutputInvalid,
    JudgeStopReason,
    ProcessorAborted,
    StepRaised,
    exception_message,
)
from scorecore._core._config import ResolvedJudge
from scorecore._core._echo import WorkedExample
from scorecore._core._failed_call import JudgeError
from scorecore._core._judge import (
    Abort,
    JudgeMessage,
    JudgeRequest,
    JudgeResponse,
    JudgeUsage,
    Retry,
    RetryClassifier,
    StepName,
    StructuredOutputMode,
    with_default_cap,
)
from scorecore._core._logprobs import TokenLogprob
from scorecore._core._meter import NOTHING_SPENT, MeteredExecution
from scorecore._core._output_schema import (
    CompiledSchema,
    Invalid,
    Routing,
    inject,
    read_valid,
    routing_for,
)
from scorecore._core._reprs import short_repr
from scorecore._core._retryability import is_model_retryable
from scorecore._core._runtime import Runtime
from scorecore._core._slot_init import fast_init, fast_replace
from scorecore._core._sync import maybe_await
from scorecore._core._values import JudgeExecution

__all__: list[str] = []  # internal: used by the pipeline only

P = TypeVar("P")
T = TypeVar("T")

# Every field given (by name): set directly, as JudgeExecution checks nothing (fast_init).
new_execution = fast_init(JudgeExecution)
with_output: Final = fast_replace(JudgeExecution, "output")
"""``attrs.evolve(execution, output=value)`` for the run path (a judged score's value)."""
# The warm path builds a request and a message or two per step. The checks of JudgeMessage
# (a role of two, a str content) and JudgeRequest (messages as a tuple) hold for what is
# passed here: the roles are literals, every content is a str (a prompt checked to be one,
# instructions JudgeConfig checked, or the two added together) and the messages a tuple.
_message: Final = fast_init(JudgeMessage, checked_by_caller=True)
_request: Final = fast_init(JudgeRequest, checked_by_caller=True)

# Appended to the prompt of the attempt after an echo. It names no statement of the example:
# quoting it would put back the text the small judge copied.
ECHO_NOTE = ("\n\nJudge only the data given above. Your last reply described a worked "
             "example instead; there is no example here.")


class _Tally:
    """What one execution's attempts gathered (a plain slotted class: one per execution)."""

    __slots__ = ("attempts", "finish_reason", "logprobs", "model_calls", "processor_errors",
                 "raw_output", "structured_output", "usage", "waits")

    def __init__(self) -> None:
        self.model_calls = 0
        self.attempts = 0
        self.usage: JudgeUsage | None = None
        self.waits: list[float] = []
        self.processor_errors: list[str] = []
        self.finish_reason: str | None = None
        self.raw_output: str | None = None
        self.structured_output: StructuredOutputMode | None = None
        self.logprobs: tuple[TokenLogprob, ...] | None = None

    def add_usage(self, usage: JudgeUsage) -> None:
        self.usage = usage if self.usage is None else self.usage + usage


@attrs.frozen
class JudgeOutcome:
    """The step value produced by the judge (or ``None``), the execution telemetry and the
    last reply's log-probabilities (``None`` unless asked for and given)."""

    value: Any
    execution: JudgeExecution
    logprobs: tuple[TokenLogprob, ...] | None = None

    @property
    def failed(self) -> bool:
        """Whether the execution failed."""
        return self.execution.status == "failed"


_new_outcome: Final = fast_init(JudgeOutcome)


def _name(obj: object) -> str:
    return type(obj).__qualname__


async def _apply_processors(
    stage: Literal["input", "output"],
    processors: Sequence[P],
    value: T,
    *,
    method: Callable[[P], Callable[[T], object]],
    accept: Callable[[object], T | None],
    expected: str,
) -> Result[T, JudgeExecutionError]:
    """``value`` through each of the ``stage`` processors in turn: the first that raises,
    aborts or returns what ``accept`` refuses (``None``; ``expected`` says what it must return)
    ends the loop with its cause. ``method`` gives a processor's bound method, called here: a
    lambda calling it would add its own frame to the traceback of what the processor raises."""
    for processor in processors:
        try:
            out = await maybe_await(method(processor)(value))
        except Exception as exc:  # noqa: BLE001 - user processor code is a boundary
            return Failure(
                StepRaised.from_exception(exc, where=f"{stage} processor {_name(processor)}")
            )
        if isinstance(out, Abort):
            return Failure(
                ProcessorAborted(stage=stage, processor=_name(processor), reason=out.reason)
            )
        accepted = accept(out)
        if accepted is None:
            return Failure(StepRaised(
                exception_type="TypeError",
                message=f"must return {expected}, got {short_repr(out)}",
                where=f"{stage} processor {_name(processor)}",
            ))
        value = accepted
    return Success(value)


def _as_messages(out: object) -> tuple[JudgeMessage, ...] | None:
    if not isinstance(out, Sequence) or not all(isinstance(m, JudgeMessage) for m in out):
        return None
    return tuple(out)


def _as_text(out: object) -> str | None:
    return out if isinstance(out, str) else None


async def _apply_input_processors(
    judge: ResolvedJudge, messages: tuple[JudgeMessage, ...]
) -> Result[tuple[JudgeMessage, ...], JudgeExecutionError]:
    return await _apply_processors(
        "input", judge.input_processors, messages, method=lambda p: p.process_input,
        accept=_as_messages, expected="a sequence of JudgeMessage or Abort")


async def _apply_output_processors(
    judge: ResolvedJudge, text: str
) -> Result[str, JudgeExecutionError]:
    return await _apply_processors(
        "output", judge.output_processors, text, method=lambda p: p.process_output,
        accept=_as_text, expected="str or Abort")


async def _decide_retry(
    judge: ResolvedJudge,
    error: JudgeError,
    retry_count: int,
    request: JudgeRequest,
    tally: _Tally,
) -> Result[Retry, JudgeStopReason]:
    """The first processor's ``Retry``, or why no processor retries."""
    raised = False
    for processor in judge.error_processors:
        try:
            decision = await maybe_await(processor.process_error(error, retry_count, request))
        except Exception as exc:  # noqa: BLE001 - a raising processor is reported and ignored
            tally.processor_errors.append(
                f"error processor {_name(processor)} raised {_name(exc)}: "
                f"{exception_message(exc)}"
            )
            raised = True
            continue
        if isinstance(decision, Retry):
            return Success(decision)
    if raised:
        return Failure("processor_raised")
    return Failure("processor_limit" if _would_retry(judge, error, tally) else "not_retryable")


def _would_retry(judge: ResolvedJudge, error: JudgeError, tally: _Tally) -> bool:
    # Names why retrying stopped, never decides a retry: a processor that retries errors its
    # ``is_retryable`` flag calls final (retry_unknown_errors) says so through would_retry.
    for processor in judge.error_processors:
        if not isinstance(processor, RetryClassifier):
            if error.is_retryable:
                return True
            continue
        try:
            if processor.would_retry(error) is True:
                return True
        except Exception as exc:  # noqa: BLE001 - user processor code is a boundary
            tally.processor_errors.append(
                f"error processor {_name(processor)}.would_retry raised {_name(exc)}: "
                f"{exception_message(exc)}"
            )
    return False


async def _generate(
    judge: ResolvedJudge, request: JudgeRequest
) -> Result[JudgeResponse, JudgeError]:
    model = judge.model
    try:
        result = await model.generate(request)
    except Exception as exc:  # noqa: BLE001 - a user's JudgeModel broke its contract
        return Failure(JudgeError(
            kind="unknown",
            message=f"{_name(model)}.generate raised {_name(exc)}: {exception_message(exc)}",
            exception_type=type(exc).__qualname__,
            is_retryable=False,
        ))
    # The port's contract, checked: a hand-written model may answer anything.
    if isinstance(result, Success) and isinstance(result.unwrap(), JudgeResponse):
        return result
    if isinstance(result, Failure) and isinstance(result.failure(), JudgeError):
        return result
    return Failure(JudgeError(
        kind="unknown",
        message=(
            f"{_name(model)}.generate must return Success(JudgeResponse) or "
            f"Failure(JudgeError), got {short_repr(result)}"
        ),
        is_retryable=False,
    ))


async def _generate_with_model_retries(
    judge: ResolvedJudge, request: JudgeRequest, runtime: Runtime, tally: _Tally
) -> Result[JudgeResponse, JudgeError]:
    """One model call, retried ``ModelSettings.max_retries`` times while its error is retryable
    or unclassified (:func:`~scorecore._core._retryability.is_model_retryable`).

    Mastra's model-level retries: they happen before any error processor sees the error.
    """
    retry_index = 0
    while True:
        tally.model_calls += 1
        outcome = await _generate(judge, request)
        if (
            isinstance(outcome, Success)
            or retry_index >= judge.model_settings.max_retries
            or not is_model_retryable(outcome.failure())
        ):
            return outcome
        wait = model_retry_wait(retry_index, outcome.failure(), now=runtime.wall_clock())
        tally.waits.append(wait)
        await runtime.sleep(wait)
        retry_index += 1


async def _call_with_retries(
    judge: ResolvedJudge, request: JudgeRequest, runtime: Runtime, tally: _Tally
) -> JudgeResponse | JudgeFailed:
    # Answers in the judge meter's terms (MeteredExecution.call charges and caches a
    # JudgeResponse); execute_judge turns the meter's answer back into a Result.
    retry_count = 0
    while True:
        outcome = await _generate_with_model_retries(judge, request, runtime, tally)
        if isinstance(outcome, Success):
            response: JudgeResponse = outcome.unwrap()
            return response
        error = outcome.failure()
        stop: JudgeStopReason
        if not judge.error_processors:
            stop = "no_error_processors" if error.is_retryable else "not_retryable"
            return JudgeFailed(error=error, model_calls=tally.model_calls, stop_reason=stop)
        if retry_count >= judge.max_processor_retries:
            # An error that would never be retried stops for that reason, not for the budget.
            # The processors are not asked (their hooks and delays would run for a retry that
            # cannot happen), only whether they would retry it.
            stop = "budget_spent" if _would_retry(judge, error, tally) else "not_retryable"
            return JudgeFailed(error=error, model_calls=tally.model_calls, stop_reason=stop)
        decided = await _decide_retry(judge, error, retry_count, request, tally)
        if isinstance(decided, Failure):
            return JudgeFailed(
                error=error, model_calls=tally.model_calls, stop_reason=decided.failure()
            )
        decision = decided.unwrap()
        tally.waits.append(decision.after)
        await runtime.sleep(decision.after)
        retry_count += 1


@attrs.frozen
class _Rejected:
    """Why a reply is a format failure: schema errors, or the example statements it restated."""

    errors: tuple[str, ...] = ()
    echoed: tuple[str, ...] = ()


def _read_reply(
    text: str, schema: CompiledSchema | None, example: WorkedExample | None, own_text: str
) -> Any:  # noqa: ANN401 - the step's value (its output type), or _Rejected
    """The step's value from the reply's text (plain text without a schema), or why the reply
    is rejected (a :class:`_Rejected`, which no step value is)."""
    value: Any = text
    if schema is not None:
        value = read_valid(text, schema)
        if type(value) is Invalid:
            return _Rejected(errors=value.errors)
    if example is not None:
        echoed = example.echoed_in(text, own_text=own_text)
        if echoed:
            return _Rejected(echoed=echoed)
    return value


def _messages(
    instructions: str, schema: CompiledSchema | None, routing: Routing, asked: str
) -> tuple[JudgeMessage, ...]:
    """An attempt's messages: the system message and ``asked``, the schema written where
    ``routing`` puts it (what :meth:`MeteredExecution.prompt_key` keys)."""
    base = (_message("system", instructions), _message("user", asked))
    return base if schema is None else inject(base, schema, routing)


def _finish(  # noqa: PLR0917 - the execution's parts, passed rather than closed over
    value: Any,  # noqa: ANN401 - the step's parsed reply: its output type, known to the step
    error: JudgeExecutionError | None, prompt: str, judge: ResolvedJudge,
    tally: _Tally, meter: MeteredExecution, runtime: Runtime, started: float,
) -> JudgeOutcome:
    """The outcome of one execution: the step's ``value`` (``None`` when it failed with
    ``error``), which its telemetry records as its output."""
    cost_usd, saved_usd, cache_hits, cache_misses = meter.settlement()
    model = judge.model
    duration = runtime.clock() - started
    waits, processor_errors = tally.waits, tally.processor_errors
    # Every field by position, in JudgeExecution's order (a call naming its 19 fields cost
    # more than building the value): status, prompt, model_id, provider, attempt_count,
    # model_call_count, duration, output, usage, finish_reason, raw_output, error, waits,
    # processor_errors, cost_usd, saved_usd, cache_hits, cache_misses, structured_output.
    # The waits and processor errors are empty on every run without a retry: the empty
    # tuple without a call.
    execution = new_execution(
        "failed" if error is not None else "success", prompt, model.model_id, model.provider,
        tally.attempts, tally.model_calls, duration if duration > 0.0 else 0.0, value,
        tally.usage, tally.finish_reason, tally.raw_output, error,
        tuple(waits) if waits else (), tuple(processor_errors) if processor_errors else (),
        cost_usd, saved_usd, cache_hits, cache_misses, tally.structured_output,
    )
    return _new_outcome(value, execution, tally.logprobs)


async def execute_judge(  # noqa: PLR0915 - the attempts' one loop, each line one reply field
    *,
    judge: ResolvedJudge,
    prompt: str,
    schema: CompiledSchema | None,
    step: StepName,
    runtime: Runtime,
    example: WorkedExample | None = None,
    top_logprobs: int | None = None,
    score_of_reply: bool = False,
) -> JudgeOutcome:
    """Ask the judge for one step: at most one format fallback, retries per error processors.

    With ``example``, a reply that restates it is a format failure too (see the module
    docstring); when no attempt succeeds and one of them echoed, the execution fails with
    :class:`ExampleEcho`. Never raises for anything the model, a processor or the reply did.
    ``top_logprobs`` is sent in the request (see :attr:`JudgeRequest.top_logprobs`); the
    reply's log-probabilities come back on the outcome. With ``score_of_reply`` (a
    :class:`~scorecore.ScorePromptStep` without ``calculate_score``) the step's value, and the
    execution's output, is the reply's ``score`` when the reply is an object.
    """
    started = runtime.clock()
    tally = _Tally()
    meter = MeteredExecution(runtime.meter, judge.model)
    # The cap is written into every request: the adapter sends it, the budget reserves it and
    # the cache key holds it (a reply to another cap is another reply).
    settings = with_default_cap(judge.model_settings, meter.cap)
    routing: Routing = "native" if schema is None else routing_for(
        judge.json_prompt_injection, model_supports_native=judge.model.supports_structured_output)
    # A reply can only fail its format in one way without a schema: restating the example.
    attempts = 1 if schema is None and example is None else 2
    own_text = prompt if example is None else example.own_text(prompt)
    parts = (prompt, judge, tally, meter, runtime, started)  # _finish's, after the value

    last_errors: tuple[str, ...] = ()
    echoed: tuple[str, ...] = ()
    echo_reply = ""
    asked = prompt
    instructions = judge.instructions
    keyed = meter.keyed
    for attempt in range(attempts):
        if attempt:
            if echo_reply:  # the same request again, without the example it restated
                asked = own_text + ECHO_NOTE
            else:
                routing = "system"
        tally.attempts += 1
        native = schema is not None and routing == "native"
        schema_key = NO_SCHEMA_KEY if schema is None else schema.key
        key: str | None = None
        if keyed and top_logprobs is None and not judge.input_processors:
            # The key from the prompt alone (the messages are the system message and the
            # prompt, with the schema's note where the routing puts it): the request itself
            # is only built when the judge is asked.
            system_note = note = ""
            if schema is not None and routing == "system":
                system_note = schema.system_note
            elif schema is not None and routing == "inline":
                note = schema.inline_note
            key = meter.prompt_key(settings, native, schema_key, instructions, system_note,
                                   note, asked)
        request: JudgeRequest | None = None
        if key is None:
            key = ""
            messages = _messages(instructions, schema, routing, asked)
            if judge.input_processors:
                processed = await _apply_input_processors(judge, messages)
                if isinstance(processed, Failure):
                    return _finish(None, processed.failure(), *parts)
                messages = processed.unwrap()
            request = _request(messages, None if schema is None else schema.schema, native,
                               settings, step, top_logprobs)
            if keyed:
                key = meter.key_of(request, schema_key)
        hit = await meter.lookup(key) if key else None
        asked_judge = hit is None
        if hit is not None:
            response = hit
            usage = NOTHING_SPENT  # the execution counts only tokens paid for now
        else:
            if request is None:  # keyed from the prompt: no input processor to run
                request = _request(_messages(instructions, schema, routing, asked),
                                   None if schema is None else schema.schema, native,
                                   settings, step, top_logprobs)
            answer = await meter.ask(
                request, functools.partial(_call_with_retries, judge, request, runtime, tally),
                key)
            if not isinstance(answer, JudgeResponse):
                return _finish(None, answer, *parts)
            response, usage = answer, answer.usage
        if usage is NOTHING_SPENT and tally.usage is None:  # a hit, the first attempt's
            tally.usage = usage
        elif isinstance(usage, JudgeUsage):  # a hand-written model may break this
            tally.add_usage(usage)
        tally.finish_reason = response.finish_reason
        tally.raw_output = text = response.text
        if schema is not None:  # what the adapter says held the reply, else what was asked
            held = response.structured_output
            tally.structured_output = held if held is not None else (
                "native" if native else "prompt")
        tally.logprobs = response.logprobs
        if judge.output_processors:
            processed_text = await _apply_output_processors(judge, text)
            if isinstance(processed_text, Failure):
                return _finish(None, processed_text.failure(), *parts)
            text = processed_text.unwrap()
        value = _read_reply(text, schema, example, own_text)
        if type(value) is _Rejected:  # never cached: the next run asks the judge again
            rejected: _Rejected = value
            if rejected.echoed:
                echoed, echo_reply = rejected.echoed, text
            else:
                last_errors = rejected.errors
            continue
        # Only this attempt's own reply is kept: after a hit, the meter may still hold an
        # earlier attempt's reply, which was rejected and must never be stored.
        if asked_judge and meter.storing:
            await meter.store()
        if score_of_reply:  # what _prompt_step would otherwise copy the execution for
            value = value.get("score") if isinstance(value, dict) else value
        return _finish(value, None, *parts)
    return _finish(None, _no_usable_reply(echoed, echo_reply, last_errors, tally), *parts)


def _no_usable_reply(
    echoed: tuple[str, ...], echo_reply: str, errors: tuple[str, ...], tally: _Tally
) -> ExampleEcho | JudgeOutputInvalid:
    """Why no attempt gave the step its value."""
    if echoed:
        # An echo in either attempt names the cause, even when the other reply did not parse:
        # the judge's only well-formed answer was about the example, so it never judged the run.
        return ExampleEcho(statements=echoed, raw_output=echo_reply, attempts=tally.attempts)
    return JudgeOutputInvalid(
        errors=errors, raw_output=tally.raw_output or "", attempts=tally.attempts)
