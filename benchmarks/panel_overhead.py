"""A three-member panel's wall time against one member's, at the same concurrency.

Each member is the same one-judge-call scorer over a fake judge that answers after a fixed
latency (``--latency``, real sleeps, default 20 ms). The members of a panel run concurrently, so
a panel should cost about one member's time, not three (goal: at most 3.1 times one member's
wall time; a serial fan-out would be about 3 times). Prints items/s and wall time for one
member and for the panel, their ratio, and the judge calls each made.

    .venv/bin/python benchmarks/panel_overhead.py [--items 2000] [--latency 0.02] \
        [--concurrency 32]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import anyio
from returns.result import Success

from scorecore import JudgeConfig, ScorePromptStep, Scorer, create_scorer
from scorecore.evals import run_evals
from scorecore.judge import JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.scorers import panel

GOAL = 3.1


class LatencyJudge:
    """A judge that answers ``{"score": 0.5}`` after ``latency`` seconds."""

    provider = "bench"
    supports_structured_output = False

    def __init__(self, model_id: str, latency: float) -> None:
        self.model_id = model_id
        self.latency = latency
        self.calls = 0

    async def generate(self, request: JudgeRequest, /) -> Any:
        self.calls += 1
        await anyio.sleep(self.latency)
        return Success(JudgeResponse(text='{"score": 0.5}', usage=JudgeUsage(
            input_tokens=50, output_tokens=5)))


def member(name: str, judge: LatencyJudge) -> Scorer[Any, Any]:
    return create_scorer(
        id=name, description="Grades the answer",
        judge=JudgeConfig(model=judge, instructions="You grade answers."),
    ).generate_score(ScorePromptStep(description="grade",
                                     create_prompt=lambda ctx: f"Grade: {ctx.run.output}"))


async def timed(scorer: Scorer[Any, Any], items: int, concurrency: int) -> float:
    data = ({"input": "q", "output": f"answer {i}", "id": str(i)} for i in range(items))
    started = time.perf_counter()
    report = await run_evals(data, [scorer], concurrency=concurrency)
    elapsed = time.perf_counter() - started
    assert report.scorers[0].scored == items, report.scorers
    return elapsed


async def main(items: int, latency: float, concurrency: int) -> float:
    solo_judge = LatencyJudge("judge-0", latency)
    solo = await timed(member("solo", solo_judge), items, concurrency)
    judges = [LatencyJudge(f"judge-{i}", latency) for i in range(3)]
    jury = panel([member(f"m{i}", j) for i, j in enumerate(judges)])
    together = await timed(jury, items, concurrency)
    ratio = together / solo
    print(f"items {items}, judge latency {latency * 1000:.0f} ms, concurrency {concurrency}")
    print(f"one member:     {solo:7.2f} s  {items / solo:8.1f} items/s  "
          f"{solo_judge.calls} judge calls")
    print(f"3-member panel: {together:7.2f} s  {items / together:8.1f} items/s  "
          f"{sum(j.calls for j in judges)} judge calls")
    print(f"panel / one member: {ratio:.2f}x (goal <= {GOAL}x) "
          f"{'OK' if ratio <= GOAL else 'OVER'}")
    return ratio


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    anyio.run(main, args.items, args.latency, args.concurrency)
