"""What a scorer is: its steps as added, and how the run loop will call each one.

The builder (``_scorer``) makes a :class:`_Definition`; the run loop (``_pipeline``) reads it.
Neither imports the other's module for it, which keeps the kernel's import graph acyclic.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal, TypeAlias, cast, final

import attrs
from returns.result import Failure, Result

from scorecore._core._config import (
    JudgeConfig,
    PromptStep,
    ResolvedJudge,
    ScorePromptStep,
    resolve_judge,
)
from scorecore._core._errors import ScorerDefinitionError
from scorecore._core._judge import SchemaChecker, StepName
from scorecore._core._output_schema import SCORE_SCHEMA, CompiledSchema, compile_schema
from scorecore._core._reprs import short_repr
from scorecore._core._runtime import Runtime
from scorecore._core._values import STEP_NAMES, ScoreResult, ScorerRun, ScorerRunError

__all__ = ["StepInfo"]

StepFunction: TypeAlias = Callable[[Any], object]
"""A function step as stored: one context argument, any answer (checked when the run settles it)."""
PrepareRun: TypeAlias = Callable[
    [ScorerRun], "ScorerRun | Awaitable[ScorerRun]"
]
STEP_ORDER: Mapping[str, int] = {name: index for index, name in enumerate(STEP_NAMES)}


_SYNC: Final = 0
_ASYNC: Final = 1
_PROMPT: Final = 2
_SLOTS: Final[dict[StepName, int]] = {
    "preprocess": 0, "analyze": 1, "generate_score": 2, "generate_reason": 3,
}

PlannedStep: TypeAlias = tuple[int, int, Any, "StepInfo"]
"""A step as the run loop calls it: its slot (0-3, pipeline order), how it is called (sync
function, async function, prompt step), the function (for a prompt step, its compiled output
schema or ``None``) and its :class:`StepInfo`."""


_SCORE_SCHEMA: Final = compile_schema(SCORE_SCHEMA)


def _output_schema(info: StepInfo) -> CompiledSchema | None:
    """The schema a prompt step's reply is checked against, compiled (``None``: plain text)."""
    step = cast("PromptStep | ScorePromptStep", info.definition)
    if info.name == "generate_reason":
        return None
    if step.output_schema is None:
        return _SCORE_SCHEMA if isinstance(step, ScorePromptStep) else None
    return compile_schema(step.output_schema)


def plan_step(info: StepInfo) -> PlannedStep:
    """Decide once, when the step is added, how the run loop calls it.

    A prompt step's output schema is compiled here (its JSON text and validator), so that no
    run compiles it again.
    """
    if info.kind == "prompt":
        return (_SLOTS[info.name], _PROMPT, _output_schema(info), info)
    return (_SLOTS[info.name], _ASYNC if info.is_coroutine else _SYNC, info.definition, info)



@final
@attrs.frozen(kw_only=True)
class StepInfo:
    """What a scorer's step is: its name, kind and description (see ``Scorer.steps``)."""

    name: StepName
    kind: Literal["function", "prompt"]
    description: str | None
    definition: StepFunction | PromptStep | ScorePromptStep = attrs.field(
        eq=False, repr=False
    )
    is_coroutine: bool = attrs.field(default=False, eq=False, repr=False)
    judge: ResolvedJudge | None = attrs.field(default=None, eq=False, repr=False)


@final
@attrs.frozen(kw_only=True)
class _Definition:
    id: str
    name: str
    description: str
    judge: JudgeConfig | None
    type: Literal["agent", "trajectory"] | None
    input_type: Any
    output_type: Any
    prepare_run: PrepareRun | None
    version: str | None = None
    steps: tuple[StepInfo, ...] = ()
    # A scorer made of scorers (scorecore._core._composite) runs this instead of the steps.
    runner: Callable[
        [ScorerRun, Runtime], Awaitable[Result[ScoreResult, ScorerRunError]]
    ] | None = attrs.field(default=None, eq=False, repr=False)
    # How the run loop calls each step, decided here once rather than on every run.
    plan: tuple[PlannedStep, ...] = attrs.field(init=False, eq=False, repr=False)

    @plan.default
    def _plan(self) -> tuple[PlannedStep, ...]:
        return tuple(plan_step(info) for info in self.steps)

    def with_step(self, name: StepName, definition: object) -> _Definition:
        where = f"scorer {self.id!r}: .{name}()"
        self.check_position(name, where)
        return attrs.evolve(self, steps=(*self.steps, self._step_info(name, definition, where)))

    def check_position(self, name: StepName, where: str) -> None:
        for existing in self.steps:
            if existing.name == name:
                raise ScorerDefinitionError(
                    f"{where} was added twice; each step may appear once",
                    scorer_id=self.id, step=name,
                )
        if self.steps and STEP_ORDER[self.steps[-1].name] > STEP_ORDER[name]:
            later = self.steps[-1].name
            raise ScorerDefinitionError(
                f"{where} added after .{later}(); steps run in the order preprocess → analyze "
                f"→ generate_score → generate_reason, so add .{name}() before .{later}()",
                scorer_id=self.id, step=name,
            )

    def _step_info(self, name: StepName, definition: object, where: str) -> StepInfo:
        if isinstance(definition, PromptStep | ScorePromptStep):
            if isinstance(definition, ScorePromptStep) and name != "generate_score":
                raise ScorerDefinitionError(
                    f"{where} got a ScorePromptStep, which is only for generate_score; "
                    f"use PromptStep", scorer_id=self.id, step=name, field="step",
                )
            if name == "generate_score" and not isinstance(definition, ScorePromptStep):
                raise ScorerDefinitionError(
                    f"{where} got a PromptStep; a judged score needs a ScorePromptStep (it asks "
                    f"for a number and reads the score from the reply)",
                    scorer_id=self.id, step=name, field="step",
                )
            if name in ("preprocess", "analyze") and definition.output_schema is None:
                raise ScorerDefinitionError(
                    f"{where} is a PromptStep without output_schema; preprocess and analyze "
                    f"prompt steps need a JSON schema for the judge's reply",
                    scorer_id=self.id, step=name, field="output_schema", value=None,
                )
            if name == "generate_reason" and definition.output_schema is not None:
                raise ScorerDefinitionError(
                    f"{where} is a PromptStep with output_type/output_schema; generate_reason "
                    f"asks the judge for plain text, so give it neither",
                    scorer_id=self.id, step=name, field="output_schema",
                    value=definition.output_schema,
                )
            resolved = resolve_judge(self.judge, definition.judge, step=name)
            if isinstance(resolved, Failure):
                raise ScorerDefinitionError(
                    f"scorer {self.id!r}: {resolved.failure()}", scorer_id=self.id, step=name,
                    field="judge",
                )
            judge = resolved.unwrap()
            self._check_schema_with_model(name, definition, judge.model, where)
            return StepInfo(name=name, kind="prompt", description=definition.description,
                            definition=definition, judge=judge)
        if not callable(definition):
            raise ScorerDefinitionError(
                f"{where} needs a function of one context argument or a "
                f"{'ScorePromptStep' if name == 'generate_score' else 'PromptStep'}, "
                f"got {short_repr(definition)}",
                scorer_id=self.id, step=name, field="step", value=definition,
            )
        return StepInfo(
            name=name, kind="function",
            # Only a function's own docstring describes the step; a partial's or a callable
            # object's __doc__ is its class's (functools.partial's own documentation).
            description=_own_doc(definition),
            definition=definition,
            is_coroutine=inspect.iscoroutinefunction(definition),
        )


    def _check_schema_with_model(
        self, name: StepName, step: PromptStep | ScorePromptStep, model: object,
        where: str,
    ) -> None:
        """Ask a judge model with the :class:`SchemaChecker` capability whether it can answer
        the schema the step's reply must satisfy; refuse the step if it cannot."""
        if not isinstance(model, SchemaChecker) or name == "generate_reason":
            return
        schema = step.output_schema
        if schema is None and isinstance(step, ScorePromptStep):
            schema = SCORE_SCHEMA
        if schema is None:
            return
        problem = model.check_output_schema(schema)
        if problem is not None:
            model_id = getattr(model, "model_id", type(model).__qualname__)
            raise ScorerDefinitionError(
                f"{where}: the judge model {model_id!r} cannot answer this step's output "
                f"schema: {problem}",
                scorer_id=self.id, step=name, field="output_schema", value=schema,
            )


def _own_doc(step: object) -> str | None:
    return step.__doc__ if inspect.isfunction(step) or inspect.ismethod(step) else None
