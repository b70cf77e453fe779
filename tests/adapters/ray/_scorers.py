"""Scorers the Ray actors build (by reference ``tests.adapters.ray._scorers:NAME``), and their
items.

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

KILL_ONCE = "kill-me"
"""An item input whose scorer, in a Ray actor, kills that actor once: the first time, it
creates the file its ``extra["marker"]`` names, then ``ray.kill``s its own actor."""

CRASH = "crash-me"
"""An item input whose scorer, in a Ray actor, ends the actor's process every time."""


def _judge(request: JudgeRequest) -> Any:
    text = request.messages[-1].content
    digest = zlib.crc32(text.encode())
    if digest % 17 == 0:
        return judge_error(503, message="fake overload")
    return {"claims": [f"c{i}" for i in range(digest % 5)]}


def _length(ctx: Any) -> float:
    if ctx.run.input == POISON:
        raise RuntimeError("poisoned item")
    if ctx.run.input == KILL_ONCE:
        _kill_once(ctx.run.extra["marker"])
    if ctx.run.input == CRASH and _in_actor():
        os._exit(1)
    return (len(str(ctx.run.output)) % 7) / 7


def _in_actor() -> bool:
    import ray  # noqa: PLC0415 - only the Ray tests use it

    return ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None


def _kill_once(marker: str) -> None:
    if not _in_actor():
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



def slow() -> list[Scorer[Any, Any]]:
    """:func:`make`'s scorers, each item taking a few milliseconds (a driver can be killed
    mid-run)."""
    import time  # noqa: PLC0415 - only here

    def pause(ctx: Any) -> Any:
        time.sleep(0.004)
        return {}

    return [s if s.id != "length" else
            create_scorer(id="length", description="Length mod 7").preprocess(pause)
            .generate_score(_length)
            for s in make()]


_GRADES = {"m1": (0.9, 0.2, 0.6, 0.4), "m2": (0.8, 0.9, 0.6, 0.1), "m3": (0.7, 0.5, 0.3, 0.2)}


def _grade(name: str) -> Scorer[Any, Any]:
    return create_scorer(id=name, description="A member's grade").generate_score(
        lambda ctx: _GRADES[name][int(ctx.run.output.split()[-1]) % 4])


def _prefers_first(request: JudgeRequest) -> Any:
    return {"reason": "A reads better", "winner": "A"}


def trust() -> list[Scorer[Any, Any]]:
    """A panel of three graders and a pairwise judge that always picks the first answer."""
    from scorecore.scorers import TEXT, pairwise, panel  # noqa: PLC0415 - only these tests

    jury = panel([_grade("m1"), _grade("m2"), _grade("m3")], threshold=0.5, id="jury")
    ab = pairwise(FunctionJudge(_prefers_first), criteria="helpfulness", shape=TEXT, id="ab")
    return [jury, ab]


def trust_items(n: int) -> list[dict[str, Any]]:
    """``n`` items for :func:`trust`: an output and a baseline to compare it with."""
    return [{"id": f"t{i}", "input": f"question {i}", "output": f"answer {i}",
             "baseline_output": f"old answer {i}"} for i in range(n)]
