"""Scorers the Ray actors build (by reference ``tests.ray._scorers:NAME``), and their items.

A function scorer, a judge scorer answered by a deterministic fake judge (a failing judge for
some items), a scorer that is not scorable for some items, and a poison item whose scorer
raises. Actors import this module by name, so everything here is module-level.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import Any

from scorecore import JudgeConfig, PromptStep, Scorer, create_scorer, not_scorable
from scorecore.judge import JudgeRequest
from scorecore_adapters.testing import FunctionJudge, judge_error

POISON = "poison"
"""An item input whose scorer raises: one failed row, never a failed job."""

KILL_ENV = "SCORECORE_TEST_RAY_KILL_ONCE"
"""A path: the first actor to score the input ``"kill-me"`` creates it and kills itself."""


def _judge(request: JudgeRequest) -> Any:
    text = request.messages[-1].content
    digest = zlib.crc32(text.encode())
    if digest % 17 == 0:
        return judge_error(503, message="fake overload")
    return {"claims": [f"c{i}" for i in range(digest % 5)]}


def _length(ctx: Any) -> float:
    if ctx.run.input == POISON:
        raise RuntimeError("poisoned item")
    if ctx.run.input == "kill-me":
        _kill_once()
    return (len(str(ctx.run.output)) % 7) / 7


def _kill_once() -> None:
    marker = os.environ.get(KILL_ENV)
    if not marker:
        return
    try:
        Path(marker).touch(exist_ok=False)
    except FileExistsError:
        return
    import ray  # noqa: PLC0415 - only inside a Ray actor

    ray.kill(ray.get_runtime_context().current_actor, no_restart=False)


def _exact(ctx: Any) -> Any:
    if ctx.run.ground_truth is None:
        return not_scorable("no ground truth")
    return float(ctx.run.output == ctx.run.ground_truth)


def make() -> list[Scorer[Any, Any]]:
    """The three scorers every equality test runs."""
    judge = JudgeConfig(model=FunctionJudge(_judge), instructions="Find unsupported claims.")
    claims = (
        create_scorer(id="claims", description="Unsupported claims", judge=judge)
        .analyze(PromptStep(
            description="List claims",
            output_schema={"type": "object", "properties": {"claims": {
                "type": "array", "items": {"type": "string"}}}, "required": ["claims"]},
            create_prompt=lambda ctx: f"Claims in: {ctx.run.output}",
        ))
        .generate_score(lambda ctx: 1.0 - len(ctx.results.analyze_step_result["claims"]) / 5)
    )
    exact = create_scorer(id="exact", description="Exact match").generate_score(_exact)
    length = create_scorer(id="length", description="Length mod 7").generate_score(_length)
    return [claims, exact, length]


def items(n: int) -> list[dict[str, Any]]:
    """``n`` items: ids on two thirds, ground truth on most, one repeated id, one poison."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        item: dict[str, Any] = {"input": f"question {i}", "output": f"answer {i % 11}"}
        if i % 3:
            item["id"] = f"item-{i}"
        if i % 10:
            item["ground_truth"] = f"answer {i % 7}"
        out.append(item)
    out[n // 2] = {"input": POISON, "output": "x", "id": "poison"}
    out.append({"input": "again", "output": "y", "id": "item-1"})  # a repeated id
    out.append({"output": "no input"})  # not an item
    return out

