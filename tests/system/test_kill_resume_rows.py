"""A batch killed with SIGKILL mid-run, then resumed, ends with no lost and no duplicate rows."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

ITEMS = 120
SCORERS = ("length", "parity")

SCRIPT = textwrap.dedent(
    """
    import sys, time
    import anyio
    from scorecore import create_scorer
    from scorecore.evals import run_evals
    from scorecore_adapters.storage import SqliteScoreStore

    path, mode, calls_file = sys.argv[1], sys.argv[2], sys.argv[3]

    async def target(item):
        with open(calls_file, "a") as handle:
            handle.write(f"{item.id}\\n")
        await anyio.sleep(0.02)  # a real, short "agent" latency so the kill lands mid-run
        return "x" * item.input

    scorers = [
        create_scorer(id="length", description="d").generate_score(
            lambda ctx: min(1.0, len(ctx.run.output) / 100)),
        create_scorer(id="parity", description="d").generate_score(
            lambda ctx: float(ctx.run.input % 2)),
    ]

    async def main():
        data = ({"input": i, "id": f"item-{i}"} for i in range(__ITEMS__))
        async with SqliteScoreStore(path) as store:
            report = await run_evals(data, scorers, target=target, store=store,
                                     batch_id="killed", resume=(mode == "resume"),
                                     concurrency=4)
        print(report.summary("length").scored, report.summary("parity").scored)

    anyio.run(main)
    """
).replace("__ITEMS__", str(ITEMS))


def _rows(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            'SELECT "runId", "scorerId", "status" FROM scorecore_scores WHERE "batchId" = ?',
            ("killed",),
        ).fetchall()
    except sqlite3.OperationalError:
        return []  # the table does not exist yet
    finally:
        conn.close()


def test_kill_minus_nine_then_resume(tmp_path: Path) -> None:
    """SIGKILL mid-batch, resume: exactly one final row per (item, scorer); work not redone."""
    script = tmp_path / "batch.py"
    script.write_text(SCRIPT)
    db = tmp_path / "scores.db"
    calls = tmp_path / "calls.txt"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(  # noqa: S603 - our own script, fixed arguments
        [sys.executable, str(script), str(db), "run", str(calls)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while len(_rows(db)) < 40:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the batch never stored 40 rows"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    assert proc.returncode == -signal.SIGKILL
    before = _rows(db)
    assert 40 <= len(before) < ITEMS * len(SCORERS), "the kill did not land mid-run"
    assert len(set(before)) == len(before)
    done_items = {run_id for run_id, _, _ in before}

    calls.write_text("")
    resumed = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [sys.executable, str(script), str(db), "resume", str(calls)], env=env,
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.split() == [str(ITEMS), str(ITEMS)]
    after = _rows(db)
    pairs = [(run_id, scorer_id) for run_id, scorer_id, _ in after]
    assert len(pairs) == len(set(pairs)) == ITEMS * len(SCORERS)
    assert {status for _, _, status in after} == {"scored"}
    assert set(pairs) == {(f"killed:item-{i}", s) for i in range(ITEMS) for s in SCORERS}
    # Items whose rows were all stored before the kill were not sent to the target again.
    fully_done = {
        run_id for run_id in done_items
        if all((run_id, s) in {(r, c) for r, c, _ in before} for s in SCORERS)
    }
    rerun = {f"killed:{line}" for line in calls.read_text().split()}
    assert not (rerun & fully_done)
    assert len(rerun) == ITEMS - len(fully_done)


@pytest.mark.anyio
async def test_in_process_cancel_then_resume(anyio_backend: str, tmp_path: Path) -> None:
    """A batch cancelled mid-run (the in-process cousin of a kill) resumes without duplicates."""
    from scorecore import create_scorer  # noqa: PLC0415 - kept next to its only use
    from scorecore.evals import run_evals  # noqa: PLC0415
    from scorecore_adapters.storage import SqliteScoreStore  # noqa: PLC0415

    scorer = create_scorer(id="s", description="d").generate_score(lambda _: 1.0)
    started = anyio.Event()
    count = 0

    async def target(item: object) -> str:
        nonlocal count
        count += 1
        if count == 30:
            started.set()
        await anyio.lowlevel.checkpoint()
        return "out"

    data = [{"input": i, "id": str(i)} for i in range(200)]
    async with SqliteScoreStore(tmp_path / "s.db") as store:
        with anyio.move_on_after(5) as scope:
            async with anyio.create_task_group() as group:
                async def run() -> None:
                    await run_evals(data, [scorer], target=target, store=store, batch_id="c")

                group.start_soon(run)
                await started.wait()
                group.cancel_scope.cancel()
        assert not scope.cancelled_caught
        partial = await store.list_run("c")
        assert len(partial) < 200
        report = await run_evals(data, [scorer], target=target, store=store, batch_id="c",
                                 resume=True)
        rows = await store.list_run("c")
    assert report.summary("s").scored == 200
    assert len(rows) == len({r.run_id for r in rows}) == 200
