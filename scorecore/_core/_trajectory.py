"""Trajectories: the steps an agent or workflow took, and what a run was expected to take.

A ``type="trajectory"`` scorer receives a :class:`Trajectory` as ``ctx.run.output``: agent
messages are turned into one with :func:`extract_trajectory` before the first step (traces are
turned into one by ``scorecore.traces.extract_trajectory_from_trace``). These are Mastra's
``Trajectory``, ``TrajectoryStep``, ``ExpectedStep`` and ``TrajectoryExpectation``, in
snake_case, with durations in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, TypeVar, cast, final, get_args

import attrs
from returns.result import Failure, Result, Success

from scorecore._core._agent import AgentMessage, AgentOutput, ToolInvocation, ToolInvocationPart
from scorecore._core._causes import InputMismatch
from scorecore._core._declared_types import structure_run_value
from scorecore._core._keys import MILLISECONDS, millisecond_keys, read_milliseconds
from scorecore._core._reprs import short_repr

# The field type of an attrs validator below: each serves fields of any type it checks.
_F = TypeVar("_F")

StepType: TypeAlias = Literal[
    "tool_call", "provider_tool_call", "mcp_tool_call", "model_generation", "agent_run",
    "workflow_step", "workflow_run", "workflow_conditional", "workflow_parallel",
    "workflow_loop", "workflow_sleep", "workflow_wait_event", "processor_run",
]
"""The kinds of trajectory step (Mastra's ``stepType``)."""

Ordering: TypeAlias = Literal["strict", "relaxed", "unordered"]
"""How expected steps are matched: position by position, in order with extras allowed, or
in any order."""

STEP_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "tool_call": ("tool_args", "tool_result", "success"),
    "provider_tool_call": ("tool_args", "tool_result", "success"),
    "mcp_tool_call": ("tool_args", "tool_result", "success", "mcp_server"),
    "model_generation": ("model_id", "prompt_tokens", "completion_tokens", "finish_reason"),
    "agent_run": ("agent_id",),
    "workflow_step": ("step_id", "status", "output"),
    "workflow_run": ("workflow_id", "status"),
    "workflow_conditional": ("condition_count", "selected_steps"),
    "workflow_parallel": ("branch_count", "parallel_steps"),
    "workflow_loop": ("loop_type", "total_iterations"),
    "workflow_sleep": ("sleep_duration", "sleep_type"),
    "workflow_wait_event": ("event_name", "event_received"),
    "processor_run": ("processor_id",),
}
"""The fields each step type may carry (and an expected step may constrain)."""

_STEP_TYPES: Final = frozenset(get_args(StepType))


def _name(instance: object, attribute: attrs.Attribute[_F], value: _F) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be a non-empty str, "
                         f"got {short_repr(value)}")


def _step_type(instance: object, attribute: attrs.Attribute[_F], value: _F) -> None:
    if value is None and isinstance(instance, ExpectedStep):
        return
    if value not in _STEP_TYPES:
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be one of "
                         f"{sorted(_STEP_TYPES)}, got {short_repr(value)}")


def _seconds(instance: object, attribute: attrs.Attribute[_F], value: _F) -> None:
    if value is None:
        return
    ok = not isinstance(value, bool) and isinstance(value, int | float)
    if not ok or not math.isfinite(cast(float, value)) or cast(float, value) < 0:
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be a finite number "
                         f"of seconds ≥ 0 or None, got {short_repr(value)}")


def _count(instance: object, attribute: attrs.Attribute[_F], value: _F) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be an int ≥ 0 or "
                         f"None, got {short_repr(value)}")


def _steps(value: Iterable[TrajectoryStep]) -> tuple[TrajectoryStep, ...]:
    return tuple(value)


def _are(kind: type, where: str) -> Callable[[object, attrs.Attribute[Any], object], None]:
    def check(instance: object, attribute: attrs.Attribute[_F], value: _F) -> None:
        for index, item in enumerate(cast(tuple[object, ...], value)):
            if not isinstance(item, kind):
                raise TypeError(f"{type(instance).__name__}.{attribute.name}[{index}] must be "
                                f"{where}, got {short_repr(item)}")
    return check


@final
@attrs.frozen(kw_only=True)
class TrajectoryStep:
    """One step of a trajectory: a tool call, a model generation, a workflow step …

    Every field but ``name`` and ``step_type`` is optional; which ones a step carries depends
    on its type (tool steps: ``tool_args``, ``tool_result``, ``success``; ``mcp_tool_call``
    adds ``mcp_server``; ``model_generation``: ``model_id``, ``prompt_tokens``,
    ``completion_tokens``, ``finish_reason``; ``workflow_step``: ``step_id``, ``status``,
    ``output`` …). ``children`` are the steps it contained (an agent run inside a workflow,
    the tool calls of a sub-agent). Durations are in seconds.

    >>> step = TrajectoryStep(name="search", tool_args={"q": "paris"}, success=True)
    >>> step.step_type, step.children
    ('tool_call', ())
    """

    name: str = attrs.field(validator=_name)
    step_type: StepType = attrs.field(default="tool_call", validator=_step_type)
    duration: float | None = attrs.field(default=None, validator=_seconds,
                                         metadata={MILLISECONDS: "durationMs"})
    metadata: Mapping[str, Any] | None = None
    children: tuple[TrajectoryStep, ...] = attrs.field(default=(), converter=_steps)
    tool_call_id: str | None = None
    tool_args: Any = None
    tool_result: Any = None
    success: bool | None = None
    mcp_server: str | None = None
    model_id: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    agent_id: str | None = None
    step_id: str | None = None
    status: str | None = None
    output: Any = None
    workflow_id: str | None = None
    condition_count: int | None = None
    selected_steps: tuple[str, ...] | None = None
    branch_count: int | None = None
    parallel_steps: tuple[str, ...] | None = None
    loop_type: str | None = None
    total_iterations: int | None = None
    sleep_duration: float | None = attrs.field(default=None,
                                               metadata={MILLISECONDS: "sleepDurationMs"})
    sleep_type: str | None = None
    event_name: str | None = None
    event_received: bool | None = None
    processor_id: str | None = None

    def __attrs_post_init__(self) -> None:
        _are(TrajectoryStep, "a TrajectoryStep")(self, _CHILDREN, self.children)


_CHILDREN = attrs.fields(TrajectoryStep).children


@final
@attrs.frozen(kw_only=True)
class Trajectory:
    """The steps an agent or workflow took, in order.

    Attributes:
        steps: the top-level steps (each may hold ``children``).
        total_duration: the whole run's duration in seconds, when known.
        raw_output: the agent messages the trajectory was extracted from, if any.

    >>> Trajectory(steps=(TrajectoryStep(name="a"), TrajectoryStep(name="b"))).tool_names
    ('a', 'b')
    """

    steps: tuple[TrajectoryStep, ...] = attrs.field(
        default=(), converter=_steps, validator=_are(TrajectoryStep, "a TrajectoryStep"))
    total_duration: float | None = attrs.field(default=None, validator=_seconds,
                                               metadata={MILLISECONDS: "totalDurationMs"})
    raw_output: AgentOutput | None = attrs.field(default=None, repr=False)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of the top-level steps, in order."""
        return tuple(s.name for s in self.steps)


def _expected_steps(value: Iterable[ExpectedStep | str] | None) -> tuple[ExpectedStep, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):  # a lone name is almost surely a mistake for [name]
        raise TypeError(f"TrajectoryExpectation.steps must be a list of steps, got {value!r}")
    return tuple(ExpectedStep(name=s) if isinstance(s, str) else s for s in value)


def _names(value: Iterable[str]) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError(f"expected a list of names, got the str {value!r}")
    return tuple(value)


def _sequences(value: Iterable[Iterable[str]]) -> tuple[tuple[str, ...], ...]:
    if isinstance(value, str):
        raise TypeError(f"expected a list of names, got the str {value!r}")
    return tuple(_names(s) for s in value)


def _fields_of(instance: ExpectedStep, attribute: attrs.Attribute[_F], value: _F) -> None:
    if not isinstance(value, Mapping):
        raise TypeError(f"ExpectedStep.fields must be a mapping, got {short_repr(value)}")
    if value and instance.step_type is None:
        raise ValueError(f"ExpectedStep({instance.name!r}).fields needs a step_type: fields are "
                         f"compared only for a step of a known type, got {short_repr(value)}")
    allowed = STEP_FIELDS.get(instance.step_type or "", ())
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise ValueError(f"ExpectedStep({instance.name!r}).fields: {unknown} are not fields of "
                         f"a {instance.step_type} step (those are {list(allowed)})")


@final
@attrs.frozen(kw_only=True)
class ExpectedStep:
    """A step a run was expected to take (Mastra's ``ExpectedStep``).

    Without ``step_type`` it matches any step of that name; with one, the step type must be
    equal and every field given in ``fields`` (snake_case names of that type's fields, e.g.
    ``{"tool_args": {"q": "paris"}}``) must equal the actual step's. ``children`` is what the
    step's own children are expected to be (used by the ``trajectory`` scorer).

    >>> ExpectedStep(name="search", step_type="tool_call", fields={"tool_args": {"q": "x"}}).name
    'search'
    """

    name: str = attrs.field(validator=_name)
    step_type: StepType | None = attrs.field(default=None, validator=_step_type)
    fields: Mapping[str, Any] = attrs.field(factory=dict, validator=_fields_of)
    children: TrajectoryExpectation | None = None


def _ordering(instance: object, attribute: attrs.Attribute[_F], value: _F) -> None:
    if value is not None and value not in ("strict", "relaxed", "unordered"):
        raise ValueError(f"TrajectoryExpectation.ordering must be 'strict', 'relaxed', "
                         f"'unordered' or None, got {short_repr(value)}")


def _optional_bool(instance: object, attribute: attrs.Attribute[_F], value: _F) -> None:
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"TrajectoryExpectation.{attribute.name} must be a bool or None, "
                        f"got {short_repr(value)}")


@final
@attrs.frozen(kw_only=True)
class TrajectoryExpectation:
    """What a run's trajectory is expected to look like (Mastra's ``TrajectoryExpectation``).

    Every field is optional; ``None`` means "not set", so a per-item expectation can be laid
    over a scorer's defaults field by field.

    Attributes:
        steps: the expected steps (names or :class:`ExpectedStep`).
        ordering: ``"strict"``, ``"relaxed"`` (the default when unset) or ``"unordered"``.
        allow_repeated_steps: whether a step name may occur more than once (default true).
        max_steps: the most top-level steps allowed.
        max_total_tokens: the most prompt + completion tokens over all model generations.
        max_total_duration: the longest total duration, in seconds.
        no_redundant_calls: penalise the same tool called twice in a row with the same
            arguments (default true when an efficiency budget is set).
        blacklisted_tools: tools that must never be called.
        blacklisted_sequences: runs of step names that must never occur.
        max_retries_per_tool: retries after a failed call tolerated per tool (default 2).

    >>> TrajectoryExpectation(steps=["search", "answer"], ordering="strict").steps[0].name
    'search'
    """

    steps: tuple[ExpectedStep, ...] | None = attrs.field(
        default=None, converter=_expected_steps)
    ordering: Ordering | None = attrs.field(default=None, validator=_ordering)
    allow_repeated_steps: bool | None = attrs.field(default=None, validator=_optional_bool)
    max_steps: int | None = attrs.field(default=None, validator=_count)
    max_total_tokens: int | None = attrs.field(default=None, validator=_count)
    max_total_duration: float | None = attrs.field(
        default=None, validator=_seconds, metadata={MILLISECONDS: "maxTotalDurationMs"})
    no_redundant_calls: bool | None = attrs.field(default=None, validator=_optional_bool)
    blacklisted_tools: tuple[str, ...] = attrs.field(default=(), converter=_names)
    blacklisted_sequences: tuple[tuple[str, ...], ...] = attrs.field(
        default=(), converter=_sequences)
    max_retries_per_tool: int | None = attrs.field(default=None, validator=_count)


_CALL_STATES: Final = frozenset({"result", "call", "output-error"})


def merged_tool_invocations(message: AgentMessage) -> list[ToolInvocation]:
    """A message's tool invocations from its parts and its legacy list, merged as Mastra's
    ``mergeToolInvocations`` does.

    For a call id in both, the part wins; a legacy-only call is placed before the next call
    both share (if not already passed); the remaining legacy-only calls come last.

    >>> from scorecore.agent import MessageContent
    >>> legacy = ToolInvocation(tool_call_id="c0", tool_name="old")
    >>> new = ToolInvocation(tool_call_id="c1", tool_name="new")
    >>> message = AgentMessage(role="assistant", content=MessageContent(
    ...     parts=(ToolInvocationPart(tool_invocation=new),), tool_invocations=(legacy,)))
    >>> [c.tool_name for c in merged_tool_invocations(message)]
    ['new', 'old']
    """
    content = message.content
    from_parts = [p.tool_invocation for p in content.parts or ()
                  if isinstance(p, ToolInvocationPart)]
    legacy = list(content.tool_invocations or ())
    part_ids = {call.tool_call_id for call in from_parts if call.tool_call_id}
    # A JavaScript Map built from pairs keeps the last index of a repeated id; so does dict.
    legacy_index_of = {call.tool_call_id: index for index, call in enumerate(legacy)}
    merged: list[ToolInvocation] = []
    next_legacy = 0
    for call in from_parts:
        shared = legacy_index_of.get(call.tool_call_id) if call.tool_call_id else None
        if shared is not None and shared >= next_legacy:
            merged.extend(c for c in legacy[next_legacy:shared] if c.tool_call_id not in part_ids)
            next_legacy = shared + 1
        merged.append(call)
    merged.extend(c for c in legacy[next_legacy:] if c.tool_call_id not in part_ids)
    return merged


def _wrapped(value: object) -> object:
    # Mastra keeps an object as is and wraps any other value as {"value": x}.
    if value is None or isinstance(value, Mapping):
        return value
    return {"value": value}


def extract_trajectory(messages: Sequence[AgentMessage]) -> Trajectory:
    """The tool calls made in agent messages, in order (Mastra's ``extractTrajectory``).

    Each message's invocations are merged from its parts and its legacy ``tool_invocations``
    (:func:`merged_tool_invocations`). An invocation with a tool name in state ``result``,
    ``call`` or ``output-error`` becomes a ``tool_call`` step; ``success`` is true only for
    state ``result`` without ``is_error``. Arguments and results that are not objects are
    wrapped as ``{"value": x}``, as Mastra does. The messages are kept as ``raw_output``.

    >>> from scorecore.agent import MessageContent, TextPart
    >>> call = ToolInvocation(tool_call_id="c1", tool_name="weather", args={"city": "Paris"},
    ...                       result="sunny")
    >>> msg = AgentMessage(role="assistant", content=MessageContent(
    ...     parts=(ToolInvocationPart(tool_invocation=call), TextPart(text="Sunny."))))
    >>> step = extract_trajectory([msg]).steps[0]
    >>> step.name, step.tool_args, step.tool_result, step.success
    ('weather', {'city': 'Paris'}, {'value': 'sunny'}, True)
    """
    steps: list[TrajectoryStep] = []
    for message in messages:
        steps.extend(
            TrajectoryStep(
                name=call.tool_name, tool_args=_wrapped(call.args),
                tool_result=_wrapped(call.result) if call.state == "result" else None,
                success=call.state == "result" and call.is_error is not True,
                tool_call_id=call.tool_call_id,
            )
            for call in merged_tool_invocations(message)
            if call.tool_name and call.state in _CALL_STATES
        )
    return Trajectory(steps=tuple(steps), raw_output=tuple(messages))


def to_trajectory(value: object) -> Result[Trajectory, InputMismatch]:
    """A ``type="trajectory"`` run's output: a :class:`Trajectory` as is, its JSON (an object
    with ``steps``, as ``to_mastra_json`` writes it) structured, agent messages (or their Mastra
    JSON) through :func:`extract_trajectory`."""
    if isinstance(value, Trajectory):
        return Success(value)
    if isinstance(value, Mapping) and "steps" in value:
        return structure_run_value(value, Trajectory, which="output")
    messages = structure_run_value(value, AgentOutput, which="output")
    if isinstance(messages, Failure):
        mismatch = messages.failure()
        return Failure(attrs.evolve(mismatch, expected_type="Trajectory or AgentOutput"))
    return Success(extract_trajectory(messages.unwrap()))


def seconds_from_mastra(value: Mapping[str, object], cls: type) -> Mapping[str, object]:
    """``value``, Mastra's JSON of a ``cls`` (a :class:`TrajectoryStep`, a
    :class:`Trajectory` …), with its millisecond keys (``durationMs``) read as our keys in
    seconds (``duration``); other keys as given.

    Raises:
        TypeError: a millisecond value is not a finite number ≥ 0, or both keys are given.

    >>> seconds_from_mastra({"name": "search", "durationMs": 1250}, TrajectoryStep)
    {'name': 'search', 'duration': 1.25}
    """
    return read_milliseconds(value, millisecond_keys(cls))
