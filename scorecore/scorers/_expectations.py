"""Reading a run's ``expected_trajectory``: our values, a Trajectory, a list, or Mastra's JSON."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

import attrs

from scorecore.agent import (
    ExpectedStep,
    Trajectory,
    TrajectoryExpectation,
    TrajectoryStep,
    seconds_from_mastra,
)
from scorecore.scorers._steps import _VARIANT_FIELDS

_CAMEL: Final = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(key: str) -> str:
    return _CAMEL.sub("_", key).lower()


def _seconds(value: Mapping[Any, Any], cls: type, where: str) -> Mapping[Any, Any]:
    # Mastra's millisecond keys (durationMs …) → ours in seconds, read before keys are snake-cased.
    try:
        return seconds_from_mastra(value, cls)
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None


def expected_from_step(step: TrajectoryStep) -> ExpectedStep:
    """A recorded step as an expected one: its type and every field it set (durations and
    metadata dropped); its children become the expected children's steps."""
    fields = {f: getattr(step, f) for f in _VARIANT_FIELDS.get(step.step_type, ())
              if getattr(step, f) is not None}
    children = (TrajectoryExpectation(steps=[expected_from_step(c) for c in step.children])
                if step.children else None)
    return ExpectedStep(name=step.name, step_type=step.step_type, fields=fields,
                        children=children)


def _step(value: object, where: str) -> ExpectedStep:
    if isinstance(value, ExpectedStep):
        return value
    if isinstance(value, str):
        return ExpectedStep(name=value)
    if isinstance(value, TrajectoryStep):
        return expected_from_step(value)
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a step name, an ExpectedStep or an object, "
                         f"got {type(value).__name__}")
    data = {_snake(str(k)): v for k, v in _seconds(value, TrajectoryStep, where).items()}
    name = data.pop("name", None)
    step_type = data.pop("step_type", None)
    children = data.pop("children", None)
    for unused in ("duration", "metadata"):
        data.pop(unused, None)
    try:
        return ExpectedStep(
            name=cast(str, name), step_type=step_type, fields=data,
            children=None if children is None else expectation_from(children, f"{where}.children"),
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from exc


def expectation_from(value: object, where: str = "run.expected_trajectory") -> (
        TrajectoryExpectation):
    """A :class:`TrajectoryExpectation` from what a run or a factory was given.

    Accepts an expectation, a :class:`Trajectory` (its steps, as expected steps), a list of
    step names / :class:`ExpectedStep` / step objects, or an object with Mastra's camelCase
    (or snake_case) keys (``maxTotalDurationMs`` is converted to seconds).

    Raises:
        ValueError: naming the bad field.
    """
    if isinstance(value, TrajectoryExpectation):
        return value
    if isinstance(value, Trajectory):
        return TrajectoryExpectation(steps=[expected_from_step(s) for s in value.steps])
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return TrajectoryExpectation(
            steps=[_step(s, f"{where}[{i}]") for i, s in enumerate(value)])
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a TrajectoryExpectation, a Trajectory, a list of "
                         f"steps or an object, got {type(value).__name__}")
    data: dict[str, Any] = {
        _snake(str(k)): v for k, v in _seconds(value, TrajectoryExpectation, where).items()}
    steps = data.get("steps")
    if steps is not None:
        if isinstance(steps, str | bytes) or not isinstance(steps, Sequence):
            raise ValueError(f"{where}.steps must be a list, got {type(steps).__name__}")
        data["steps"] = [_step(s, f"{where}.steps[{i}]") for i, s in enumerate(steps)]
    known = {f.name for f in attrs.fields(TrajectoryExpectation)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{where} has unknown keys {unknown}")
    for key in ("blacklisted_tools", "blacklisted_sequences"):
        if data.get(key) is None:
            data.pop(key, None)
    try:
        return TrajectoryExpectation(**data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from exc


def laid_over(defaults: TrajectoryExpectation | None,
              item: TrajectoryExpectation | None) -> TrajectoryExpectation:
    """``item`` over ``defaults``, field by field: a field the item sets wins (Mastra's
    ``{...defaults, ...item}``); ``steps=[]`` in the item replaces the defaults' steps, empty
    blacklists in the item keep the defaults'."""
    if defaults is None:
        return item or TrajectoryExpectation()
    if item is None:
        return defaults
    # Expected steps given as [] are set (they expect no step); an empty blacklist is not.
    changes = {f.name: getattr(item, f.name) for f in attrs.fields(TrajectoryExpectation)
               if getattr(item, f.name) is not None
               and (f.name == "steps" or getattr(item, f.name) != ())}
    return attrs.evolve(defaults, **changes)
