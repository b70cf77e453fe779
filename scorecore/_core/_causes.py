"""Structured causes of a failed scorer run (``ScorerRunError.cause``).

Each cause is a value with a :meth:`describe` method and a stable ``kind`` (a class constant,
e.g. ``JudgeFailed.kind == "judge_failed"``; stored rows and judge executions are tagged with
it). Match on its class to handle it::

    match error.cause:
        case JudgeFailed(error=judge_error): ...
        case InvalidScore(value_repr=v): ...

Nothing reads a cause back from its message: :func:`failure_kind` and the reports use the
value's fields.
"""

from __future__ import annotations

import traceback
from typing import Any, ClassVar, Generic, Literal, TypeAlias, final, get_args

import attrs
from typing_extensions import TypeVar

from scorecore._core._failed_call import JudgeError
from scorecore._core._judge import StepName
from scorecore._core._redact import redact_text
from scorecore._core._reprs import short_repr

__all__ = [
    "BudgetExhausted",
    "ExampleEcho",
    "InputMismatch",
    "InvalidScore",
    "InvalidStepValue",
    "JudgeFailed",
    "JudgeOutputInvalid",
    "MemberFailure",
    "PanelFailed",
    "PrepareRunFailed",
    "ProcessorAborted",
    "RunFailureCause",
    "StepFailed",
    "StepRaised",
    "failure_kind",
]

E_co = TypeVar("E_co", covariant=True, default=Any)

JudgeStopReason: TypeAlias = Literal[
    "not_retryable", "budget_spent", "processor_limit", "processor_raised",
    "no_error_processors",
]

_MESSAGE_LIMIT = 1_000
_TRACEBACK_LIMIT = 20_000


def exception_message(exc: BaseException) -> str:
    """``str(exc)`` cut to 1,000 characters; never raises (a user's ``__str__`` may)."""
    try:
        text = str(exc)
    except Exception as error:  # noqa: BLE001 - a user's __str__ is a boundary
        return f"<{type(exc).__qualname__} message; str() raised {type(error).__qualname__}>"
    if len(text) <= _MESSAGE_LIMIT:
        return text
    return f"{text[:_MESSAGE_LIMIT]}… (message of {len(text):,} chars)"


def _traceback_text(exc: BaseException) -> str:
    # traceback already survives a raising __str__ ("<exception str() failed>"); the text is
    # bounded (head and tail kept) because a 2 MB message would otherwise be kept whole.
    try:
        text = "".join(traceback.format_exception(exc))
    except Exception as error:  # noqa: BLE001 - e.g. a user's __notes__ or __cause__ misbehaves
        return f"<traceback not formatted: {type(error).__qualname__}>"
    if len(text) <= _TRACEBACK_LIMIT:
        return text
    half = _TRACEBACK_LIMIT // 2
    return f"{text[:half]}\n… ({len(text) - 2 * half} characters left out) …\n{text[-half:]}"


@final
@attrs.frozen(kw_only=True)
class StepRaised:
    """A user function (step, ``create_prompt``, ``calculate_score``, processor) raised.

    ``exception`` is the original exception object (not serialised); ``traceback`` its text.
    """

    kind: ClassVar[str] = "step_raised"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    exception_type: str
    # Both are shown and stored; an exception may quote a secret (a reply, a connection URL).
    message: str = attrs.field(converter=redact_text)
    traceback: str = attrs.field(default="", converter=redact_text)
    where: str = "step"
    exception: BaseException | None = attrs.field(default=None, eq=False, repr=False)

    @classmethod
    def from_exception(cls, exc: BaseException, *, where: str = "step") -> StepRaised:
        """Capture an exception raised by user code (even one whose ``__str__`` raises).

        The message is cut to 1,000 characters and the traceback to 20,000.
        """
        return cls(
            exception_type=type(exc).__qualname__,
            message=exception_message(exc),
            traceback=_traceback_text(exc),
            where=where,
            exception=exc,
        )

    def describe(self) -> str:
        """One line saying what raised what."""
        return f"{self.where} raised {self.exception_type}: {self.message}"


@final
@attrs.frozen(kw_only=True)
class StepFailed(Generic[E_co]):
    """A function step returned ``Failure(error)``: the run ends, ``error`` kept as it is.

    Distinct from :class:`StepRaised`: the step did not raise, it answered with a failure
    value (a ``returns`` ``Result``). A ``@safe`` step that caught an exception answers
    ``Failure(exception)``; its type and message are then shown like a raised one's.

    >>> cause = StepFailed(step="analyze", error="no words")
    >>> cause.describe()
    "analyze returned Failure('no words')"
    >>> StepFailed(step="preprocess", error=ValueError("bad json")).describe()
    'preprocess returned Failure(ValueError: bad json)'
    """

    kind: ClassVar[str] = "step_failed"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    step: StepName
    error: E_co

    @property
    def error_type(self) -> str:
        """The error's type name (``"str"``, ``"ValueError"``, a user's class …)."""
        return type(self.error).__qualname__

    @property
    def message(self) -> str:
        """The error's readable form: an exception's message, else its bounded repr."""
        if isinstance(self.error, BaseException):
            return exception_message(self.error)
        return short_repr(self.error)

    def describe(self) -> str:
        """One line naming the step and the failure value."""
        if isinstance(self.error, BaseException):
            return f"{self.step} returned Failure({self.error_type}: {self.message})"
        return f"{self.step} returned Failure({self.message})"


@final
@attrs.frozen(kw_only=True)
class PrepareRunFailed:
    """``prepare_run`` raised or returned something that is not a ``ScorerRun``."""

    kind: ClassVar[str] = "prepare_run_failed"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    exception_type: str
    message: str
    traceback: str = ""
    exception: BaseException | None = attrs.field(default=None, eq=False, repr=False)

    def describe(self) -> str:
        """One line naming the failure."""
        return f"prepare_run failed with {self.exception_type}: {self.message}"


@final
@attrs.frozen(kw_only=True)
class InputMismatch:
    """The run's input or output did not match the scorer's declared type.

    ``errors`` lists every bad field, e.g. ``"input.age: invalid value for type int"``.
    """

    kind: ClassVar[str] = "input_mismatch"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    which: Literal["input", "output", "baseline_output"]
    expected_type: str
    errors: tuple[str, ...]

    def describe(self) -> str:
        """One line listing every bad field."""
        return f"{self.which} does not match {self.expected_type}: " + "; ".join(self.errors)


@final
@attrs.frozen(kw_only=True)
class InvalidScore:
    """``generate_score`` produced something that is not a finite real number."""

    kind: ClassVar[str] = "invalid_score"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    value_repr: str
    type_name: str

    def describe(self) -> str:
        """One line naming the bad value."""
        note = " (a bool is not a score)" if self.type_name == "bool" else ""
        return (
            f"generate_score must return a finite real number{note}, "
            f"got {self.value_repr} of type {self.type_name}"
        )


@final
@attrs.frozen(kw_only=True)
class InvalidStepValue:
    """A step or ``create_prompt`` returned a value of the wrong kind (e.g. a non-str reason)."""

    kind: ClassVar[str] = "invalid_step_value"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    what: str
    expected: str
    value_repr: str
    type_name: str

    def describe(self) -> str:
        """One line naming what was expected and what came."""
        got = f"{self.value_repr} of type {self.type_name}"
        return f"{self.what} must be {self.expected}, got {got}"


@final
@attrs.frozen(kw_only=True)
class JudgeFailed:
    """The judge call failed (transport or provider error) and was not, or no longer, retried.

    Attributes:
        error: the last error.
        model_calls: calls made to the model for this step, retries included.
        stop_reason: why retrying stopped: ``"not_retryable"`` (no processor retries this
            error), ``"budget_spent"`` (the judge's ``max_processor_retries`` is used up),
            ``"processor_limit"`` (a processor would retry it but its own limit is reached),
            ``"processor_raised"`` (a processor raised, see the execution's
            ``processor_errors``, and none asked to retry), ``"no_error_processors"`` (a
            retryable error, but no processors are configured).
    """

    kind: ClassVar[str] = "judge_failed"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    error: JudgeError
    model_calls: int
    stop_reason: JudgeStopReason

    def describe(self) -> str:
        """One line with the error, the call count and why retrying stopped."""
        return (
            f"judge call failed after {self.model_calls} call(s) "
            f"({self.stop_reason.replace('_', ' ')}): {self.error.describe()}"
        )


@final
@attrs.frozen(kw_only=True)
class JudgeOutputInvalid:
    """The judge's reply was not valid JSON for the schema, twice (the fallback included).

    ``errors`` lists every problem of the last attempt; ``raw_output`` is its text.
    """

    kind: ClassVar[str] = "judge_output_invalid"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    errors: tuple[str, ...]
    raw_output: str
    attempts: int

    def describe(self) -> str:
        """One line listing the problems."""
        return (
            f"judge output invalid after {self.attempts} attempt(s): " + "; ".join(self.errors)
        )


@final
@attrs.frozen(kw_only=True)
class ExampleEcho:
    """The judge's reply restated the prompt's worked example instead of judging the run, and
    the second attempt (sent without the example) gave no usable reply either: it echoed too,
    or did not parse.

    The run is then not scorable, not failed: the judge could not decide it. The result's
    ``not_scorable.kind`` is ``"example_echo"`` and the step's judge execution keeps this
    cause as its ``error``. ``statements`` are the example's statements a reply restated
    (see :class:`~scorecore.judge.WorkedExample`); ``raw_output`` is that reply.

    >>> ExampleEcho(statements=("The sky is green.",), raw_output="{}", attempts=2).describe()
    "the judge's reply restated the prompt's worked example, not the run, in 2 attempt(s): \
'The sky is green.'"
    """

    kind: ClassVar[str] = "example_echo"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    statements: tuple[str, ...]
    raw_output: str
    attempts: int

    def describe(self) -> str:
        """One line naming the restated statements."""
        said = "; ".join(short_repr(s, 120) for s in self.statements)
        return (f"the judge's reply restated the prompt's worked example, not the run, in "
                f"{self.attempts} attempt(s): {said}")


@final
@attrs.frozen(kw_only=True)
class ProcessorAborted:
    """An input or output processor aborted the judge call with a reason."""

    kind: ClassVar[str] = "processor_aborted"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    stage: Literal["input", "output"]
    processor: str
    reason: str

    def describe(self) -> str:
        """One line naming the processor and its reason."""
        return f"{self.stage} processor {self.processor} aborted: {self.reason}"


@final
@attrs.frozen(kw_only=True)
class BudgetExhausted:
    """A hard :class:`~scorecore.judge.economics.Budget` refused to start a judge call.

    Attributes:
        limit: which limit: ``"max_cost_usd"`` or ``"max_tokens"``.
        limit_value: its value.
        spent: what the batch had spent (USD or tokens).
        in_flight: the worst case of the calls then in flight.
        needed: this call's worst case (what it would have reserved); ``None`` when the model
            has no price.
        model_id: the judge model asked.
        output_tokens: the output cap the call would have been sent with (part of ``needed``).
        overrun: set when the budget stopped because an earlier reply reported more output
            tokens than its cap allowed (``JudgeLedger.overrun``): no call starts after.
    """

    kind: ClassVar[str] = "budget_exhausted"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    limit: Literal["max_cost_usd", "max_tokens"]
    limit_value: float
    spent: float
    in_flight: float
    needed: float | None
    model_id: str
    output_tokens: int | None = None
    overrun: str | None = None

    def describe_limit(self) -> str:
        """Why, without this call's amounts: the same for every call the same limit refused
        (failures are grouped by it); :meth:`describe` goes on with the amounts.

        >>> BudgetExhausted(limit="max_tokens", limit_value=1000, spent=990, in_flight=0,
        ...                 needed=50, model_id="m").describe_limit()
        'judge budget exhausted: max_tokens=1000 (raise it, --budget-tokens, or lower the output \
cap, --max-output-tokens or ModelSettings.max_output_tokens)'
        """
        flag = "--budget-usd" if self.limit == "max_cost_usd" else "--budget-tokens"
        if self.overrun is not None:
            return (f"judge budget stopped: {self.overrun} (a hard budget starts no judge call "
                    f"after that)")
        if self.needed is None:
            return (f"judge budget: no price for model {self.model_id!r}, so a call cannot be "
                    f"kept within {self.limit}={self.limit_value:g} (add its price)")
        return (f"judge budget exhausted: {self.limit}={self.limit_value:g} (raise it, {flag}, or "
                f"lower the output cap, --max-output-tokens or ModelSettings.max_output_tokens)")

    def describe(self) -> str:
        """One line: :meth:`describe_limit`, then the amounts after ``"; "``."""
        head = self.describe_limit()
        if self.overrun is not None:
            return f"{head}; {self.limit}={self.limit_value:g}, spent {self.spent:g}"
        if self.needed is None:
            return head
        cap = "" if self.output_tokens is None else f" with {self.output_tokens:,} output tokens"
        return (
            f"{head}; spent {self.spent:g} + {self.in_flight:g} in flight, the call reserves up "
            f"to {self.needed:g}{cap}"
        )


@final
@attrs.frozen(kw_only=True)
class MemberFailure:
    """One panel member that failed: its id, the step that failed and why (a run's cause)."""

    scorer_id: str
    failed_step: str
    cause: RunFailureCause

    def describe(self) -> str:
        """One line naming the member, the step and the cause."""
        return f"{self.scorer_id} failed at {self.failed_step}: {self.cause.describe()}"


@final
@attrs.frozen(kw_only=True)
class PanelFailed:
    """Fewer members of a panel scored than its ``min_successful`` (replacements included).

    ``failures`` lists every member that failed (a replaced one too), ``not_scorable`` the
    members that found the run not scorable.

    >>> cause = PanelFailed(scored=1, min_successful=2, failures=(MemberFailure(
    ...     scorer_id="judge-b", failed_step="generate_score",
    ...     cause=InvalidScore(value_repr="'high'", type_name="str")),))
    >>> print(cause.describe())
    1 panel member(s) scored, 2 needed; judge-b failed at generate_score: generate_score must \
return a finite real number, got 'high' of type str
    """

    kind: ClassVar[str] = "panel_failed"
    """The stable kind of this cause (rows and judge executions are tagged with it)."""

    scored: int
    min_successful: int
    failures: tuple[MemberFailure, ...] = ()
    not_scorable: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line with the counts and every failed member's cause."""
        parts = [f"{self.scored} panel member(s) scored, {self.min_successful} needed"]
        parts += [failure.describe() for failure in self.failures]
        if self.not_scorable:
            parts.append("not scorable: " + ", ".join(self.not_scorable))
        return "; ".join(parts)


RunFailureCause: TypeAlias = (
    StepRaised | StepFailed | PrepareRunFailed | InputMismatch | InvalidScore | InvalidStepValue
    | JudgeFailed | JudgeOutputInvalid | ProcessorAborted | BudgetExhausted | PanelFailed
    | ExampleEcho
)

JudgeExecutionError: TypeAlias = (
    JudgeFailed | JudgeOutputInvalid | ProcessorAborted | StepRaised | BudgetExhausted
    | ExampleEcho
)


def cause_classes() -> dict[str, type[RunFailureCause]]:
    """Every cause class by its stable ``kind`` (the tags of stored causes).

    >>> cause_classes()["judge_output_invalid"] is JudgeOutputInvalid
    True
    """
    return {cls.kind: cls for cls in get_args(RunFailureCause)}


def failure_kind(cause: RunFailureCause) -> str:
    """A short, stable class of failure for ``cause``, for grouping failures; read from the
    cause's fields, never from its message.

    A judge error by its kind (``"judge network"``, ``"judge server"`` …), a raising step by
    its exception type (``"raised KeyError"``), any other cause by its ``kind`` in words
    (``JudgeOutputInvalid`` gives ``"judge output invalid"``). Rows of failed runs store it in
    ``metadata["cause"]["kind"]``.

    >>> from scorecore import InvalidScore, StepRaised
    >>> failure_kind(StepRaised(exception_type="KeyError", message="'x'"))
    'raised KeyError'
    >>> failure_kind(InvalidScore(value_repr="'high'", type_name="str"))
    'invalid score'
    """
    if isinstance(cause, JudgeFailed):
        return f"judge {cause.error.kind}"
    if isinstance(cause, StepRaised):
        return f"raised {cause.exception_type}"
    return cause.kind.replace("_", " ")
