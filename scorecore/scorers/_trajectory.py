"""trajectory_accuracy and trajectory: code scorers of the steps an agent or workflow took."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final, TypedDict, final

import attrs
from returns.result import Failure, Result, Success

from scorecore import AgentInput, NotScorable, Scorer, StepContext, create_scorer, not_scorable
from scorecore.agent import ExpectedStep, Ordering, Trajectory, TrajectoryExpectation
from scorecore.scorers._expectations import expectation_from, laid_over
from scorecore.scorers._rounding import r2_plain
from scorecore.scorers._shapes import refuse
from scorecore.scorers._steps import (
    Comparison,
    Efficiency,
    MissingMeasure,
    ToolFailures,
    blacklist_violations,
    check_efficiency,
    compare_trajectories,
    tool_failures,
)

__all__ = ["TrajectoryWeights", "trajectory", "trajectory_accuracy"]

ExpectedTrajectory = Trajectory | TrajectoryExpectation | Sequence[ExpectedStep | str]
"""What a factory accepts as the expected trajectory."""

_Ctx = StepContext[AgentInput, Trajectory, None, None]


def _factory_expectation(scorer_id: str, value: object) -> TrajectoryExpectation | None:
    if value is None:
        return None
    try:
        return expectation_from(value, "expected_trajectory")
    except (TypeError, ValueError) as exc:
        raise refuse(scorer_id, "expected_trajectory",
                     "a Trajectory, a TrajectoryExpectation or a list of steps", value) from exc


def _item_expectation(ctx: _Ctx) -> TrajectoryExpectation | None:
    value = ctx.run.expected_trajectory
    return None if value is None else expectation_from(value)


class _Accuracy(TypedDict):
    actual_step_names: list[str]
    expected_step_names: list[str]
    ordering: Ordering
    allow_repeated_steps: bool
    comparison: Comparison


def _check_ordering(scorer_id: str, value: object) -> Ordering:
    if value == "strict" or value == "relaxed" or value == "unordered":  # noqa: PLR1714 - narrows
        return value
    raise refuse(scorer_id, "ordering", "'strict', 'relaxed' or 'unordered'", value)


def trajectory_accuracy(
    expected_trajectory: ExpectedTrajectory | None = None,
    *,
    ordering: Ordering = "relaxed",
    allow_repeated_steps: bool = True,
    id: str = "code-trajectory-accuracy-scorer",
) -> Scorer[AgentInput, Trajectory]:
    """How well the steps taken match the expected steps (0 to 1, two decimals).

    ``strict``: position by position, each extra step costing ``0.5 / expected``;
    ``relaxed``: the expected steps in order, others in between free; ``unordered``: each
    expected step anywhere. Without ``allow_repeated_steps`` each repeated name costs 0.1.
    An expected step with a ``step_type`` must also match that type and its ``fields``.

    The expected steps are the factory's, else the run's ``expected_trajectory``; the run's
    ``ordering`` and ``allow_repeated_steps`` win over the factory's (as in Mastra).

    Args:
        expected_trajectory: the expected steps (a Trajectory, an expectation, or a list of
            names / :class:`~scorecore.agent.ExpectedStep`); ``[]`` expects no step at all.
        ordering: how steps are matched when the run does not say.
        allow_repeated_steps: whether a step name may repeat, when the run does not say.
        id: the scorer's id.

    Not scorable when neither the factory nor the run gives expected steps.

    >>> from scorecore.agent import TrajectoryStep
    >>> scorer = trajectory_accuracy(["search", "answer"])
    >>> taken = Trajectory(steps=[TrajectoryStep(name=n) for n in ("search", "fetch", "answer")])
    >>> scorer.run_sync(input={}, output=taken).unwrap().score
    1.0
    """
    own = _factory_expectation(id, expected_trajectory)
    default_ordering = _check_ordering(id, ordering)
    if not isinstance(allow_repeated_steps, bool):
        raise refuse(id, "allow_repeated_steps", "a bool", allow_repeated_steps)

    def preprocess(ctx: _Ctx) -> _Accuracy | NotScorable:
        item = _item_expectation(ctx)
        steps = own.steps if own is not None and own.steps is not None else None
        if steps is None and item is not None:
            steps = item.steps
        if steps is None:
            return not_scorable("no expected trajectory: give expected_trajectory= to the "
                                "factory or expected_trajectory with steps to the run")
        chosen = item.ordering if item is not None and item.ordering else None
        used_ordering = chosen or (own.ordering if own and own.ordering else default_ordering)
        repeats = item.allow_repeated_steps if item is not None else None
        if repeats is None:
            own_repeats = own.allow_repeated_steps if own is not None else None
            repeats = allow_repeated_steps if own_repeats is None else own_repeats
        actual = ctx.run.output.steps
        return {
            "actual_step_names": [s.name for s in actual],
            "expected_step_names": [s.name for s in steps],
            "ordering": used_ordering, "allow_repeated_steps": repeats,
            "comparison": compare_trajectories(actual, steps, ordering=used_ordering,
                                               allow_repeated_steps=repeats),
        }

    def reason(ctx: Any) -> str:
        result: _Accuracy = ctx.results.preprocess_step_result
        comparison = result["comparison"]
        text = (f"{comparison.matched_steps} of {comparison.total_expected} expected steps "
                f"matched ({result['ordering']})")
        if comparison.missing_steps:
            text += f"; missing {list(comparison.missing_steps)}"
        if comparison.extra_steps:
            text += f"; extra {list(comparison.extra_steps)}"
        return text

    return (
        create_scorer(id=id, name="Trajectory Accuracy Scorer", type="trajectory",
                      description="How well the steps taken match the expected steps")
        .preprocess(preprocess)
        .generate_score(lambda ctx: ctx.results.preprocess_step_result["comparison"].score)
        .generate_reason(reason)
    )


def _weight(scorer_id: str, name: str, value: object) -> float:
    ok = not isinstance(value, bool) and isinstance(value, int | float)
    if not ok or not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise refuse(scorer_id, f"weights.{name}", "a finite number", value)
    return max(0.0, float(value))  # type: ignore[arg-type]


@final
@attrs.frozen(kw_only=True)
class TrajectoryWeights:
    """How the ``trajectory`` scorer weighs its dimensions (each floored at 0).

    >>> TrajectoryWeights().accuracy
    0.4
    """

    accuracy: float = 0.4
    efficiency: float = 0.3
    tool_failures: float = 0.2
    blacklist: float = 0.1


_DIMENSIONS: Final = ("accuracy", "efficiency", "tool_failures", "blacklist")


@final
@attrs.frozen(kw_only=True)
class TrajectoryLevel:
    """One level of the ``trajectory`` scorer: each active dimension and the nested levels."""

    score: float
    accuracy: Comparison | None = None
    efficiency: Efficiency | None = None
    tool_failures: ToolFailures | None = None
    blacklist_violations: tuple[str, ...] = ()
    nested: tuple[tuple[str, TrajectoryLevel | None], ...] = ()
    """One ``(name, level)`` per expected step with children, in order (``None``: absent)."""

    @property
    def violated(self) -> bool:
        """Whether a blacklisted tool or sequence occurred here or in a nested level."""
        return bool(self.blacklist_violations) or any(
            n is not None and n.violated for _, n in self.nested)


def score_level(trajectory: Trajectory, expectation: TrajectoryExpectation,
                weights: TrajectoryWeights) -> Result[TrajectoryLevel, MissingMeasure]:
    """Score one level: blacklist → 0; else the weighted mean of the active dimensions,
    mixed 70/30 with the mean of the nested levels (two decimals, no epsilon).

    ``Failure(MissingMeasure)`` when a token or duration budget (at any level) cannot be
    measured.
    """
    steps = trajectory.steps
    values: dict[str, float] = {}
    accuracy = efficiency = failures = None
    if expectation.steps is not None:
        accuracy = compare_trajectories(
            steps, expectation.steps, ordering=expectation.ordering or "relaxed",
            allow_repeated_steps=expectation.allow_repeated_steps is not False)
        values["accuracy"] = accuracy.score
    if (expectation.max_steps, expectation.max_total_tokens, expectation.max_total_duration,
            expectation.no_redundant_calls) != (None, None, None, None):
        measured = check_efficiency(trajectory, expectation)
        if isinstance(measured, Failure):
            return Failure(measured.failure())
        efficiency = measured.unwrap()
        values["efficiency"] = efficiency.score
    found = tool_failures(steps, 2 if expectation.max_retries_per_tool is None
                          else expectation.max_retries_per_tool)
    if found.retries:
        failures = found
        values["tool_failures"] = found.score
    violations: tuple[str, ...] = ()
    if expectation.blacklisted_tools or expectation.blacklisted_sequences:
        violations = blacklist_violations(steps, expectation.blacklisted_tools,
                                          expectation.blacklisted_sequences)
        values["blacklist"] = 0.0 if violations else 1.0
    nested: list[tuple[str, TrajectoryLevel | None]] = []
    used: set[int] = set()
    for want in expectation.steps or ():
        if want.children is None:
            continue
        index = next((i for i, s in enumerate(steps) if i not in used and s.name == want.name
                      and (want.step_type is None or s.step_type == want.step_type)), None)
        if index is None:
            nested.append((want.name, None))
            continue
        used.add(index)
        parent = steps[index]
        inner = Trajectory(steps=parent.children, total_duration=parent.duration)
        scored = score_level(inner, want.children, weights)
        if isinstance(scored, Failure):
            return scored
        nested.append((want.name, scored.unwrap()))
    level = TrajectoryLevel(score=0.0, accuracy=accuracy, efficiency=efficiency,
                            tool_failures=failures, blacklist_violations=violations,
                            nested=tuple(nested))
    if level.violated:
        return Success(level)
    total = sum(getattr(weights, name) for name in values)
    score = (sum(getattr(weights, n) / total * v for n, v in values.items())
             if values and total > 0 else 1.0)
    if nested:
        mean = sum(n.score if n is not None else 0.0 for _, n in nested) / len(nested)
        score = 0.7 * score + 0.3 * mean
    return Success(attrs.evolve(level, score=r2_plain(score)))


_CHECKS: Final = ("steps", "max_steps", "max_total_tokens", "max_total_duration",
                   "no_redundant_calls", "blacklisted_tools", "blacklisted_sequences")


def _checks_something(expectation: TrajectoryExpectation) -> bool:
    # ordering, allow_repeated_steps and max_retries_per_tool only qualify other checks.
    return any(getattr(expectation, name) not in (None, ()) or
               (name == "steps" and expectation.steps is not None) for name in _CHECKS)


def _has_any(expectation: TrajectoryExpectation) -> bool:
    # steps=[] is an expectation (no step at all); an empty blacklist is none.
    return any(getattr(expectation, f.name) is not None
               and (f.name == "steps" or getattr(expectation, f.name) != ())
               for f in attrs.fields(TrajectoryExpectation))


def trajectory(
    defaults: ExpectedTrajectory | None = None,
    *,
    weights: TrajectoryWeights | None = None,
    id: str = "code-trajectory-scorer",
) -> Scorer[AgentInput, Trajectory]:
    """One score for a whole trajectory: accuracy, efficiency, tool retries, blacklists.

    The expectation is the run's ``expected_trajectory`` laid over ``defaults`` field by field
    (the run wins). Active dimensions: *accuracy* when steps are expected; *efficiency* when a
    budget (``max_steps``, ``max_total_tokens``, ``max_total_duration``) or
    ``no_redundant_calls`` is set; *tool_failures* when some call was retried after failing
    (``max_retries_per_tool``, default 2); *blacklist* when tools or sequences are
    blacklisted. Score = the weighted mean of the active dimensions; a blacklisted tool or
    sequence among the steps of the level whose expectation lists it gives 0. An expected
    step with ``children`` is matched to the first step of that name and its children scored
    the same way with the children's expectation (its own blacklist, checked against those
    children), mixed in 70/30; a violation there gives 0 too.

    Not scorable when there is no expectation at all, when it sets no steps, budgets or
    blacklists (only ``ordering``, ``allow_repeated_steps`` or ``max_retries_per_tool``), or
    when a token or duration budget is set but the trajectory does not record tokens or
    durations.

    >>> from scorecore.agent import TrajectoryStep
    >>> scorer = trajectory(TrajectoryExpectation(steps=["search"], blacklisted_tools=["rm"]))
    >>> taken = Trajectory(steps=[TrajectoryStep(name="search"), TrajectoryStep(name="rm")])
    >>> scorer.run_sync(input={}, output=taken).unwrap().score
    0.0
    """
    own = _factory_expectation(id, defaults)
    chosen = weights if weights is not None else TrajectoryWeights()
    if not isinstance(chosen, TrajectoryWeights):
        raise refuse(id, "weights", "a TrajectoryWeights", weights)
    chosen = TrajectoryWeights(**{n: _weight(id, n, getattr(chosen, n)) for n in _DIMENSIONS})

    def preprocess(ctx: _Ctx) -> TrajectoryLevel | NotScorable:
        expectation = laid_over(own, _item_expectation(ctx))
        if not _has_any(expectation):
            return not_scorable("no expectation: give the factory defaults or the run an "
                                "expected_trajectory (steps, budgets or blacklists)")
        if not _checks_something(expectation):
            return not_scorable("the expectation sets no steps, budgets or blacklists")
        scored = score_level(ctx.run.output, expectation, chosen)
        if isinstance(scored, Failure):
            return not_scorable(scored.failure().describe())
        return scored.unwrap()

    def reason(ctx: Any) -> str:
        level: TrajectoryLevel = ctx.results.preprocess_step_result
        lines = [f"Score: {ctx.score}"]
        if level.blacklist_violations:
            lines.append(f"blacklist: violated by {', '.join(level.blacklist_violations)}")
        if level.accuracy is not None:
            lines.append(f"accuracy: {level.accuracy.score} (missing "
                         f"{list(level.accuracy.missing_steps)})")
        if level.efficiency is not None:
            lines.append(f"efficiency: {level.efficiency.score} "
                         f"({level.efficiency.total_steps} steps, "
                         f"{level.efficiency.redundant_calls} redundant calls)")
        if level.tool_failures is not None:
            lines.append(f"tool failures: {level.tool_failures.score} "
                         f"(retries {dict(level.tool_failures.retries)})")
        lines.extend(f"nested {name}: {'not found' if n is None else n.score}"
                     for name, n in level.nested)
        return "\n".join(lines)

    return (
        create_scorer(id=id, name="Trajectory Scorer", type="trajectory",
                      description="Accuracy, efficiency, tool retries and blacklists of a "
                                  "trajectory")
        .preprocess(preprocess)
        .generate_score(lambda ctx: 0.0 if ctx.results.preprocess_step_result.violated
                        else ctx.results.preprocess_step_result.score)
        .generate_reason(reason)
    )

