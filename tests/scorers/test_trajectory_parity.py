"""trajectory_accuracy and trajectory give Mastra's numbers on 300 seeded cases scored by the
real @mastra/evals 1.10.2 (``oracle/trajectory_cases.py``, ``oracle/run_mastra_trajectory.mjs``).

Where Mastra throws (a budget it cannot measure) or scores a missing expectation (0 for
trajectory accuracy, 1 for an empty unified expectation), the run is not scorable here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore import create_scorer
from scorecore.agent import Trajectory, TrajectoryStep
from scorecore.scorers import TrajectoryWeights, trajectory, trajectory_accuracy
from scorecore.scorers._expectations import expectation_from

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "oracle" / "mastra_trajectory_1_10_2.json").read_text("utf-8"))


def _step(data: dict[str, Any]) -> TrajectoryStep:
    duration = data.get("durationMs")
    return TrajectoryStep(
        name=data["name"], step_type=data["stepType"],
        duration=None if duration is None else duration / 1000,
        tool_args=data.get("toolArgs"), success=data.get("success"),
        prompt_tokens=data.get("promptTokens"), completion_tokens=data.get("completionTokens"),
        children=[_step(c) for c in data.get("children", [])],
    )


def _trajectory(data: dict[str, Any]) -> Trajectory:
    total = data.get("totalDurationMs")
    return Trajectory(steps=[_step(s) for s in data["steps"]],
                      total_duration=None if total is None else total / 1000)


def _scorer(case: dict[str, Any]) -> Any:
    options = case["options"]
    if case["scorer"] == "accuracy":
        compare = options.get("comparisonOptions", {})
        return trajectory_accuracy(
            options.get("expectedTrajectory"), ordering=compare.get("ordering", "relaxed"),
            allow_repeated_steps=compare.get("allowRepeatedSteps", True))
    weights = options.get("weights")
    return trajectory(
        expectation_from(options["defaults"]) if "defaults" in options else None,
        weights=None if weights is None else TrajectoryWeights(
            accuracy=weights["accuracy"], efficiency=weights["efficiency"],
            tool_failures=weights["toolFailures"], blacklist=weights["blacklist"]))


def test_mastras_trajectory_json_reads_as_the_values_it_describes() -> None:
    """Each of the 300 recorded trajectories, in Mastra's JSON, structures into the values
    built from it by hand (milliseconds as seconds)."""
    scorer = create_scorer(id="t", description="d", type="trajectory").generate_score(
        lambda ctx: 1.0)
    for case in CASES:
        outcome = anyio.run(lambda: scorer.run(input={}, output=case["output"]))  # noqa: B023
        assert outcome.unwrap().run.output == _trajectory(case["output"])


@pytest.mark.parametrize("case", CASES, ids=[f"{c['scorer']}-{i}" for i, c in enumerate(CASES)])
def test_trajectory_scores_equal_mastra(case: dict[str, Any]) -> None:
    """The same score as Mastra, or not scorable exactly where Mastra throws or scores a
    missing expectation (pure computation: one event loop is enough)."""
    scorer = _scorer(case)
    # Mastra's trajectory JSON as it is (durations in milliseconds).
    outcome = anyio.run(lambda: scorer.run(input={}, output=case["output"],
                                           expected_trajectory=case["expectedTrajectory"]))
    result = outcome.unwrap()
    mastra = case["mastra"]
    if result.not_scorable is not None:
        reason = result.not_scorable.reason or ""
        if "error" in mastra:
            assert "budget" in mastra["error"]
            assert "max_total_" in reason
        elif reason.startswith("no expected trajectory"):
            assert mastra["score"] == 0
        else:  # a deliberate difference: Mastra gives 1 to an expectation checking nothing
            assert reason.startswith(("no expectation", "the expectation sets no steps"))
            assert mastra["score"] == 1
        return
    assert "error" not in mastra, mastra
    assert result.score == mastra["score"]


def test_corpus_covers_every_outcome() -> None:
    """The corpus has scores strictly between 0 and 1, zeros, ones and Mastra errors."""
    scores = [c["mastra"].get("score") for c in CASES]
    assert any(s is not None and 0 < s < 1 for s in scores)
    assert 0 in scores
    assert 1 in scores
    assert None in scores


MESSAGE_CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "oracle" / "mastra_messages_1_71_0.json").read_text("utf-8"))
_TRAJECTORY_OF = create_scorer(id="steps", description="d", type="trajectory").generate_score(
    lambda ctx: 1.0)


def _extracted_json(step: TrajectoryStep) -> dict[str, Any]:
    out: dict[str, Any] = {"stepType": step.step_type, "name": step.name}
    for field, key in (("tool_args", "toolArgs"), ("tool_result", "toolResult"),
                       ("success", "success")):
        value = getattr(step, field)
        if value is not None:
            out[key] = value
    return out


@pytest.mark.parametrize("case", MESSAGE_CASES,
                         ids=[f"messages-{i}" for i in range(len(MESSAGE_CASES))])
def test_messages_become_mastras_trajectory(case: dict[str, Any]) -> None:
    """Agent messages given to a trajectory scorer become the steps Mastra's
    extractTrajectory gives: parts and legacy calls merged, non-objects wrapped."""
    outcome = anyio.run(lambda: _TRAJECTORY_OF.run(input={}, output=case["output"]))
    steps = outcome.unwrap().run.output.steps
    # A call sent without "args" reads as args {} (ToolInvocation's default): Mastra leaves
    # toolArgs undefined there, the one difference (listed in docs/builtin-scorers.md).
    theirs = [{"toolArgs": {}, **step} for step in case["mastra"]["steps"]]
    assert [_extracted_json(s) for s in steps] == [
        {k: step[k] for k in ("stepType", "name", "toolArgs", "toolResult", "success")
         if k in step} for step in theirs]
