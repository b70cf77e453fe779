"""The scorer: an immutable builder and the pipeline that runs it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, NoReturn, TypeAlias, cast, final, overload

from returns.result import Result
from typing_extensions import TypeVar

from scorecore._core._agent import AgentInput, AgentMessage, AgentOutput
from scorecore._core._config import (
    JudgeConfig,
    PromptStep,
    ScorePromptStep,
)
from scorecore._core._definition import STEP_ORDER, PrepareRun, StepInfo, _Definition
from scorecore._core._errors import ScorerDefinitionError
from scorecore._core._fingerprint import fingerprint
from scorecore._core._pipeline import make_run, run_pipeline
from scorecore._core._reprs import short_repr
from scorecore._core._runtime import DEFAULT_RUNTIME, Runtime
from scorecore._core._sync import call_sync
from scorecore._core._trajectory import Trajectory
from scorecore._core._values import (
    A,
    In,
    NotScorable,
    Out,
    P,
    ReasonContext,
    ScoreResult,
    ScorerRunError,
    StepContext,
    run_extra,
)

__all__ = ["PrepareRun", "Scorer", "ScorerBuilder", "StepInfo", "create_scorer"]

RawOutput: TypeAlias = Mapping[str, object] | Sequence[Mapping[str, object] | AgentMessage]
"""An output given as Mastra's JSON (an object, or a list of messages as objects or values),
structured into the scorer's output type when it runs. A list of anything else is no output
of a scorer typed ``Scorer[..., str]``, so mypy refuses it rather than the run."""

T = TypeVar("T")
E = TypeVar("E")
J = TypeVar("J")
I2 = TypeVar("I2")
O2 = TypeVar("O2")

# What a step function may answer: a value, not_scorable(...), a returns
# Result, or an awaitable of those. See the comment above ScorerBuilder.preprocess. The
# coroutines keep Any, Any (what `async def` gives): with object mypy picks another overload.
_Async: TypeAlias = "Coroutine[Any, Any, T] | NotScorable"
_AsyncResult: TypeAlias = "Coroutine[Any, Any, Result[T, E]] | NotScorable"
_Score: TypeAlias = "float | NotScorable | Result[float | NotScorable, object]"
_Reason: TypeAlias = "str | NotScorable | Result[str | NotScorable, object]"



class _Base:
    __slots__ = ("_definition",)

    def __init__(self, definition: _Definition) -> None:
        self._definition = definition

    @property
    def id(self) -> str:
        """The scorer's id."""
        return self._definition.id

    @property
    def name(self) -> str:
        """The scorer's name (its id unless given)."""
        return self._definition.name

    @property
    def description(self) -> str:
        """The scorer's description."""
        return self._definition.description

    @property
    def judge(self) -> JudgeConfig | None:
        """The scorer-level judge configuration, if any."""
        return self._definition.judge

    @property
    def type(self) -> Literal["agent", "trajectory"] | None:
        """``"agent"`` for agent scorers, ``"trajectory"`` for trajectory scorers, else ``None``."""
        return self._definition.type

    @property
    def steps(self) -> tuple[StepInfo, ...]:
        """The steps added so far, in order."""
        return self._definition.steps

    @property
    def has_judge(self) -> bool:
        """Whether any step asks a judge."""
        return any(s.kind == "prompt" for s in self._definition.steps)

    @property
    def fingerprint(self) -> str:
        """A stable hash of the definition: steps, prompts, schemas, judge, code, ``version``.

        Equal in every process for the same definition; any edit of a step, a prompt, a
        schema, the judge's model or settings, or ``version`` changes it (docs/economics.md).

        >>> a = create_scorer(id="x", description="d").generate_score(lambda ctx: 1.0)
        >>> b = create_scorer(id="x", description="d").generate_score(lambda ctx: 0.0)
        >>> len(a.fingerprint), a.fingerprint == b.fingerprint
        (64, False)
        """
        d = self._definition
        return fingerprint(
            scorer_id=d.id, version=d.version, scorer_type=d.type, input_type=d.input_type,
            output_type=d.output_type, prepare_run=d.prepare_run, steps=d.steps,
        )

    if not TYPE_CHECKING:
        # Without mypy, a step method this type lacks (``.preprocess`` after ``.generate_score``,
        # ``.generate_reason`` before it) must still fail with a ScorerDefinitionError naming
        # the step and why, not an AttributeError. Hidden from mypy, which rejects such calls.
        def __getattr__(self, name: str) -> Callable[..., NoReturn]:
            if name not in STEP_ORDER:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            definition: _Definition = object.__getattribute__(self, "_definition")

            def misplaced(*_args: object, **_kwargs: object) -> NoReturn:
                where = f"scorer {definition.id!r}: .{name}()"
                definition.check_position(name, where)
                raise ScorerDefinitionError(
                    f"{where} needs .generate_score() first; steps run in the order "
                    f"preprocess → analyze → generate_score → generate_reason",
                    scorer_id=definition.id, step=name,
                )

            return misplaced

    def __repr__(self) -> str:
        steps = ", ".join(s.name for s in self._definition.steps)
        return f"{type(self).__name__}(id={self.id!r}, steps=[{steps}])"


@final
class ScorerBuilder(_Base, Generic[In, Out, P, A]):
    """A scorer still missing its ``generate_score`` step.

    Every method returns a new builder; the original stays reusable. ``P`` and ``A`` are the
    types of the preprocess and analyze results (``None`` while those steps are absent).
    """

    __slots__ = ()

    # How these overloads are ordered and shaped:
    # - mypy tries every overload when the argument holds an explicit ``Any`` (an untyped
    #   scorer's context, a ``ctx: Any``) and answers ``Any`` when the matches disagree. A
    #   coroutine function also matches the sync ``T`` overload (``T`` = the coroutine), so the
    #   overloads are shaped to agree on the argument type after inference: every callable
    #   overload returns ``X | NotScorable`` with the awaitable / ``Result`` inside ``X``. mypy
    #   then takes the first match, and an async step keeps its result type.
    # - The price: ``NotScorable`` is stripped from a sync step's result type, not from an
    #   async step's (``async def f(ctx) -> X | NotScorable``: later steps see the union).
    @overload
    def preprocess(
        self, step: Callable[[StepContext[In, Out, None, None]], _AsyncResult[T, E]], /
    ) -> ScorerBuilder[In, Out, T, A]: ...
    @overload
    def preprocess(
        self, step: Callable[[StepContext[In, Out, None, None]], _Async[T]], /
    ) -> ScorerBuilder[In, Out, T, A]: ...
    @overload
    def preprocess(
        self, step: Callable[[StepContext[In, Out, None, None]], Result[T, E] | NotScorable], /
    ) -> ScorerBuilder[In, Out, T, A]: ...
    @overload
    def preprocess(
        self, step: Callable[[StepContext[In, Out, None, None]], T | NotScorable], /
    ) -> ScorerBuilder[In, Out, T, A]: ...
    @overload
    def preprocess(
        self, step: PromptStep[StepContext[In, Out, None, None], T], /
    ) -> ScorerBuilder[In, Out, T, A]: ...
    def preprocess(self, step: object, /) -> ScorerBuilder[In, Out, Any, A]:
        """Add the preprocess step: a function of the context, or a :class:`PromptStep`."""
        return ScorerBuilder(self._definition.with_step("preprocess", step))

    @overload
    def analyze(
        self, step: Callable[[StepContext[In, Out, P, None]], _AsyncResult[T, E]], /
    ) -> ScorerBuilder[In, Out, P, T]: ...
    @overload
    def analyze(
        self, step: Callable[[StepContext[In, Out, P, None]], _Async[T]], /
    ) -> ScorerBuilder[In, Out, P, T]: ...
    @overload
    def analyze(
        self, step: Callable[[StepContext[In, Out, P, None]], Result[T, E] | NotScorable], /
    ) -> ScorerBuilder[In, Out, P, T]: ...
    @overload
    def analyze(
        self, step: Callable[[StepContext[In, Out, P, None]], T | NotScorable], /
    ) -> ScorerBuilder[In, Out, P, T]: ...
    @overload
    def analyze(
        self, step: PromptStep[StepContext[In, Out, P, None], T], /
    ) -> ScorerBuilder[In, Out, P, T]: ...
    def analyze(self, step: object, /) -> ScorerBuilder[In, Out, P, Any]:
        """Add the analyze step: a function of the context, or a :class:`PromptStep`."""
        return ScorerBuilder(self._definition.with_step("analyze", step))

    # Sync first: a wrong function or lambda is then reported against ``float``, not against
    # a Coroutine (the return type is not generic, so the order cannot change what is inferred).
    @overload
    def generate_score(
        self, step: Callable[[StepContext[In, Out, P, A]], _Score], /
    ) -> Scorer[In, Out, P, A]: ...
    @overload
    def generate_score(
        self, step: Callable[[StepContext[In, Out, P, A]], Awaitable[_Score]], /
    ) -> Scorer[In, Out, P, A]: ...
    @overload
    def generate_score(
        self,
        step: ScorePromptStep[In, Out, P, A, J],
        /,
    ) -> Scorer[In, Out, P, A]: ...
    def generate_score(self, step: object, /) -> Scorer[In, Out, P, A]:
        """Add the score step: a function returning a number, or a :class:`ScorePromptStep`.

        The result is a runnable :class:`Scorer`.
        """
        return Scorer(self._definition.with_step("generate_score", step))


class Scorer(_Base, Generic[In, Out, P, A]):
    """A runnable scorer (it has a ``generate_score`` step).

    Annotate with ``Scorer[In, Out]``; the result-type parameters default to ``Any``.

    >>> import anyio
    >>> scorer = (
    ...     create_scorer(id="length", description="Longer answers score higher")
    ...     .preprocess(lambda ctx: len(ctx.run.output))
    ...     .generate_score(lambda ctx: min(1.0, ctx.results.preprocess_step_result / 10))
    ...     .generate_reason(lambda ctx: f"{ctx.results.preprocess_step_result} characters")
    ... )
    >>> result = anyio.run(lambda: scorer.run(input="q", output="hello", run_id="r1"))
    >>> result.unwrap().score, result.unwrap().reason
    (0.5, '5 characters')
    """

    __slots__ = ()

    @overload
    def generate_reason(
        self, step: Callable[[ReasonContext[In, Out, P, A]], _Reason], /
    ) -> Scorer[In, Out, P, A]: ...
    @overload
    def generate_reason(
        self, step: Callable[[ReasonContext[In, Out, P, A]], Awaitable[_Reason]], /
    ) -> Scorer[In, Out, P, A]: ...
    @overload
    def generate_reason(
        self, step: PromptStep[ReasonContext[In, Out, P, A], Any], /
    ) -> Scorer[In, Out, P, A]: ...
    def generate_reason(self, step: object, /) -> Scorer[In, Out, P, A]:
        """Add the reason step: a function returning a ``str``, or a plain-text PromptStep."""
        return Scorer(self._definition.with_step("generate_reason", step))

    async def run(
        self,
        *,
        input: In | Mapping[str, object],
        output: Out | RawOutput,
        ground_truth: object = None,
        run_id: str | None = None,
        request_context: Mapping[str, object] | None = None,
        expected_trajectory: object = None,
        runtime: Runtime | None = None,
        extra: Mapping[str, object] | None = None,
    ) -> Result[ScoreResult[In, Out, P, A], ScorerRunError]:
        """Run the pipeline once; never raises for what a step, a judge or the input did.

        Returns ``Success(ScoreResult)`` (with ``score`` or ``not_scorable``) or
        ``Failure(ScorerRunError)`` naming the failed step, the steps completed, a structured
        cause and the partial results.

        ``extra`` holds any other keys of the run (Mastra carries a run's unknown keys
        through): steps read them as ``ctx.run.extra``. Any other keyword argument is a
        ``TypeError`` (a misspelt ``grund_truth=`` is not silently kept).

        Raises:
            TypeError: an unknown keyword argument, or an ``extra`` that is not a mapping of
                ``str`` keys or repeats an argument of ``run`` (``{"ground_truth": ...}``).
        """
        return await run_pipeline(
            self._definition,
            make_run(input, output, run_id, ground_truth, request_context, expected_trajectory,
                     {} if extra is None else run_extra(extra, "Scorer.run")),
            runtime or DEFAULT_RUNTIME,
        )

    def run_sync(
        self,
        *,
        input: In | Mapping[str, object],
        output: Out | RawOutput,
        ground_truth: object = None,
        run_id: str | None = None,
        request_context: Mapping[str, object] | None = None,
        expected_trajectory: object = None,
        runtime: Runtime | None = None,
        extra: Mapping[str, object] | None = None,
    ) -> Result[ScoreResult[In, Out, P, A], ScorerRunError]:
        """:meth:`run` for scripts and notebooks: run it in a new event loop and return.

        Raises:
            RuntimeError: called while an event loop runs in this thread (async code, a
                Jupyter cell); the message says to ``await scorer.run(...)`` instead.

        >>> scorer = create_scorer(id="one", description="d").generate_score(lambda ctx: 1.0)
        >>> scorer.run_sync(input="q", output="a").unwrap().score
        1.0
        """
        return call_sync(
            lambda: self.run(
                input=input, output=output, ground_truth=ground_truth, run_id=run_id,
                request_context=request_context, expected_trajectory=expected_trajectory,
                runtime=runtime, extra=extra,
            ),
            what=f"scorer {self.id!r}: run_sync()", instead="await scorer.run(...)",
        )


@overload
def create_scorer(
    *,
    id: str,
    description: str,
    name: str | None = None,
    judge: JudgeConfig | None = None,
    type: Literal["agent"],
    prepare_run: PrepareRun | None = None,
    version: str | None = None,
) -> ScorerBuilder[AgentInput, AgentOutput, None, None]: ...
@overload
def create_scorer(
    *,
    id: str,
    description: str,
    name: str | None = None,
    judge: JudgeConfig | None = None,
    type: Literal["trajectory"],
    prepare_run: PrepareRun | None = None,
    version: str | None = None,
) -> ScorerBuilder[AgentInput, Trajectory, None, None]: ...
@overload
def create_scorer(
    *,
    id: str,
    description: str,
    name: str | None = None,
    judge: JudgeConfig | None = None,
    type: None = None,
    input_type: type[I2],
    output_type: type[O2],
    prepare_run: PrepareRun | None = None,
    version: str | None = None,
) -> ScorerBuilder[I2, O2, None, None]: ...
@overload
def create_scorer(
    *,
    id: str,
    description: str,
    name: str | None = None,
    judge: JudgeConfig | None = None,
    type: None = None,
    input_type: type[I2],
    output_type: None = None,
    prepare_run: PrepareRun | None = None,
    version: str | None = None,
) -> ScorerBuilder[I2, Any, None, None]: ...
@overload
def create_scorer(
    *,
    id: str,
    description: str,
    name: str | None = None,
    judge: JudgeConfig | None = None,
    type: None = None,
    input_type: None = None,
    output_type: type[O2],
    prepare_run: PrepareRun | None = None,
    version: str | None = None,
) -> ScorerBuilder[Any, O2, None, None]: ...
@overload
def create_scorer(
    *,
    id: str,
    description: str,
    name: str | None = None,
    judge: JudgeConfig | None = None,
    type: None = None,
    input_type: None = None,
    output_type: None = None,
    prepare_run: PrepareRun | None = None,
    version: str | None = None,
) -> ScorerBuilder[Any, Any, None, None]: ...
def create_scorer(
    *,
    id: str,
    description: str,
    name: str | None = None,
    judge: JudgeConfig | None = None,
    type: Literal["agent", "trajectory"] | None = None,
    input_type: object = None,
    output_type: object = None,
    prepare_run: PrepareRun | None = None,
    version: str | None = None,
) -> ScorerBuilder[Any, Any, None, None]:
    """Start a scorer definition.

    Args:
        id: the scorer's id; required and non-empty.
        description: what the scorer measures.
        name: a display name; defaults to ``id``.
        judge: the judge used by prompt-object steps.
        type: ``"agent"`` makes the run's input :class:`AgentInput` and output
            :data:`AgentOutput`; ``"trajectory"`` makes the input :class:`AgentInput` and the
            output a ``Trajectory`` (agent messages given as output are turned into one).
        input_type: a class (attrs or dataclass) the run's input is structured into.
        output_type: a class the run's output is structured into.
        prepare_run: transforms the run before any step (see :func:`filter_run`).
        version: your label for this definition (e.g. ``"2"``), part of
            :attr:`Scorer.fingerprint`: bump it for a change the code does not show.

    Raises:
        ScorerDefinitionError: for an empty id or contradictory options.

    >>> builder = create_scorer(id="exact", description="Output equals ground truth")
    >>> scorer = builder.generate_score(lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
    >>> scorer.name
    'exact'
    """
    if not isinstance(cast(object, id), str) or not id.strip():
        raise ScorerDefinitionError(
            f"create_scorer needs a non-empty id, got {short_repr(id)}", field="id", value=id
        )
    if not isinstance(description, str):
        raise ScorerDefinitionError(
            f"scorer {id!r}: description must be a str, got {short_repr(description)}",
            scorer_id=id, field="description", value=description,
        )
    if type not in (None, "agent", "trajectory"):
        raise ScorerDefinitionError(
            f"scorer {id!r}: type must be 'agent', 'trajectory' or None, got {short_repr(type)}",
            scorer_id=id, field="type", value=type,
        )
    if type is not None and (input_type is not None or output_type is not None):
        raise ScorerDefinitionError(
            f"scorer {id!r}: type={type!r} fixes the input and output types; "
            f"do not also pass input_type/output_type", scorer_id=id, field="type", value=type,
        )
    if version is not None and not isinstance(version, str):
        raise ScorerDefinitionError(
            f"scorer {id!r}: version must be a str or None, got {short_repr(version)}",
            scorer_id=id, field="version", value=version,
        )
    if judge is not None and not isinstance(judge, JudgeConfig):
        raise ScorerDefinitionError(
            f"scorer {id!r}: judge must be a JudgeConfig, got {short_repr(judge)}",
            scorer_id=id, field="judge", value=judge,
        )
    if prepare_run is not None and not callable(prepare_run):
        raise ScorerDefinitionError(
            f"scorer {id!r}: prepare_run must be callable, got {short_repr(prepare_run)}",
            scorer_id=id, field="prepare_run", value=prepare_run,
        )
    if type == "agent":
        input_type, output_type = AgentInput, AgentOutput
    elif type == "trajectory":
        input_type, output_type = AgentInput, Trajectory
    return ScorerBuilder(_Definition(
        id=id, name=name or id, description=description, judge=judge, type=type,
        input_type=input_type, output_type=output_type, prepare_run=prepare_run,
        version=version,
    ))
