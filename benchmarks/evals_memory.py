"""Benchmark 3: memory stays flat as the dataset grows (10k vs 100k items).

Peak traced Python allocations (tracemalloc) during run_evals over a generator of items, with
one function scorer, without and with a SQLite store (a temporary file).

    .venv/bin/python benchmarks/evals_memory.py
"""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path

import anyio

from scorecore import create_scorer
from scorecore.evals import run_evals
from scorecore_adapters.storage import SqliteScoreStore

scorer = create_scorer(id="exact", description="exact").generate_score(
    lambda ctx: float(ctx.run.output == ctx.run.ground_truth)
)


async def run(n: int, db: Path | None) -> tuple[float, float]:
    data = ({"input": i, "output": i, "ground_truth": i} for i in range(n))
    tracemalloc.start()
    start = time.perf_counter()
    if db is None:
        report = await run_evals(data, [scorer])
    else:
        async with SqliteScoreStore(db) as store:
            report = await run_evals(data, [scorer], store=store, batch_id=f"mem-{n}")
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert report.summary("exact").scored == n
    return peak / 2**20, elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for label, use_store in (("no store", False), ("sqlite store", True)):
            for n in (10_000, 100_000):
                db = Path(tmp) / f"{n}.db" if use_store else None
                peak, elapsed = anyio.run(run, n, db)
                print(f"evals_memory ({label}): {n:>7,} items: peak {peak:6.2f} MB traced, "
                      f"{elapsed:.2f} s (under tracemalloc)")


if __name__ == "__main__":
    main()
