"""Trajectory rules as pure functions: step matching, ordering modes, efficiency, blacklists,
tool retries (Mastra's ``compareTrajectories``, ``checkTrajectoryEfficiency``,
``checkTrajectoryBlacklist`` and ``analyzeToolFailures``)."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Literal, final

import attrs
from returns.result import Failure, Result, Success

from scorecore.agent import (
    STEP_FIELDS,
    ExpectedStep,
    Ordering,
    Trajectory,
    TrajectoryExpectation,
    TrajectoryStep,
)
from scorecore.scorers._rounding import clamp, r2

# Mastra compares no field of a provider-executed tool call.
_VARIANT_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {**STEP_FIELDS, "provider_tool_call": ()}
"""The fields compared per step type (``provider_tool_call`` has none, as in Mastra)."""


def _js_value(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)  # JSON.stringify(1.0) is "1"
    if isinstance(value, float) and not math.isfinite(value):
        return None  # and NaN/Infinity become null
    if isinstance(value, Mapping):
        return {str(k): _js_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_js_value(v) for v in value]
    return value


def js_json(value: Any) -> str:
    """``JSON.stringify(value)``: compact, keys in insertion order, non-ASCII kept.

    >>> js_json({"b": 1.0, "a": [True, None, "é"]})
    '{"b":1,"a":[true,null,"é"]}'
    """
    return json.dumps(_js_value(value), separators=(",", ":"), ensure_ascii=False, default=repr)


def step_matches(actual: TrajectoryStep, expected: ExpectedStep) -> bool:
    """Whether a step meets an expected step: the same name; with a ``step_type``, the same
    type and every expected field equal (as JSON, so key order matters, as in Mastra)."""
    if actual.name != expected.name:
        return False
    if expected.step_type is None:
        return True
    if actual.step_type != expected.step_type:
        return False
    compared = _VARIANT_FIELDS.get(expected.step_type, ())
    for field, wanted in expected.fields.items():
        if field not in compared:
            continue
        value = getattr(actual, field, None)
        if value is None or js_json(value) != js_json(wanted):
            return False
    return True


@final
@attrs.frozen(kw_only=True)
class Comparison:
    """How a trajectory compares with the expected steps."""

    score: float
    matched_steps: int
    total_expected: int
    total_actual: int
    missing_steps: tuple[str, ...]
    extra_steps: tuple[str, ...]
    out_of_order_steps: tuple[str, ...]
    repeated_steps: tuple[str, ...]


def compare_trajectories(
    actual: Sequence[TrajectoryStep], expected: Sequence[ExpectedStep], *,
    ordering: Ordering = "relaxed", allow_repeated_steps: bool = True,
) -> Comparison:
    """Compare steps with expected steps (Mastra's ``compareTrajectories``).

    ``strict``: position by position, each extra step costing ``0.5 / len(expected)``;
    ``relaxed``: the expected steps in order, other steps in between free; ``unordered``:
    each expected step anywhere. Without ``allow_repeated_steps`` each repeated name costs 0.1.
    The score is rounded to two decimals.

    >>> a, b, c = (TrajectoryStep(name=n) for n in "abc")
    >>> compare_trajectories([a, b, c], [ExpectedStep(name="a"), ExpectedStep(name="b")],
    ...                      ordering="strict").score
    0.75
    """
    names = [s.name for s in actual]
    expected_names = {e.name for e in expected}
    counts = Counter(names)
    repeated = tuple(n for n in dict.fromkeys(names) if counts[n] > 1)
    extra = tuple(n for n in dict.fromkeys(names) if n not in expected_names)
    matched_flags = [False] * len(expected)
    out_of_order: list[str] = []
    if not expected:
        score = 1.0 if not actual else 0.0
    else:
        if ordering == "strict":
            for i in range(min(len(actual), len(expected))):
                if actual[i].name == expected[i].name:
                    matched_flags[i] = step_matches(actual[i], expected[i])
                elif expected[i].name in names:
                    out_of_order.append(expected[i].name)
        elif ordering == "relaxed":
            position = 0
            for i, want in enumerate(expected):
                found = next((j for j in range(position, len(actual))
                              if step_matches(actual[j], want)), None)
                if found is not None:
                    matched_flags[i] = True
                    position = found + 1
                elif any(step_matches(s, want) for s in actual[:position]):
                    out_of_order.append(want.name)
        else:
            used: set[int] = set()
            for i, want in enumerate(expected):
                found = next((j for j, s in enumerate(actual)
                              if j not in used and step_matches(s, want)), None)
                if found is not None:
                    matched_flags[i] = True
                    used.add(found)
        matched = sum(matched_flags)
        score = matched / len(expected)
        if ordering == "strict" and len(actual) > len(expected):
            score -= 0.5 * (len(actual) - len(expected)) / len(expected)
        if not allow_repeated_steps:
            score -= 0.1 * len(repeated)
    missing = tuple(e.name for e, hit in zip(expected, matched_flags, strict=True) if not hit)
    return Comparison(
        score=r2(clamp(score)), matched_steps=sum(matched_flags), total_expected=len(expected),
        total_actual=len(actual), missing_steps=missing, extra_steps=extra,
        out_of_order_steps=tuple(out_of_order), repeated_steps=repeated,
    )


def _walk(steps: Sequence[TrajectoryStep]) -> Iterator[TrajectoryStep]:
    for step in steps:
        yield step
        yield from _walk(step.children)


def total_tokens(trajectory: Trajectory) -> int | None:
    """Prompt + completion tokens over every model generation at any depth; ``None`` when
    there is no generation or one lacks a count."""
    generations = [s for s in _walk(trajectory.steps) if s.step_type == "model_generation"]
    if not generations or any(s.prompt_tokens is None or s.completion_tokens is None
                              for s in generations):
        return None
    return sum((s.prompt_tokens or 0) + (s.completion_tokens or 0) for s in generations)


def total_duration(trajectory: Trajectory) -> float | None:
    """``total_duration``, else the sum of the top-level steps' durations (``None`` if there is
    no step or one lacks a duration)."""
    if trajectory.total_duration is not None:
        return trajectory.total_duration
    durations = [s.duration for s in trajectory.steps]
    if not durations or any(d is None for d in durations):
        return None  # no step at all measures nothing (Mastra cannot evaluate it either)
    return sum(d for d in durations if d is not None)


def redundant_calls(steps: Sequence[TrajectoryStep]) -> int:
    """Consecutive tool calls to the same tool with the same arguments."""
    count = 0
    for before, after in itertools.pairwise(steps):
        if (after.step_type in ("tool_call", "mcp_tool_call") and before.name == after.name
                and before.step_type == after.step_type
                and js_json(before.tool_args) == js_json(after.tool_args)):
            count += 1
    return count


def _budget(value: float, limit: float) -> float:
    if value <= limit:
        return 1.0
    if limit == 0:
        return 0.0
    return max(0.0, 1 - (value - limit) / limit)


@final
@attrs.frozen(kw_only=True)
class Efficiency:
    """Budgets and redundancy: the score and what was measured."""

    score: float
    total_steps: int
    total_tokens: int | None
    total_duration: float | None
    redundant_calls: int


@final
@attrs.frozen(kw_only=True)
class MissingMeasure:
    """A budget is set but the trajectory does not record what it limits (the run is then not
    scorable, with :meth:`describe` as the reason).

    >>> MissingMeasure(budget="max_total_duration").describe()
    'max_total_duration is set but the trajectory records no total duration (nor a duration on \
every step)'
    """

    budget: Literal["max_total_tokens", "max_total_duration"]

    def describe(self) -> str:
        """One line naming the budget and what the trajectory lacks."""
        if self.budget == "max_total_tokens":
            return ("max_total_tokens is set but the trajectory has no model generation step "
                    "with prompt and completion token counts")
        return ("max_total_duration is set but the trajectory records no total duration (nor a "
                "duration on every step)")


def check_efficiency(
    trajectory: Trajectory, expectation: TrajectoryExpectation
) -> Result[Efficiency, MissingMeasure]:
    """The mean of the step, token and duration budgets (each ``1 - overrun / limit``) and of
    redundancy (``1 - 0.2 · redundant calls``); two decimals.

    ``Failure(MissingMeasure)`` when a token or duration budget is set but the trajectory lacks
    the counts.
    """
    parts: list[float] = []
    steps = trajectory.steps
    if expectation.max_steps is not None:
        parts.append(_budget(len(steps), expectation.max_steps))
    tokens = total_tokens(trajectory)
    if expectation.max_total_tokens is not None:
        if tokens is None:
            return Failure(MissingMeasure(budget="max_total_tokens"))
        parts.append(_budget(tokens, expectation.max_total_tokens))
    duration = total_duration(trajectory)
    if expectation.max_total_duration is not None:
        if duration is None:
            return Failure(MissingMeasure(budget="max_total_duration"))
        parts.append(_budget(duration, expectation.max_total_duration))
    redundant = redundant_calls(steps)
    if expectation.no_redundant_calls is not False:
        parts.append(max(0.0, 1 - 0.2 * redundant))
    score = sum(parts) / len(parts) if parts else 1.0
    return Success(Efficiency(score=r2(clamp(score)), total_steps=len(steps),
                              total_tokens=tokens, total_duration=duration,
                              redundant_calls=redundant))


def blacklist_violations(
    steps: Sequence[TrajectoryStep], tools: Sequence[str],
    sequences: Sequence[Sequence[str]],
) -> tuple[str, ...]:
    """The blacklisted tools called and blacklisted sequences that occur (contiguously)."""
    names = [s.name for s in steps]
    found = [f"tool {t!r}" for t in tools if t in names]
    for sequence in sequences:
        width = len(sequence)
        if width and any(names[i:i + width] == list(sequence)
                         for i in range(len(names) - width + 1)):
            found.append(f"sequence {list(sequence)}")
    return tuple(found)


@final
@attrs.frozen(kw_only=True)
class ToolFailures:
    """Retries after failed tool calls."""

    score: float
    retries: Mapping[str, int]
    excessive: tuple[str, ...]


def tool_failures(steps: Sequence[TrajectoryStep], max_retries_per_tool: int) -> ToolFailures:
    """In each run of consecutive calls to one tool, a call after a failed one is a retry;
    each retry beyond ``max_retries_per_tool`` costs 0.2.

    >>> fail = TrajectoryStep(name="fetch", success=False)
    >>> tool_failures([fail, fail, fail, TrajectoryStep(name="fetch", success=True)], 1).score
    0.6
    """
    calls = [s for s in steps if s.step_type in ("tool_call", "mcp_tool_call")]
    retries: dict[str, int] = {}
    excess = 0
    excessive: list[str] = []
    start = 0
    while start < len(calls):
        end = start
        while end + 1 < len(calls) and calls[end + 1].name == calls[start].name:
            end += 1
        run = calls[start:end + 1]
        count = sum(1 for before in run[:-1] if before.success is False)
        if count:
            name = run[0].name
            retries[name] = retries.get(name, 0) + count
            over = max(0, count - max_retries_per_tool)
            if over:
                excess += over
                excessive.append(name)
        start = end + 1
    return ToolFailures(score=r2(max(0.0, 1 - 0.2 * excess)), retries=retries,
                        excessive=tuple(dict.fromkeys(excessive)))
