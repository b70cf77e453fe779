"""Write the trajectory parity cases as JSON on stdout (run_mastra_trajectory.mjs scores them).

Seeded, so the corpus is the same on every run: random trajectories over four step names with
tool arguments (in varying key order), failures, durations in whole seconds, token counts and
nested children, against random expectations in every ordering mode, for Mastra's
``createTrajectoryAccuracyScorerCode`` and ``createTrajectoryScorerCode``.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

NAMES = ["a", "b", "c", "d"]


def step(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    kind = rng.choice(["tool_call", "tool_call", "tool_call", "model_generation", "agent_run"])
    out: dict[str, Any] = {"name": rng.choice(NAMES), "stepType": kind}
    if kind == "tool_call":
        args = {"q": rng.choice([1, 2]), "k": "x"}
        if rng.random() < 0.3:
            args = dict(reversed(list(args.items())))
        out["toolArgs"] = args
        out["success"] = rng.random() < 0.7
    elif kind == "model_generation":
        if rng.random() < 0.8:
            out["promptTokens"] = rng.randint(0, 50)
            out["completionTokens"] = rng.randint(0, 50)
    elif depth < 2 and rng.random() < 0.7:
        out["children"] = [step(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.6:
        out["durationMs"] = 1000 * rng.randint(0, 4)
    return out


def expected_step(rng: random.Random, actual: list[dict[str, Any]]) -> dict[str, Any]:
    if actual and rng.random() < 0.6:
        source = rng.choice(actual)
        out: dict[str, Any] = {"name": source["name"]}
        if rng.random() < 0.4:
            out["stepType"] = source["stepType"]
            if "toolArgs" in source and rng.random() < 0.6:
                out["toolArgs"] = dict(source["toolArgs"])
        return out
    return {"name": rng.choice(NAMES)}


def expectation(rng: random.Random, actual: list[dict[str, Any]],
                depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rng.random() < 0.8:
        out["steps"] = [expected_step(rng, actual) for _ in range(rng.randint(0, 4))]
        with_children = [s for s in actual if s.get("children")]
        if depth == 0 and with_children and rng.random() < 0.5:
            parent = rng.choice(with_children)
            out["steps"].append({"name": parent["name"], "children": expectation(
                rng, parent["children"], depth + 1)})
    if rng.random() < 0.4:
        out["ordering"] = rng.choice(["strict", "relaxed", "unordered"])
    if rng.random() < 0.3:
        out["allowRepeatedSteps"] = rng.random() < 0.5
    if rng.random() < 0.3:
        out["maxSteps"] = rng.randint(0, 5)
    if rng.random() < 0.2:
        out["maxTotalTokens"] = rng.randint(0, 120)
    if rng.random() < 0.2:
        out["maxTotalDurationMs"] = 1000 * rng.randint(0, 6)
    if rng.random() < 0.3:
        out["noRedundantCalls"] = rng.random() < 0.7
    if rng.random() < 0.2:
        out["blacklistedTools"] = [rng.choice(NAMES)]
    if rng.random() < 0.2:
        out["blacklistedSequences"] = [[rng.choice(NAMES), rng.choice(NAMES)]]
    if rng.random() < 0.3:
        out["maxRetriesPerTool"] = rng.randint(0, 2)
    return out


def cases() -> list[dict[str, Any]]:
    rng = random.Random(13)  # noqa: S311 - a reproducible corpus, not a secret
    found: list[dict[str, Any]] = []
    for index in range(300):
        actual = [step(rng) for _ in range(rng.randint(0, 6))]
        output: dict[str, Any] = {"steps": actual}
        if rng.random() < 0.3:
            output["totalDurationMs"] = 1000 * rng.randint(0, 8)
        if index % 2 == 0:
            options: dict[str, Any] = {}
            factory_steps = rng.random() < 0.7
            if factory_steps:
                options["expectedTrajectory"] = [expected_step(rng, actual)
                                                 for _ in range(rng.randint(0, 4))]
            if rng.random() < 0.6:
                options["comparisonOptions"] = {
                    "ordering": rng.choice(["strict", "relaxed", "unordered"]),
                    "allowRepeatedSteps": rng.random() < 0.5}
            item = None
            if not factory_steps or rng.random() < 0.3:
                item = expectation(rng, actual)
                for key in list(item):
                    if key not in ("steps", "ordering", "allowRepeatedSteps"):
                        del item[key]
            found.append({"scorer": "accuracy", "options": options, "output": output,
                          "expectedTrajectory": item})
        else:
            options = {}
            if rng.random() < 0.7:
                options["defaults"] = expectation(rng, actual)
            if rng.random() < 0.3:
                options["weights"] = {"accuracy": rng.choice([0, 0.4, 1]),
                                      "efficiency": rng.choice([0, 0.3]),
                                      "toolFailures": 0.2, "blacklist": 0.1}
            item = expectation(rng, actual) if rng.random() < 0.6 else None
            found.append({"scorer": "unified", "options": options, "output": output,
                          "expectedTrajectory": item})
    return found


if __name__ == "__main__":
    json.dump(cases(), sys.stdout)
