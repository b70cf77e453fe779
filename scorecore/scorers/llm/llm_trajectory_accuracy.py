"""llm_trajectory_accuracy: how necessary and well ordered the agent's steps were."""

from __future__ import annotations

from typing import Any, final

import attrs

from scorecore import AgentInput, NotScorable, Scorer, StepContext, not_scorable
from scorecore.agent import ExpectedStep, Trajectory, TrajectoryStep
from scorecore.scorers._expectations import expectation_from
from scorecore.scorers._rounding import clamp, r2
from scorecore.scorers._shapes import refuse
from scorecore.scorers._steps import js_json
from scorecore.scorers.llm._engine import Judge, Judgement, Spec, Wording, build
from scorecore.scorers.llm._reading import assistant_text, need_question

__all__ = ["llm_trajectory_accuracy"]

WORDING = Wording(
    description="Judge each step taken",
    persona=("You are an auditor of AI agents' plans. You judge whether each step an agent took "
             "was needed for its task and taken at a sensible point."),
    task="Judge the steps an agent took to complete its task.",
    principles=(
        "Evaluate every step taken, once each, in order.",
        "was_necessary: the step contributes to the task (or to an expected step).",
        "was_in_order: the step comes at a sensible point relative to the others (and to the "
        "expected order, when one is given).",
        "missing_steps: needed or expected steps that were not taken; extra_steps: steps that add "
        "nothing (empty lists if none).",
    ),
    example=('Task: "Book the cheapest flight." Steps: 1. [tool_call] book 2. [tool_call] search'
             '\nReply: {"step_evaluations": [{"step_name": "book", "was_necessary": true, '
             '"was_in_order": false, "reasoning": "booked before searching"}, {"step_name": '
             '"search", "was_necessary": true, "was_in_order": false, "reasoning": "should come '
             'first"}], "missing_steps": ["compare prices"], "extra_steps": [], '
             '"overall_assessment": "wrong order"}'),
    # What a reply would only say by restating the example, not by judging the run.
    echoes=("Book the cheapest flight.",),
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


def shown(texts: TrajectoryTexts) -> list[tuple[str, str]]:
    """The task, the steps taken, the expected steps (if any) and the final answer."""
    data = [("TASK", texts.task), ("STEPS_TAKEN", texts.taken)]
    if texts.expected:
        data.append(("EXPECTED_STEPS", texts.expected))
    data.append(("FINAL_ANSWER", texts.answer or "(none)"))
    return data


def llm_trajectory_accuracy(
    judge: Judge, *, expected_trajectory: Trajectory | list[ExpectedStep | str] | None = None,
    id: str = "llm-trajectory-accuracy-scorer",
) -> Scorer[AgentInput, Trajectory]:
    """How necessary and well ordered the agent's steps were, judged against the task and,
    when given, the expected steps (``expected_trajectory`` here, else the run's).

    Not scorable without a task (user message), without any step taken, or when the judge
    evaluates no step.

    >>> from scorecore_adapters.testing import ScriptedJudge
    >>> judge = ScriptedJudge([{"step_evaluations": [{"step_name": "search",
    ...     "was_necessary": True, "was_in_order": True, "reasoning": "needed"}],
    ...     "missing_steps": [], "extra_steps": [], "overall_assessment": "good"}])
    >>> scorer = llm_trajectory_accuracy(judge)
    >>> ask = {"inputMessages": [{"role": "user", "content": {"format": 2, "parts": [
    ...     {"type": "text", "text": "Find flights"}]}}]}
    >>> taken = Trajectory(steps=[TrajectoryStep(name="search")])
    >>> scorer.run_sync(input=ask, output=taken).unwrap().score
    1.0
    """
    own = None
    if expected_trajectory is not None:
        try:
            own = expectation_from(expected_trajectory, "expected_trajectory")
        except (TypeError, ValueError) as exc:
            raise refuse(id, "expected_trajectory", "a Trajectory or a list of steps",
                         expected_trajectory) from exc

    def read(ctx: StepContext[AgentInput, Trajectory, None, None]
             ) -> TrajectoryTexts | NotScorable:
        task = need_question(ctx.run.input, "task")
        if isinstance(task, NotScorable):
            return task
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

    return build(Spec(
        id=id, name="LLM Trajectory Accuracy Scorer",
        description="How necessary and well ordered the agent's steps were",
        read=read,
        judgement=Judgement(wording=WORDING, reply=TrajectoryReply, data=shown),
        score=lambda _t, reply: llm_trajectory_score(reply),
        reason=lambda _t, reply, score: f"Trajectory accuracy: {score}. "
                                        f"{reply.overall_assessment}",
    ), judge, "trajectory")
