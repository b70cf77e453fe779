"""Benchmark 1: 10,000 trivial items, one function scorer, through run_evals.

Target: <= 0.25 s and <= 60 MB peak. Time is measured without tracing; the peak
is tracemalloc's peak of Python allocations during a second, traced run, plus the process's
ru_maxrss (whole interpreter, imports included) for reference.

    .venv/bin/python benchmarks/evals_trivial.py [N]
"""

from __future__ import annotations

import gc
import resource
import sys
import time
import tracemalloc

import anyio

from scorecore import create_scorer
from scorecore.evals import run_evals

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
scorer = create_scorer(id="exact", description="exact").generate_score(
    lambda ctx: float(ctx.run.output == ctx.run.ground_truth)
)


async def once() -> float:
    data = ({"input": i, "output": i, "ground_truth": i} for i in range(N))
    start = time.perf_counter()
    report = await run_evals(data, [scorer])
    elapsed = time.perf_counter() - start
    assert report.summary("exact").scored == N
    return elapsed


def main() -> None:
    anyio.run(once)  # warm-up
    gc.collect()
    times = sorted(anyio.run(once) for _ in range(5))
    tracemalloc.start()
    anyio.run(once)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"evals_trivial: {N} items, 1 function scorer, concurrency 8")
    print(f"  time: best {times[0]:.3f} s, median {times[2]:.3f} s "
          f"({N / times[2]:,.0f} items/s)   target <= 0.25 s")
    print(f"  peak traced allocations: {peak / 2**20:.1f} MB   target <= 60 MB")
    print(f"  process max RSS (interpreter + imports): {rss:.1f} MB")


if __name__ == "__main__":
    main()
