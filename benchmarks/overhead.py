"""Per-run overhead of a scorer with four trivial function steps.

Prints runs/s sequentially and 100 at a time (anyio task group), and peak traced memory.
Target (design.md §8): >= 30,000 runs/s sequentially on a 2-core machine.

Run: ``.venv/bin/python benchmarks/overhead.py [--runs N] [--backend asyncio|trio]``
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import anyio

from scorecore import Runtime, create_scorer

SCORER = (
    create_scorer(id="trivial", description="four trivial function steps")
    .preprocess(lambda ctx: ctx.run.output)
    .analyze(lambda ctx: ctx.results.preprocess_step_result)
    .generate_score(lambda ctx: 1.0)
    .generate_reason(lambda ctx: "ok")
)
_counter = iter(range(10**12))
RUNTIME = Runtime(new_id=lambda: f"r{next(_counter)}")


async def sequential(runs: int) -> float:
    start = time.perf_counter()
    for _ in range(runs):
        result = await SCORER.run(input="q", output="a", runtime=RUNTIME)
        assert result.unwrap().score == 1.0
    return time.perf_counter() - start


async def batched(runs: int, width: int = 100) -> float:
    async def one() -> None:
        result = await SCORER.run(input="q", output="a", runtime=RUNTIME)
        assert result.unwrap().score == 1.0

    start = time.perf_counter()
    for _ in range(runs // width):
        async with anyio.create_task_group() as tg:
            for _ in range(width):
                tg.start_soon(one)
    return time.perf_counter() - start


async def main(runs: int) -> None:
    await sequential(2_000)  # warm up
    best_seq = min([await sequential(runs) for _ in range(3)])
    best_batch = min([await batched(runs) for _ in range(3)])
    tracemalloc.start()
    await sequential(runs // 10)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"sequential: {runs / best_seq:,.0f} runs/s ({runs} runs, best of 3)")
    print(f"100 at a time: {runs / best_batch:,.0f} runs/s ({runs} runs, best of 3)")
    print(f"peak traced memory during {runs // 10} sequential runs: {peak / 1024:,.0f} KiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--backend", default="asyncio", choices=["asyncio", "trio"])
    args = parser.parse_args()
    print(f"backend: {args.backend}")
    anyio.run(main, args.runs, backend=args.backend)
