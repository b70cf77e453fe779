"""LLM-judged scorers of the agent's actions: llm_tool_call_accuracy, llm_trajectory_accuracy."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, cast, final

import attrs

from scorecore import (
    AgentInput,
    AgentOutput,
    NotScorable,
    Scorer,
    StepContext,
    create_scorer,
    not_scorable,
)
from scorecore.agent import ExpectedStep, Trajectory, TrajectoryStep
from scorecore.scorers._expectations import expectation_from
from scorecore.scorers._judged import (
    Judge,
    assistant_text,
    build_prompt,
    has_text,
    judge_config,
    judged_pipeline,
    user_text,
)
from scorecore.scorers._messages import tool_names
from scorecore.scorers._rounding import clamp, r2
from scorecore.scorers._shapes import check_text, refuse
from scorecore.scorers._trajectory_rules import js_json

__all__ = ["llm_tool_call_accuracy", "llm_trajectory_accuracy"]


@final
@attrs.frozen(kw_only=True)
class ToolEvaluation:
    """Whether one tool call was appropriate for the request."""

    tool_called: str
    was_appropriate: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class ToolReply:
    """The judge's reply: a verdict per call, and tools that should have been called."""

    evaluations: tuple[ToolEvaluation, ...]
    missing_tools: tuple[str, ...] = ()


def tool_score(reply: ToolReply, calls: Sequence[str]) -> float | NotScorable:
    """The share of appropriate calls, two decimals. The reply must evaluate each of the
    ``calls`` once (by tool name, as many times as it was called), else not scorable.

    >>> e = lambda ok: ToolEvaluation(tool_called="t", was_appropriate=ok, reasoning="")
    >>> tool_score(ToolReply(evaluations=(e(True), e(True), e(False))), ["t", "t", "t"])
    0.67
    >>> tool_score(ToolReply(evaluations=(e(True),)), ["t", "u"]).reason
    "the judge's reply covers 1 of 2 tool calls (1 evaluations)"
    """
    if not reply.evaluations:
        return not_scorable("the judge evaluated no tool call")
    wanted = Counter(c.strip() for c in calls)
    covered = sum((wanted & Counter(e.tool_called.strip() for e in reply.evaluations)).values())
    if covered != len(calls) or len(reply.evaluations) != len(calls):
        return not_scorable(f"the judge's reply covers {covered} of {len(calls)} tool calls "
                            f"({len(reply.evaluations)} evaluations)")
    return r2(sum(1 for e in reply.evaluations if e.was_appropriate) / len(reply.evaluations))


@final
@attrs.frozen(kw_only=True)
class ToolTexts:
    """The request, the calls made and the answer."""

    request: str
    calls: tuple[str, ...]
    answer: str


_PERSONA_TOOLS = ("You are an auditor of AI agents' tool use. You decide whether each tool "
                  "call was the right one for the user's request, given the tools available.")


def llm_tool_call_accuracy(
    judge: Judge, *, available_tools: Mapping[str, str],
    id: str = "llm-tool-call-accuracy-scorer",
) -> Scorer[AgentInput, AgentOutput]:
    """The share of the agent's tool calls that were appropriate for the request.

    ``available_tools`` maps each tool's id to its description. Not scorable without a user
    request, without any tool call (use ``checks.used_no_tools`` or ``tool_call_accuracy`` to
    require or forbid calls), or when the judge evaluates no call.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"evaluations": [{"tool_called": "weather",
    ...     "was_appropriate": True, "reasoning": "asked for weather"}], "missing_tools": []}])
    >>> scorer = llm_tool_call_accuracy(judge, available_tools={"weather": "Current weather"})
    >>> call = {"type": "tool-invocation", "toolInvocation": {"toolCallId": "c",
    ...         "toolName": "weather", "args": {}, "state": "result", "result": "sun"}}
    >>> out = [{"role": "assistant", "content": {"format": 2, "parts": [call]}}]
    >>> ask = {"inputMessages": [{"role": "user", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": "Weather?"}]}}]}
    >>> anyio.run(lambda: scorer.run(input=ask, output=out)).unwrap().score
    1.0
    """
    if not isinstance(cast(object, available_tools), Mapping) or not available_tools:
        raise refuse(id, "available_tools", "a non-empty mapping of tool id to description",
                     available_tools)
    tools = {check_text(id, "available_tools key", k): check_text(
        id, f"available_tools[{k!r}]", v, allow_empty=True) for k, v in available_tools.items()}
    listing = "\n".join(f"{name}: {text}" for name, text in tools.items())

    def gather(ctx: StepContext[AgentInput, AgentOutput, None, None]) -> ToolTexts | NotScorable:
        request = user_text(ctx.run.input)
        if not has_text(request):
            return not_scorable("no request: run.input has no user message with text")
        calls = tuple(tool_names(ctx.run.output))
        if not calls:
            return not_scorable("no tool calls to judge: run.output calls no tool")
        return ToolTexts(request=request, calls=calls, answer=assistant_text(ctx.run.output))

    def prompt(texts: ToolTexts) -> str:
        return build_prompt(
            task="Judge whether each tool the agent called was appropriate for the request.",
            principles=[
                "Evaluate every call listed, once each, in order.",
                "was_appropriate: the tool helps with the request and a better-suited "
                "available tool was not skipped for it.",
                "missing_tools: available tools the request clearly needed but the agent did "
                "not call (an empty list if none).",
                "Give a one-sentence reason for every call.",
            ],
            example=('Tools: weather: current weather; calendar: the user\'s events. Request: '
                     '"Will it rain in Oslo?" Calls: calendar\nReply: {"evaluations": '
                     '[{"tool_called": "calendar", "was_appropriate": false, "reasoning": '
                     '"events do not tell the weather"}], "missing_tools": ["weather"]}'),
            data=[("AVAILABLE_TOOLS", listing), ("REQUEST", texts.request),
                  ("TOOL_CALLS", "\n".join(texts.calls)), ("ANSWER", texts.answer or "(none)")],
            reply=('Reply with JSON only: {"evaluations": [{"tool_called": "...", '
                   '"was_appropriate": <bool>, "reasoning": "..."}], "missing_tools": ["..."]}.'),
        )

    return judged_pipeline(
        create_scorer(id=id, name="LLM Tool Call Accuracy Scorer", type="agent",
                      description="The share of tool calls appropriate for the request",
                      judge=judge_config(id, judge, _PERSONA_TOOLS)),
        gather=gather, description="Judge each tool call", reply=ToolReply, prompt=prompt,
        score=lambda texts, reply: tool_score(reply, texts.calls),
        reason=lambda _t, reply, score: "\n".join(
            [f"Tool call accuracy: {score}"]
            + [f"- {e.tool_called}: {'appropriate' if e.was_appropriate else 'inappropriate'}"
               f" ({e.reasoning})" for e in reply.evaluations]
            + [f"- missing: {t}" for t in reply.missing_tools]),
    )


@final
@attrs.frozen(kw_only=True)
class StepEvaluation:
    """Whether one step taken was necessary and in a sensible order."""

    step_name: str
    was_necessary: bool
    was_in_order: bool
    reasoning: str


@final
@attrs.frozen(kw_only=True)
class TrajectoryReply:
    """The judge's reply: a verdict per step, missing and extra steps."""

    step_evaluations: tuple[StepEvaluation, ...]
    missing_steps: tuple[str, ...] = ()
    extra_steps: tuple[str, ...] = ()
    overall_assessment: str = ""


def llm_trajectory_score(reply: TrajectoryReply) -> float | NotScorable:
    """⅔ · necessary share + ⅓ · in-order share - 0.1 · missing / (evaluated + missing),
    clamped to [0, 1], two decimals (Mastra weighs .6 and .3, so its best is 0.9).

    >>> e = lambda n, o: StepEvaluation(step_name="s", was_necessary=n, was_in_order=o,
    ...                                 reasoning="")
    >>> llm_trajectory_score(TrajectoryReply(step_evaluations=(e(True, True), e(True, False),
    ...                                      e(False, True)), missing_steps=("x",)))
    0.64
    """
    evaluated = reply.step_evaluations
    if not evaluated:
        return not_scorable("the judge evaluated no step")
    n, m = len(evaluated), len(reply.missing_steps)
    necessary = sum(1 for e in evaluated if e.was_necessary) / n
    ordered = sum(1 for e in evaluated if e.was_in_order) / n
    value = 2 / 3 * necessary + 1 / 3 * ordered - (0.1 * m / (n + m) if m else 0.0)
    return r2(clamp(value))


def _describe(step: TrajectoryStep | ExpectedStep, depth: int, index: int) -> list[str]:
    pad = "  " * depth
    kind = step.step_type or "any"
    if isinstance(step, TrajectoryStep):
        details = [f"args {js_json(step.tool_args)}"] if step.tool_args is not None else []
        if step.tool_result is not None:
            details.append(f"result {js_json(step.tool_result)}")
        children: tuple[Any, ...] = step.children
    else:
        details = [f"{k} {js_json(v)}" for k, v in step.fields.items()]
        children = step.children.steps or () if step.children is not None else ()
    line = f"{pad}{index}. [{kind}] {step.name}" + (f" ({', '.join(details)})" if details else "")
    lines = [line]
    for i, child in enumerate(children, 1):
        lines += _describe(child, depth + 1, i)
    return lines


def describe_steps(steps: tuple[TrajectoryStep | ExpectedStep, ...]) -> str:
    """Numbered ``[step_type] name (args …, result …)`` lines, children indented."""
    return "\n".join(line for i, s in enumerate(steps, 1) for line in _describe(s, 0, i))


@final
@attrs.frozen(kw_only=True)
class TrajectoryTexts:
    """The task, the steps taken, the expected steps and the answer."""

    task: str
    taken: str
    expected: str
    answer: str


_PERSONA_TRAJECTORY = ("You are an auditor of AI agents' plans. You judge whether each step an "
                       "agent took was needed for its task and taken at a sensible point.")


def llm_trajectory_accuracy(
    judge: Judge, *, expected_trajectory: Trajectory | list[ExpectedStep | str] | None = None,
    id: str = "llm-trajectory-accuracy-scorer",
) -> Scorer[AgentInput, Trajectory]:
    """How necessary and well ordered the agent's steps were, judged against the task and,
    when given, the expected steps (``expected_trajectory`` here, else the run's).

    Not scorable without a task (user message), without any step taken, or when the judge
    evaluates no step.

    >>> import anyio
    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"step_evaluations": [{"step_name": "search",
    ...     "was_necessary": True, "was_in_order": True, "reasoning": "needed"}],
    ...     "missing_steps": [], "extra_steps": [], "overall_assessment": "good"}])
    >>> scorer = llm_trajectory_accuracy(judge)
    >>> ask = {"inputMessages": [{"role": "user", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": "Find flights"}]}}]}
    >>> taken = Trajectory(steps=[TrajectoryStep(name="search")])
    >>> anyio.run(lambda: scorer.run(input=ask, output=taken)).unwrap().score
    1.0
    """
    own = None
    if expected_trajectory is not None:
        try:
            own = expectation_from(expected_trajectory, "expected_trajectory")
        except (TypeError, ValueError) as exc:
            raise refuse(id, "expected_trajectory", "a Trajectory or a list of steps",
                         expected_trajectory) from exc

    def gather(ctx: StepContext[AgentInput, Trajectory, None, None]
               ) -> TrajectoryTexts | NotScorable:
        task = user_text(ctx.run.input)
        if not has_text(task):
            return not_scorable("no task: run.input has no user message with text")
        taken = ctx.run.output
        if not taken.steps:
            return not_scorable("no steps to judge: the trajectory is empty")
        expected = own
        if (expected is None or expected.steps is None) and ctx.run.expected_trajectory:
            expected = expectation_from(ctx.run.expected_trajectory)
        listed = describe_steps(expected.steps) if expected and expected.steps else ""
        answer = assistant_text(taken.raw_output) if taken.raw_output else ""
        return TrajectoryTexts(task=task, taken=describe_steps(taken.steps),
                               expected=listed, answer=answer)

    def prompt(texts: TrajectoryTexts) -> str:
        data = [("TASK", texts.task), ("STEPS_TAKEN", texts.taken)]
        if texts.expected:
            data.append(("EXPECTED_STEPS", texts.expected))
        data.append(("FINAL_ANSWER", texts.answer or "(none)"))
        return build_prompt(
            task="Judge the steps an agent took to complete its task.",
            principles=[
                "Evaluate every step taken, once each, in order.",
                "was_necessary: the step contributes to the task (or to an expected step).",
                "was_in_order: the step comes at a sensible point relative to the others (and "
                "to the expected order, when one is given).",
                "missing_steps: needed or expected steps that were not taken; extra_steps: "
                "steps that add nothing (empty lists if none).",
            ],
            example=('Task: "Book the cheapest flight." Steps: 1. [tool_call] book 2. '
                     '[tool_call] search\nReply: {"step_evaluations": [{"step_name": "book", '
                     '"was_necessary": true, "was_in_order": false, "reasoning": "booked '
                     'before searching"}, {"step_name": "search", "was_necessary": true, '
                     '"was_in_order": false, "reasoning": "should come first"}], '
                     '"missing_steps": ["compare prices"], "extra_steps": [], '
                     '"overall_assessment": "wrong order"}'),
            data=data,
            reply=('Reply with JSON only: {"step_evaluations": [{"step_name": "...", '
                   '"was_necessary": <bool>, "was_in_order": <bool>, "reasoning": "..."}], '
                   '"missing_steps": ["..."], "extra_steps": ["..."], '
                   '"overall_assessment": "..."}.'),
        )

    return judged_pipeline(
        create_scorer(id=id, name="LLM Trajectory Accuracy Scorer", type="trajectory",
                      description="How necessary and well ordered the agent's steps were",
                      judge=judge_config(id, judge, _PERSONA_TRAJECTORY)),
        gather=gather, description="Judge each step taken", reply=TrajectoryReply,
        prompt=prompt, score=lambda _t, reply: llm_trajectory_score(reply),
        reason=lambda _t, reply, score: f"Trajectory accuracy: {score}. "
                                        f"{reply.overall_assessment}",
    )
