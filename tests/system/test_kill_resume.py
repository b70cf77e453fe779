"""After kill -9 mid-batch, the resume asks the judge nothing it had already answered."""

from __future__ import annotations

import sqlite3
import sys
import textwrap
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore import Runtime
from scorecore.evals import run_evals
from scorecore.judge.economics import JudgeMeter, cache_key
from scorecore_adapters.cache import SqliteJudgeCache
from scorecore_adapters.storage import open_store
from tests.judged_scorers import StepJudge, judged_scorer

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]
CONCURRENCY = 4

_BATCH = textwrap.dedent('''
    import os, signal, sys
    import anyio
    from scorecore.evals import run_evals
    from scorecore_adapters.cache import SqliteJudgeCache
    from scorecore_adapters.storage import open_store
    from tests.judged_scorers import StepJudge, judged_scorer

    class Killer(StepJudge):
        async def generate(self, request, /):
            if sum(self.calls.values()) == int(sys.argv[3]):
                os.kill(os.getpid(), signal.SIGKILL)  # mid-batch, inside a judge call
            return await super().generate(request)

    async def main():
        items = [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(40)]
        async with open_store(f"sqlite:{sys.argv[1]}") as store:
            await run_evals(items, [judged_scorer(Killer())], store=store, batch_id="b",
                            cache=SqliteJudgeCache(sys.argv[2]), concurrency=int(sys.argv[4]))

    anyio.run(main)
''')


_SLOW_BATCH = textwrap.dedent('''
    import os, signal, sys
    import anyio
    from scorecore.evals import run_evals
    from scorecore_adapters.cache import SqliteJudgeCache
    from scorecore_adapters.storage import open_store
    from tests.judged_scorers import StepJudge, judged_scorer

    class SlowKiller(StepJudge):
        started = 0

        async def generate(self, request, /):
            SlowKiller.started += 1
            if SlowKiller.started == int(sys.argv[3]):
                os.kill(os.getpid(), signal.SIGKILL)  # with other calls in flight
            await anyio.sleep(0.01 * (1 + SlowKiller.started % 3))
            return await super().generate(request)

    async def main():
        items = [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(40)]
        async with open_store(f"sqlite:{sys.argv[1]}") as store:
            await run_evals(items, [judged_scorer(SlowKiller())], store=store, batch_id="b",
                            cache=SqliteJudgeCache(sys.argv[2]), concurrency=int(sys.argv[4]))

    anyio.run(main)
''')


def _cached_keys(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as conn, conn:
        return {k for (k,) in conn.execute("SELECT key FROM scorecore_judge_cache")}


async def test_resume_after_kill_makes_no_call_that_already_succeeded(tmp_path: Path) -> None:
    """Per step: every reply stored before the kill is read back, never asked again."""
    store_path, cache_path = tmp_path / "scores.db", tmp_path / "cache.db"
    with anyio.fail_after(120):
        done = await anyio.run_process(
            [sys.executable, "-c", _BATCH, str(store_path), str(cache_path), "53",
             str(CONCURRENCY)],
            cwd=ROOT, check=False,
        )
    assert done.returncode == -9, done.stderr.decode()
    answered = _cached_keys(cache_path)
    # 54 calls started, the 54th was killed. A step goes on only once its reply is committed,
    # and an item makes one judge call at a time, so the replies lost are those of the items
    # in flight at the kill: at most concurrency (4) calls are asked again, the killed one
    # included (docs/economics.md, "Resume after a kill", states this bound).
    assert 54 - CONCURRENCY <= len(answered) <= 53

    judge = StepJudge()
    async with open_store(f"sqlite:{store_path}") as store, SqliteJudgeCache(cache_path) as cache:
        # On a loaded machine the kill can come before the writer's first commit: then the
        # store does not know the batch yet and the re-run starts it (the cache still holds
        # every answered reply, which is what this law is about).
        known = await store.has_batch("b")
        report = await run_evals(
            [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(40)],
            [judged_scorer(judge)], store=store, batch_id="b", resume=known,
            cache=cache, concurrency=4,
        )
    assert report.summary("judged").scored == 40
    asked = {cache_key(r, provider="test", model_id="step-judge") for r in judge.requests}
    assert not asked & answered
    assert len(asked) == len(judge.requests) == 120 - len(answered)
    # Asked in both runs: the 54 calls the first run started, less those it committed.
    assert 54 - len(answered) <= CONCURRENCY


async def test_a_resume_asks_again_at_most_the_calls_in_flight_at_the_kill(
    tmp_path: Path,
) -> None:
    """A judge that takes 10-30 ms: killed at the start of call 70 with calls in flight, the
    replies lost are at most one per item in flight (concurrency), never more."""
    store_path, cache_path = tmp_path / "scores.db", tmp_path / "cache.db"
    concurrency = 8
    with anyio.fail_after(120):
        done = await anyio.run_process(
            [sys.executable, "-c", _SLOW_BATCH, str(store_path), str(cache_path), "70",
             str(concurrency)],
            cwd=ROOT, check=False,
        )
    assert done.returncode == -9, done.stderr.decode()
    answered = _cached_keys(cache_path)
    assert 70 - concurrency <= len(answered) < 70  # 70 calls started; in flight ones are lost
    judge = StepJudge()
    async with open_store(f"sqlite:{store_path}") as store, SqliteJudgeCache(cache_path) as cache:
        known = await store.has_batch("b")
        await run_evals(
            [{"id": f"q{i}", "input": "q", "output": f"answer {i}"} for i in range(40)],
            [judged_scorer(judge)], store=store, batch_id="b", resume=known,
            cache=cache, concurrency=concurrency,
        )
    asked = {cache_key(r, provider="test", model_id="step-judge") for r in judge.requests}
    assert not asked & answered
    assert len(judge.requests) == 120 - len(answered)


async def test_the_meter_reaches_run_evals_through_the_runtime_too(tmp_path: Path) -> None:
    """A runtime carrying JudgeMeter(cache=...) works like cache=... (the kwargs win)."""
    cache = SqliteJudgeCache(tmp_path / "c.db")
    judge = StepJudge()
    runtime = Runtime(meter=JudgeMeter(cache=cache))
    items: list[Any] = [{"id": "a", "input": "q", "output": "x"}]
    await run_evals(items, [judged_scorer(judge)], runtime=runtime)
    await run_evals(items, [judged_scorer(judge)], runtime=runtime)
    assert sum(judge.calls.values()) == 3
    await cache.aclose()
