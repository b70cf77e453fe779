"""A 20 % chaos storm of transient provider faults over 10,000 judge calls, in virtual time.

The scenario of docs/testing.md ("A chaos storm"): a scorer whose judge is a ``ChaosJudge``
(every transient fault kind, rate 0.2) with ``StreamErrorRetryProcessor(max_retries=8,
delay=0.5)``, run one call after another until the judge has answered 10,000 calls, on a
``virtual_runtime``. Prints, per backend, the best of ``--repeats`` rounds: wall time, CPU time
of this process, judge calls, faults injected, runs scored and the virtual seconds slept.

Run: ``.venv/bin/python benchmarks/chaos_storm.py [--calls N] [--repeats N]``
"""

from __future__ import annotations

import argparse
import time

import anyio

from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore_adapters.retry import StreamErrorRetryProcessor
from scorecore_adapters.testing import (
    ALL_FAULTS,
    ChaosJudge,
    FaultPlan,
    FunctionJudge,
    virtual_runtime,
)

TRANSIENT = tuple(k for k in ALL_FAULTS
                  if k not in ("malformed_json", "schema_invalid", "truncated"))


def wall_clock() -> float:
    return 1_700_000_000.0


def storm(calls: int, backend: str, seed: int) -> tuple[float, float, str]:
    judge = ChaosJudge(FunctionJudge(lambda request: {"score": 0.9}),
                       plan=FaultPlan(rate=0.2, kinds=TRANSIENT, seed=seed), now=wall_clock)
    scorer = create_scorer(
        id="helpfulness", description="d",
        judge=JudgeConfig(
            model=judge, instructions="Be strict.", max_processor_retries=8,
            error_processors=[StreamErrorRetryProcessor(max_retries=8, delay=0.5,
                                                        now=wall_clock)],
        ),
    ).generate_score(ScorePromptStep(description="rate", create_prompt=lambda ctx: "Rate it."))
    runtime, clock = virtual_runtime()

    async def main() -> int:
        scored = 0
        while judge.calls < calls:
            result = await scorer.run(input="q", output="a", runtime=runtime)
            scored += result.unwrap().score == 0.9
        return scored

    wall, cpu = time.perf_counter(), time.process_time()
    scored = anyio.run(main, backend=backend)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    facts = (f"{judge.calls} calls, {len(judge.injected)} faults, {scored} runs scored, "
             f"{clock():,.0f} virtual s slept")
    return wall, cpu, facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for backend in ("asyncio", "trio"):
        rounds = [storm(args.calls, backend, seed=1) for _ in range(args.repeats)]
        wall = min(r[0] for r in rounds)
        cpu = min(r[1] for r in rounds)
        print(f"{backend:8} wall {wall:.3f} s  cpu {cpu:.3f} s  ({rounds[0][2]})")


if __name__ == "__main__":
    main()
