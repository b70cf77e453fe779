"""The values of a scorer run: the run, contexts, results, judge telemetry, not-scorable."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Generic, Literal, Self, TypeAlias, TypeGuard, final

import attrs
from typing_extensions import TypeVar

from scorecore._core._causes import JudgeExecutionError, RunFailureCause
from scorecore._core._errors import ScorecoreError
from scorecore._core._judge import JudgeUsage, StepName, StructuredOutputMode
from scorecore._core._redact import redacted_repr
from scorecore._core._reprs import short_repr

__all__ = [
    "CalculateScoreContext",
    "CompositeDetails",
    "JudgeExecution",
    "NotScorable",
    "PartialResult",
    "ReasonContext",
    "ScoreResult",
    "ScorerRun",
    "ScorerRunError",
    "StepContext",
    "StepName",
    "StepResults",
    "is_not_scorable",
    "not_scorable",
]

# The type parameters of runs, results and scorers, shared by the kernel's modules. Any (not
# object) as the defaults: an unannotated Scorer is Mastra's untyped scorer, whose steps may
# read any attribute of the run; object would reject every such read.
In = TypeVar("In", default=Any)
Out = TypeVar("Out", default=Any)
P = TypeVar("P", default=Any)
A = TypeVar("A", default=Any)
J = TypeVar("J", default=Any)  # a ScorePromptStep's judge output (its output_type)
D = TypeVar("D", bound="CompositeDetails")

STEP_NAMES: tuple[StepName, ...] = ("preprocess", "analyze", "generate_score", "generate_reason")


@final
@attrs.frozen(kw_only=True)
class ScorerRun(Generic[In, Out]):
    """One thing to score: ``input``, ``output`` and what came with them.

    ``run_id`` is ``None`` only before ``prepare_run``; steps always see it set. The ``extra``
    mapping given to ``Scorer.run`` (any other keys of the run) is kept in ``extra``.

    >>> ScorerRun(input="q", output="a", run_id="r1").output
    'a'
    """

    input: In
    output: Out
    run_id: str | None = None
    ground_truth: Any = None
    # Request contexts and extra keys often carry credentials: never show them in a repr.
    request_context: Mapping[str, Any] | None = attrs.field(default=None, repr=redacted_repr)
    expected_trajectory: Any = None
    extra: Mapping[str, Any] = attrs.field(factory=dict, repr=redacted_repr)


RUN_ARGUMENTS: frozenset[str] = frozenset(
    {f.name for f in attrs.fields(ScorerRun) if f.name != "extra"} | {"runtime"})
"""The arguments ``Scorer.run`` takes by name besides ``extra``: no extra key may repeat one."""


def run_extra(extra: object, where: str) -> dict[str, object]:
    """A copy of the ``extra`` mapping given to ``where`` (``"Scorer.run"``), checked.

    Raises:
        TypeError: ``extra`` is not a mapping, a key is not a ``str``, or a key is one of
            :data:`RUN_ARGUMENTS` (give that argument itself).

    >>> run_extra({"source": "ci"}, "Scorer.run")
    {'source': 'ci'}
    """
    if type(extra) is not dict and not isinstance(extra, Mapping):  # a dict: no ABC lookup
        raise TypeError(f"{where}: extra must be a mapping of str keys, got {short_repr(extra)}")
    copied = dict(extra)
    for key in copied:
        if not isinstance(key, str):
            raise TypeError(f"{where}: extra keys must be str, got {short_repr(key)}")
        if key in RUN_ARGUMENTS:
            raise TypeError(f"{where}: extra must not contain {key!r}: give {key}= to "
                            f"{where}() itself")
    return copied


@final
@attrs.frozen(kw_only=True)
class StepResults(Generic[P, A]):
    """Results of the steps already run; a step not (yet) run reads as ``None``."""

    preprocess_step_result: P
    analyze_step_result: A


@final
@attrs.frozen(kw_only=True)
class StepContext(Generic[In, Out, P, A]):
    """What a ``preprocess``, ``analyze`` or ``generate_score`` step receives."""

    run: ScorerRun[In, Out]
    results: StepResults[P, A]


@final
@attrs.frozen(kw_only=True)
class ReasonContext(Generic[In, Out, P, A]):
    """What a ``generate_reason`` step receives: the step context plus the ``score``."""

    run: ScorerRun[In, Out]
    results: StepResults[P, A]
    score: float


@final
@attrs.frozen(kw_only=True)
class CalculateScoreContext(Generic[In, Out, P, A, J]):
    """What ``ScorePromptStep.calculate_score`` receives: the context plus ``judge_output``.

    ``judge_output`` is the judge's reply, parsed and validated against the step's schema and
    structured into the step's ``output_type`` (``J``) when it has one.
    """

    run: ScorerRun[In, Out]
    results: StepResults[P, A]
    judge_output: J


JUDGE_UNDECIDED_KINDS: Final[frozenset[str]] = frozenset({
    "example_echo", "low_confidence", "no_logprobs", "panel_tie", "position_bias",
})
"""The :attr:`NotScorable.kind` values saying that the *judge* could not decide, not that the
run does not apply: a verdict that followed the answers' position (``"position_bias"``), a
panel split evenly (``"panel_tie"``), a judge below the confidence asked for
(``"low_confidence"``), a reply restating the prompt's worked example (``"example_echo"``),
a judge whose reply had no verdict probabilities to score from (``"no_logprobs"``).
A batch's verdict counts such runs against its failure budget, as it counts failed runs."""


@final
@attrs.frozen(kw_only=True)
class NotScorable:
    """A step's answer meaning "this run cannot be scored"; see :func:`not_scorable`.

    In a result, ``step`` names the step that returned it. ``kind`` is a stable tag of why,
    set by built-in scorers. The judge's kinds say that the *judge* could not decide, so a
    batch counts the run against its failure budget, as a failed run: ``"position_bias"``
    (a pairwise verdict that followed the answers' position), ``"panel_tie"`` (a panel's
    vote split evenly), ``"low_confidence"`` (a judge below the confidence asked for),
    ``"example_echo"`` (a reply restating the prompt's worked example). ``None`` (a step's
    own :func:`not_scorable`) means the run does not apply: it never counts as a failure.
    """

    reason: str | None = None
    step: StepName | None = None
    kind: str | None = None

    @property
    def judge_undecided(self) -> bool:
        """Whether the judge could not decide (``kind`` in ``JUDGE_UNDECIDED_KINDS``)."""
        return self.kind in JUDGE_UNDECIDED_KINDS


def not_scorable(reason: str | None = None) -> NotScorable:
    """Return this from any function step to end the pipeline without a score.

    The result then has ``not_scorable`` (the step and reason) and ``score is None``; the
    results of earlier steps are kept.

    >>> not_scorable("no ground truth")
    NotScorable(reason='no ground truth', step=None, kind=None)
    """
    return NotScorable(reason=reason)


def is_not_scorable(value: object) -> TypeGuard[NotScorable]:
    """Tell whether a value is a not-scorable marker.

    >>> is_not_scorable(not_scorable()), is_not_scorable(0.5)
    (True, False)
    """
    return isinstance(value, NotScorable)


@final
@attrs.frozen(kw_only=True)
class JudgeExecution:
    """Telemetry of one prompt step's judge execution.

    Attributes:
        status: ``"success"`` or ``"failed"``.
        prompt: the prompt the step created.
        output: the step's result from the judge (structured object, score, or reason text).
        model_id: the judge model's id.
        provider: the judge model's provider.
        usage: token usage summed over every call.
        attempt_count: format attempts (1, or 2 when the structured-output fallback ran or a
            reply restated the worked example).
        model_call_count: every call to the model, processor retries included.
        duration: seconds, measured with the runtime's clock.
        finish_reason: the last reply's finish reason.
        raw_output: the last raw reply text.
        error: why it failed, for a failed execution.
        waits: every retry wait in seconds, in order.
        processor_errors: error processors that raised (they are ignored), in order.
        cost_usd: what the calls cost under the run's ``Pricing`` (retries and the format
            fallback included, cache hits free); ``None`` without a price or token counts.
        saved_usd: what the cache hits would have cost, plus what a batch API judge saved
            against the direct price; ``None`` without a price.
        cache_hits: replies read from the judge cache (or shared with an identical call).
        cache_misses: cache lookups that asked the judge.
        structured_output: how the last reply was held to the step's schema: what the
            adapter reported (``"json_schema"``, ``"json_object"``, ``"tool"``, ``"grammar"``,
            ``"prompt"``), else ``"prompt"`` when the schema was written into the prompt and
            ``"native"`` when the model's native structured output was asked for; ``None``
            for a plain-text step or when no reply came.
    """

    status: Literal["success", "failed"]
    prompt: str
    model_id: str
    provider: str
    attempt_count: int
    model_call_count: int
    duration: float
    output: Any = None
    usage: JudgeUsage | None = None
    finish_reason: str | None = None
    raw_output: str | None = None
    error: JudgeExecutionError | None = None
    waits: tuple[float, ...] = ()
    processor_errors: tuple[str, ...] = ()
    cost_usd: float | None = None
    saved_usd: float | None = None
    cache_hits: int = 0
    cache_misses: int = 0
    structured_output: StructuredOutputMode | None = None


class CompositeDetails(abc.ABC):
    """What a scorer made of scorers keeps on its result (``ScoreResult.details``).

    The kernel knows only this base. Each family of composite scorers (a panel, a pairwise
    judgement, a cascade) subclasses it where the scorer is defined, with a ``kind`` (the key
    Mastra's JSON and a stored row's ``metadata`` keep the details under) and its JSON both
    ways; defining the subclass registers its ``kind``, so :func:`~scorecore.from_mastra_json`
    structures those details back once the module defining them is imported.

    >>> @attrs.frozen(kw_only=True)
    ... class Tier(CompositeDetails):
    ...     kind: ClassVar[str] = "doctest_tier"
    ...     tier: str
    ...     def to_json(self) -> dict[str, object]:
    ...         return {"tier": self.tier}
    ...     @classmethod
    ...     def from_json(cls, data: Mapping[str, Any]) -> Tier:
    ...         return cls(tier=data["tier"])
    >>> result = ScoreResult(run=ScorerRun(input="q", output="a"), score=1.0,
    ...                      details=Tier(tier="cheap"))
    >>> result.details_as(Tier)
    Tier(tier='cheap')
    """

    __slots__ = ()
    kind: ClassVar[str]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if not isinstance(kind, str):
            return  # an intermediate base: no JSON key of its own
        known = _DETAILS_KINDS.get(kind)
        # attrs rebuilds a slotted class under the same name: that is the same family again.
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise TypeError(f"composite details kind {kind!r} is already {known.__qualname__}")
        _DETAILS_KINDS[kind] = cls

    @abc.abstractmethod
    def to_json(self) -> dict[str, object]:
        """These details as JSON (camelCase keys, as Mastra's result JSON)."""

    @classmethod
    @abc.abstractmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """The details back from :meth:`to_json`'s JSON.

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not such details' JSON.
        """


_DETAILS_KINDS: dict[str, type[CompositeDetails]] = {}


def details_kinds() -> Mapping[str, type[CompositeDetails]]:
    """Every :class:`CompositeDetails` family defined so far, by ``kind``."""
    return _DETAILS_KINDS


@final
@attrs.frozen(kw_only=True)
class ScoreResult(Generic[In, Out, P, A]):
    """The result of a scorer run.

    Exactly one of ``score`` and ``not_scorable`` is set on success. Step results and prompts
    of steps that did not run (or are function steps, for prompts) are ``None``. ``judge``
    maps each prompt step to its executions. ``P`` and ``A`` are the preprocess and analyze
    result types of the scorer (``Any`` unless known). ``details`` is what a scorer made of
    scorers (a panel, a pairwise judgement) adds: read it with :meth:`details_as`.
    """

    run: ScorerRun[In, Out]
    score: float | None = None
    not_scorable: NotScorable | None = None
    reason: str | None = None
    preprocess_step_result: P | None = None
    preprocess_prompt: str | None = None
    analyze_step_result: A | None = None
    analyze_prompt: str | None = None
    generate_score_prompt: str | None = None
    generate_reason_prompt: str | None = None
    judge: Mapping[StepName, tuple[JudgeExecution, ...]] = attrs.field(factory=dict)
    details: CompositeDetails | None = None
    confidence: float | None = None
    """How sure the judge was of the score, from 0 to 1: the chosen verdict's probability
    (``ScorePromptStep(score_from="probabilities")``), the samples' agreement
    (``samples=k``), or a cascade's deciding tier's; ``None`` when nothing measured it."""

    @property
    def run_id(self) -> str:
        """The run's id (always set once a run has started)."""
        return self.run.run_id or ""

    def details_as(self, kind: type[D]) -> D | None:
        """The details of a scorer made of scorers when they are a ``kind``, else ``None``.

        ``kind`` is the family's details type: ``result.details_as(PanelResult)`` reads a
        panel's members (:class:`scorecore.scorers.PanelResult`), ``PairwiseResult`` a pairwise
        verdict.

        >>> ScoreResult(run=ScorerRun(input="q", output="a"), score=1.0).details_as(
        ...     CompositeDetails) is None
        True
        """
        return self.details if isinstance(self.details, kind) else None


PartialResult: TypeAlias = ScoreResult
"""What a failed run gathered before it failed (``ScorerRunError.partial``)."""


class ScorerRunError(ScorecoreError):
    """A scorer run failed. Returned as ``Failure(ScorerRunError)``; ``raise result.failure()``.

    ``result.unwrap()`` raises returns' ``UnwrapFailedError`` chained from this error, so the
    traceback shows this error's message first.

    Attributes:
        scorer_id: the scorer that failed.
        failed_step: the step that failed (``"prepare_run"`` or ``"input"`` before any step).
        completed_steps: the steps that finished before the failure, in order.
        cause: a structured value describing the failure.
        partial: every result gathered before the failure, including failed judge executions.
    """

    def __init__(
        self,
        *,
        scorer_id: str,
        failed_step: StepName | str,
        completed_steps: tuple[StepName, ...],
        cause: RunFailureCause,
        partial: PartialResult,
    ) -> None:
        self.scorer_id = scorer_id
        self.failed_step = failed_step
        self.completed_steps = completed_steps
        self.cause = cause
        self.partial = partial
        super().__init__(self._message())

    def _message(self) -> str:
        done = ", ".join(self.completed_steps) or "none"
        return (
            f"scorer {self.scorer_id!r} failed at step {self.failed_step!r} "
            f"(completed: {done}): {self.cause.describe()}"
        )

    def __reduce__(self) -> tuple[object, ...]:
        # Exceptions with keyword-only constructors need help to pickle (e.g. across processes).
        return (_rebuild_run_error, (self.scorer_id, self.failed_step, self.completed_steps,
                                     self.cause, self.partial))


def _rebuild_run_error(
    scorer_id: str,
    failed_step: str,
    completed_steps: tuple[StepName, ...],
    cause: RunFailureCause,
    partial: PartialResult,
) -> ScorerRunError:
    return ScorerRunError(scorer_id=scorer_id, failed_step=failed_step,
                          completed_steps=completed_steps, cause=cause, partial=partial)


# Tracebacks, reprs and pickles name it by the module users import it from.
ScorerRunError.__module__ = "scorecore"
