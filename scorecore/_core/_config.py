"""Judge configuration and prompt-object steps."""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar, final

import attrs
from jsonschema import Draft202012Validator, SchemaError
from returns.result import Failure, Result, Success
from typing_extensions import TypeForm
from typing_extensions import TypeVar as TypeVarDefault

from scorecore._core._echo import WorkedExample
from scorecore._core._errors import ScorerDefinitionError
from scorecore._core._judge import (
    ErrorProcessor,
    InputProcessor,
    JsonPromptInjection,
    JudgeModel,
    ModelSettings,
    OutputProcessor,
    StepName,
)
from scorecore._core._output_schema import TypedSchema, schema_problem
from scorecore._core._reprs import short_repr
from scorecore._core._schema_gen import schema_for_type
from scorecore._core._values import A, CalculateScoreContext, In, J, Out, P, StepContext
from scorecore._core._verdicts import (
    ScoreFrom,
    check_fallback_samples,
    check_samples,
    check_score_from,
    check_verdict_key,
    check_verdicts,
    refuse_unusable,
)
from scorecore.validators import is_int, misuse

__all__ = [
    "DefaultRetryBudgetWarning",
    "JudgeConfig",
    "PromptStep",
    "ScorePromptStep",
    "StepJudge",
]

# The field type of an attrs validator below: each serves fields of any type it checks.
_F = TypeVar("_F")

DEFAULT_MAX_PROCESSOR_RETRIES = 10
def optional_callable(instance: object, attribute: attrs.Attribute[_F], value: _F) -> None:
    """An attrs validator: the field holds a function (or ``None``)."""
    if value is not None and not callable(value):
        raise misuse(f"{type(instance).__name__}.{attribute.name}", value,
                     "must be callable or None")


def _misuse(owner: object, field: str, value: object, problem: str) -> ScorerDefinitionError:
    return misuse(f"{type(owner).__name__}.{field}", value, problem)


def _check_str(owner: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if not isinstance(value, str):
        raise _misuse(owner, attr.name, value, "must be a str")


def _check_optional_str(owner: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if value is not None and not isinstance(value, str):
        raise _misuse(owner, attr.name, value, "must be a str or None")


def _check_settings(owner: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if value is not None and not isinstance(value, ModelSettings):
        raise _misuse(owner, attr.name, value, "must be a ModelSettings or None")


class DefaultRetryBudgetWarning(UserWarning):
    """Error processors are configured without ``max_processor_retries``: the default 10 applies."""


def _check_injection(_inst: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if value is None and not isinstance(_inst, JudgeConfig):
        return  # a StepJudge leaves it to the scorer's judge
    if not (isinstance(value, bool) or value in ("auto", "inline", "system")):
        raise _misuse(_inst, attr.name, value, "must be 'auto', 'inline', 'system', True or False")


def _check_model(value: object, owner: str, *, optional: bool = False) -> bool:
    if optional and value is None:
        return True
    if not isinstance(value, JudgeModel):
        raise ScorerDefinitionError(
            f"{owner}.model must be a JudgeModel (model_id, provider, supports_structured_output "
            f"and an async generate(request)), got {short_repr(value)}",
            field=f"{owner}.model", value=value,
        )
    return True


def _check_retries(_inst: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if value is None:
        return
    if not is_int(value) or value < 0:
        raise _misuse(_inst, attr.name, value, "must be an int >= 0 or None")


def _input_processors(value: Iterable[InputProcessor]) -> tuple[InputProcessor, ...]:
    return _processors(value, "input_processors", "process_input")


def _output_processors(value: Iterable[OutputProcessor]) -> tuple[OutputProcessor, ...]:
    return _processors(value, "output_processors", "process_output")


def _error_processors(value: Iterable[ErrorProcessor]) -> tuple[ErrorProcessor, ...]:
    return _processors(value, "error_processors", "process_error")


P_ = TypeVar("P_")


def _processors(value: Iterable[P_], field: str, method: str) -> tuple[P_, ...]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise ScorerDefinitionError(
            f"{field} must be a list of processors (each with a {method}() method), "
            f"got {short_repr(value)}",
            field=field, value=value,
        )
    items = tuple(value)
    for index, item in enumerate(items):
        if not callable(getattr(item, method, None)):
            raise ScorerDefinitionError(
                f"{field}[{index}] must have a {method}() method, got {short_repr(item)}",
                field=f"{field}[{index}]", value=item,
            )
    return items


@final
@attrs.frozen(kw_only=True)
class JudgeConfig:
    """The scorer-level judge: the model and instructions its prompt steps use.

    Attributes:
        model: the judge model (any :class:`~scorecore.JudgeModel`).
        instructions: the system instructions.
        json_prompt_injection: how the schema reaches the model: ``"auto"`` (native when the
            model supports it, else inline), ``"inline"`` (appended to the user prompt),
            ``"system"``/``True`` (appended to the instructions), ``False`` (native).
        input_processors: transform the messages before each call.
        output_processors: transform or reject the reply text.
        error_processors: decide whether a failed call is retried.
        max_processor_retries: retries per judge call shared by the error processors; when
            processors are set and this is ``None``, 10 (with a warning).
        model_settings: sampling settings passed to the model.

    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> JudgeConfig(model=ScriptedJudge([]), instructions="Be strict.").json_prompt_injection
    'auto'
    """

    model: JudgeModel = attrs.field(validator=lambda _i, _a, v: _check_model(v, "JudgeConfig"))
    instructions: str = attrs.field(validator=_check_str)
    json_prompt_injection: JsonPromptInjection = attrs.field(
        default="auto", validator=_check_injection
    )
    input_processors: tuple[InputProcessor, ...] = attrs.field(
        default=(), converter=_input_processors
    )
    output_processors: tuple[OutputProcessor, ...] = attrs.field(
        default=(), converter=_output_processors
    )
    error_processors: tuple[ErrorProcessor, ...] = attrs.field(
        default=(), converter=_error_processors
    )
    max_processor_retries: int | None = attrs.field(default=None, validator=_check_retries)
    model_settings: ModelSettings | None = attrs.field(default=None, validator=_check_settings)


@final
@attrs.frozen(kw_only=True)
class StepJudge:
    """A step-level judge: every field optional, overriding the scorer's judge field by field.

    Processor lists given here replace the scorer's (they are never concatenated); an omitted
    ``max_processor_retries`` inherits the scorer's.

    >>> StepJudge(instructions="Only check grammar.").model is None
    True
    """

    model: JudgeModel | None = attrs.field(
        default=None, validator=lambda _i, _a, v: _check_model(v, "StepJudge", optional=True)
    )
    instructions: str | None = attrs.field(default=None, validator=_check_optional_str)
    json_prompt_injection: JsonPromptInjection | None = attrs.field(
        default=None, validator=_check_injection
    )
    input_processors: tuple[InputProcessor, ...] | None = attrs.field(
        default=None, converter=attrs.converters.optional(_input_processors)
    )
    output_processors: tuple[OutputProcessor, ...] | None = attrs.field(
        default=None, converter=attrs.converters.optional(_output_processors)
    )
    error_processors: tuple[ErrorProcessor, ...] | None = attrs.field(
        default=None, converter=attrs.converters.optional(_error_processors)
    )
    max_processor_retries: int | None = attrs.field(default=None, validator=_check_retries)
    model_settings: ModelSettings | None = attrs.field(default=None, validator=_check_settings)


def _check_schema(_inst: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise _misuse(_inst, attr.name, value, "must be a JSON schema mapping")
    try:
        Draft202012Validator.check_schema(dict(value))
    except SchemaError as exc:
        raise _misuse(
            _inst, attr.name, value, f"is not a valid JSON schema ({short_repr(exc.message)})"
        ) from exc
    # check_schema runs the schema's own objects (their ==, hash, repr: a user's value whose
    # methods raise) and trips on schemas nested too deeply: the schema is user code here.
    except Exception as exc:  # re-raised as a ScorerDefinitionError: see above
        raise _misuse(
            _inst, attr.name, value,
            f"is not a usable JSON schema (checking it raised {type(exc).__qualname__})",
        ) from exc
    # check_schema accepts schemas that fail on first use (a set inside, mixed key types, a
    # $ref to nowhere): compile and try the schema now, so every run does not fail later.
    problem = schema_problem(value)
    if problem is not None:
        raise _misuse(_inst, attr.name, value, f"is not a usable JSON schema: it {problem}")


def _check_example(_inst: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if value is not None and not isinstance(value, WorkedExample):
        raise _misuse(_inst, attr.name, value, "must be a WorkedExample or None")


def _check_required_callable(_inst: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if not callable(value):
        raise _misuse(_inst, attr.name, value, "must be callable (a function of the context)")


# The context type a prompt step's functions receive. It defaults to Any, so a PromptStep built
# on its own with a lambda stays easy; built inline in a builder call (or from an annotated
# function) it is checked against the step's real context type.
Ctx_contra = TypeVarDefault("Ctx_contra", contravariant=True, default=Any)
# A ScorePromptStep's context types (In, Out, P, A): its create_prompt and calculate_score see
# the same run. The type of the judge's structured reply: ``output_type``'s type, ``Any`` for a
# JSON schema (J: invariant for a ScorePromptStep, whose calculate_score takes it).
Out_co = TypeVarDefault("Out_co", covariant=True, default=Any)


def _output_schema(
    value: Mapping[str, Any] | None,
    step: Any,  # noqa: ANN401 - attrs passes the step being built as an AttrsInstance
) -> Mapping[str, Any] | None:
    # output_type is declared before output_schema, so it is already set (and checked) here.
    output_type = step.output_type
    if output_type is None:
        return value
    # A TypedSchema is the one generated before (attrs.evolve passes it on): generate anew.
    if value is not None and not isinstance(value, TypedSchema):
        raise ScorerDefinitionError(
            f"{type(step).__name__} takes output_type or output_schema, not both: the schema "
            f"is generated from output_type {short_repr(output_type)}",
            field=f"{type(step).__name__}.output_schema", value=value,
        )
    return TypedSchema(schema_for_type(output_type), output_type=output_type)


def _output_schema_field() -> Mapping[str, Any] | None:
    """Both prompt steps' ``output_schema``: the user's schema, checked, or the one generated
    from ``output_type`` (the two steps must agree on which wins and how it is checked)."""
    return attrs.field(
        default=None,
        converter=attrs.Converter(_output_schema, takes_self=True),
        validator=_check_schema,
    )


def _check_output_type(_inst: object, attr: attrs.Attribute[_F], value: _F) -> None:
    if value is not None:
        schema_for_type(value)  # raises a ScorerDefinitionError naming what has no schema


_NO_TYPE: Any = None


@final
@attrs.frozen(kw_only=True)
class PromptStep(Generic[Ctx_contra, Out_co]):
    """A step answered by the judge.

    ``create_prompt(ctx)`` (sync or async) builds the prompt from the step's context. For
    ``preprocess`` and ``analyze`` the judge answers in JSON: give ``output_type`` (an attrs
    class, dataclass, TypedDict, ``Literal``, ``Enum``, or lists/tuples/dicts/unions of those)
    and the step result is the reply structured into that type, or ``output_schema`` (a JSON
    schema) and the step result is the validated JSON. With ``output_type`` the schema sent to
    the judge is generated from the type (its docstrings become descriptions) and can be read
    back as ``output_schema``. For ``generate_reason`` the reply is plain text (a reason step with
    ``output_type`` or ``output_schema`` is refused when added).

    >>> import attrs
    >>> @attrs.frozen
    ... class Claims:
    ...     claims: list[str]
    >>> step = PromptStep(description="Find claims", output_type=Claims,
    ...                   create_prompt=lambda ctx: f"List the claims in: {ctx.run.output}")
    >>> step.output_schema["properties"]
    {'claims': {'type': 'array', 'items': {'type': 'string'}}}
    """

    description: str = attrs.field(validator=_check_str)
    create_prompt: Callable[[Ctx_contra], str | Awaitable[str]] = attrs.field(
        validator=_check_required_callable
    )
    output_type: TypeForm[Out_co] = attrs.field(default=_NO_TYPE, validator=_check_output_type)
    output_schema: Mapping[str, Any] | None = _output_schema_field()
    judge: StepJudge | None = None
    example: WorkedExample | None = attrs.field(default=None, validator=_check_example)
    """The worked example ``create_prompt`` shows the judge, if any: a reply that restates it
    is a format failure (see :class:`~scorecore.judge.WorkedExample`)."""


@final
@attrs.frozen(kw_only=True)
class ScorePromptStep(Generic[In, Out, P, A, J]):
    """A ``generate_score`` step answered by the judge.

    With neither ``output_type`` nor ``output_schema`` the judge is asked for
    ``{"score": number}`` and, with no ``calculate_score``, the score is the reply's ``score``.
    Otherwise ``calculate_score(ctx)`` turns ``ctx.judge_output`` (the validated reply,
    structured into ``output_type`` when one is given) into the score; ``output_type`` needs a
    ``calculate_score``. Either way the score must be a finite number.

    How sure the judge was (``ScoreResult.confidence``), read one of two ways:

    - ``score_from="probabilities"`` with ``verdicts`` (each candidate verdict token and its
      value, e.g. ``{"1": 0.0, "2": 0.25, ..., "5": 1.0}`` or ``{"yes": 1.0, "no": 0.0}``):
      the judge is asked for token log-probabilities and the score is the probability-weighted
      value of the verdicts at the verdict position (G-Eval); the confidence is the chosen
      verdict's probability among the verdicts. With ``verdict_key`` (a reply holding several
      verdicts, each the value of that JSON key, such as ``{"verdicts": [{"verdict": "yes"},
      ...]}``) every verdict is weighed: the score is the mean of their weighted values and
      the confidence the mean of their chosen verdicts' probabilities. A judge that gives no
      log-probabilities, or a reply without a verdict token, leaves the run not scorable
      (kind ``"no_logprobs"``); with ``fallback_samples=k`` (k >= 2) a judge that gives no
      log-probabilities is asked for k samples instead (its first reply is the first
      sample), each scored by the verdict it wrote, as ``samples=k`` scores them.
    - ``samples=k`` (k > 1): the judge is asked k times (sample ``i`` with seed ``seed + i``,
      ``seed`` the step's, or 0; each cached and budgeted as its own call; the temperature is
      the step's ``model_settings``); the score is the mean of the k scores and the
      confidence their agreement: the share of sample pairs whose scores are equal (1.0 when
      all agree, 0.6 for one dissenter among five).

    A step using neither has ``confidence`` ``None``.

    >>> ScorePromptStep(description="Rate", create_prompt=lambda ctx: "Rate it").calculate_score
    >>> ScorePromptStep(description="Rate", create_prompt=lambda ctx: "Rate 1-5",
    ...                 score_from="probabilities", verdicts={"1": 0.0, "5": 1.0}).score_from
    'probabilities'
    """

    description: str = attrs.field(validator=_check_str)
    create_prompt: Callable[[StepContext[In, Out, P, A]], str | Awaitable[str]] = attrs.field(
        validator=_check_required_callable
    )
    output_type: TypeForm[J] = attrs.field(default=_NO_TYPE, validator=_check_output_type)
    output_schema: Mapping[str, Any] | None = _output_schema_field()
    # The context is spelled out with the step's own type parameters (not a separate context
    # parameter) so that mypy types ``ctx.judge_output`` from ``output_type`` in the same call.
    calculate_score: (
        Callable[[CalculateScoreContext[In, Out, P, A, J]], float | Awaitable[float]] | None
    ) = attrs.field(
        default=None, validator=optional_callable
    )
    judge: StepJudge | None = None
    example: WorkedExample | None = attrs.field(default=None, validator=_check_example)
    """The worked example ``create_prompt`` shows the judge, if any (as for a
    :class:`PromptStep`)."""
    score_from: ScoreFrom = attrs.field(default="reply", validator=check_score_from)
    verdicts: Mapping[str, float] | None = attrs.field(default=None, validator=check_verdicts)
    samples: int = attrs.field(default=1, validator=check_samples)
    verdict_key: str | None = attrs.field(default=None, validator=check_verdict_key)
    fallback_samples: int | None = attrs.field(default=None, validator=check_fallback_samples)

    def __attrs_post_init__(self) -> None:
        refuse_unusable(self.score_from, self.verdicts, self.samples,
                        has_calculate=self.calculate_score is not None,
                        fallback_samples=self.fallback_samples, verdict_key=self.verdict_key)
        if self.output_type is not None and self.calculate_score is None:
            raise ScorerDefinitionError(
                f"ScorePromptStep with output_type {short_repr(self.output_type)} needs a "
                f"calculate_score(ctx) that turns ctx.judge_output into the score",
                field="ScorePromptStep.calculate_score", value=None,
            )


@final
@attrs.frozen(kw_only=True)
class ResolvedJudge:
    """A step's effective judge configuration (internal)."""

    model: JudgeModel
    instructions: str
    json_prompt_injection: JsonPromptInjection
    input_processors: tuple[InputProcessor, ...]
    output_processors: tuple[OutputProcessor, ...]
    error_processors: tuple[ErrorProcessor, ...]
    max_processor_retries: int
    model_settings: ModelSettings


def resolve_judge(
    scorer_judge: JudgeConfig | None, step_judge: StepJudge | None, *, step: StepName
) -> Result[ResolvedJudge, str]:
    """Merge a step's judge over the scorer's, field by field; a failure explains what's missing."""

    def pick(name: str) -> Any:  # noqa: ANN401 - the field named: a str, model or processors
        own = getattr(step_judge, name, None) if step_judge is not None else None
        if own is not None:
            return own
        return getattr(scorer_judge, name, None) if scorer_judge is not None else None

    model = pick("model")
    instructions = pick("instructions")
    if model is None or not instructions:
        if model is None and not instructions:
            missing = "neither a judge model nor instructions could be resolved"
        elif model is None:
            missing = "no judge model could be resolved"
        else:
            missing = "no instructions could be resolved (they are missing or empty)"
        return Failure(
            f"step {step!r} is a prompt step but {missing}: give the "
            f"scorer a judge=JudgeConfig(...) or the step a judge=StepJudge(...)"
        )
    error_processors: tuple[ErrorProcessor, ...] = pick("error_processors") or ()
    budget = pick("max_processor_retries")
    if budget is None:
        if error_processors:
            warnings.warn(
                f"step {step!r} has error processors but no max_processor_retries; "
                f"using the default of {DEFAULT_MAX_PROCESSOR_RETRIES}. Set "
                f"max_processor_retries explicitly to choose a budget.",
                DefaultRetryBudgetWarning,
                # resolve_judge ← _step_info ← with_step ← the builder method ← the user's call
                stacklevel=5,
            )
            budget = DEFAULT_MAX_PROCESSOR_RETRIES
        else:
            budget = 0
    injection = pick("json_prompt_injection")
    return Success(ResolvedJudge(
        model=model,
        instructions=instructions,
        json_prompt_injection="auto" if injection is None else injection,
        input_processors=pick("input_processors") or (),
        output_processors=pick("output_processors") or (),
        error_processors=error_processors,
        max_processor_retries=budget,
        model_settings=pick("model_settings") or ModelSettings(),
    ))
