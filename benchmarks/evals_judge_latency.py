"""Benchmark 2: a judge with a fixed 50 ms latency at concurrency 50 over 2,000 items.

The ceiling is C / L = 50 / 0.05 s = 1,000 items/s; the target is >= 95 % of it. The judge is
a FunctionJudge that really sleeps (anyio.sleep(0.05)) and answers {"score": 1}.

    .venv/bin/python benchmarks/evals_judge_latency.py [--backend asyncio|trio]
"""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio

from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.evals import run_evals
from scorecore_adapters.testing import FunctionJudge

ITEMS, CONCURRENCY, LATENCY = 2_000, 50, 0.05


async def reply(_: Any) -> Any:
    await anyio.sleep(LATENCY)
    return {"score": 1}


scorer = create_scorer(
    id="judged", description="d",
    judge=JudgeConfig(model=FunctionJudge(reply), instructions="Rate the answer."),
).generate_score(
    ScorePromptStep(description="rate", create_prompt=lambda ctx: f"Rate {ctx.run.output}")
)


async def once() -> float:
    data = ({"input": i, "output": f"answer {i}"} for i in range(ITEMS))
    start = time.perf_counter()
    report = await run_evals(data, [scorer], concurrency=CONCURRENCY)
    elapsed = time.perf_counter() - start
    assert report.summary("judged").scored == ITEMS, report
    return elapsed


def main() -> None:
    backend = sys.argv[sys.argv.index("--backend") + 1] if "--backend" in sys.argv else "asyncio"
    elapsed = anyio.run(once, backend=backend)
    ceiling = CONCURRENCY / LATENCY
    rate = ITEMS / elapsed
    print(f"evals_judge_latency ({backend}): {ITEMS} items, judge latency {LATENCY * 1000:.0f} ms, "
          f"concurrency {CONCURRENCY}")
    print(f"  {elapsed:.2f} s, {rate:,.0f} items/s = {rate / ceiling:.1%} of the {ceiling:,.0f} "
          f"items/s ceiling   target >= 95 %")


if __name__ == "__main__":
    main()
