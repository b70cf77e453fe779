"""Benchmark: the store's read commands and write path as batches grow.

Read: builds two batches of N rows each (N / 2 items x 2 scorers, rows shaped like those of
``scorecore eval``: ~500 characters, scorer JSON with its fingerprint, metadata) straight into
a SQLite store, then runs ``scorecore show``, ``scorecore report`` (alone, with
``--baseline``, and with ``--labels`` for 200 items), ``scorecore compare``, ``scorecore
calibrate`` (the same labels; text and ``--json``) and ``scorecore plan`` (from the pair, and
from one batch) on them, each in its own process, and prints the wall time and the process's
peak RSS.
Targets: the compare of two 1,000,000-row batches in <= 60 s and <= 300 MB; ``show`` and
``report`` peak RSS flat in N.

Write: ``scorecore eval --store sqlite:...`` over N items x 2 trivial scorers (2N rows),
against ``run_evals`` without a store and a bare ``executemany`` of the same rows into an
empty table (the floor). Target: stored rows within 2x of the bare insert (>= 45,000 rows/s).
With ``SCORECORE_TEST_POSTGRES_DSN`` set, the same eval into PostgreSQL too.

    .venv/bin/python benchmarks/store_scale.py read 100000 [1000000 ...] [--only=show,compare]
    .venv/bin/python benchmarks/store_scale.py read 1000000 --only=compare --db=/tmp/scale.db

``--db=PATH`` keeps the store there and reuses it when it already holds that size (building
a million-row pair takes minutes; with several sizes, PATH gets the size as a suffix).
    .venv/bin/python benchmarks/store_scale.py write 50000
    SCORECORE_TEST_POSTGRES_DSN=... .venv/bin/python benchmarks/store_scale.py pg 100000
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio

from scorecore.evals import run_evals
from scorecore_adapters.storage._schema import DEFAULT_TABLE, WRITTEN, q, schema, upsert_sql

PYTHON = sys.executable
# The code measured (STORE_SCALE_ROOT: another checkout, to measure it before a change).
ROOT = Path(os.environ.get("STORE_SCALE_ROOT") or Path(__file__).resolve().parent.parent)
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'adapters'}"}
SCORERS = '''
from scorecore import create_scorer
exact = create_scorer(id="exact", description="exact").generate_score(
    lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
length = create_scorer(id="length", description="length").generate_score(
    lambda ctx: min(1.0, len(str(ctx.run.output)) / 10))
'''
_FINGERPRINT = {"exact": "6f" * 32, "length": "a1" * 32}


def _record(batch: str, item: int, scorer: str, score: float) -> tuple[Any, ...]:
    stamp = "2026-01-01T00:00:00+00:00"
    item_id = f"item-{item}"
    run_id = f"{batch}:{item_id}"
    values = {
        "id": f"{run_id}/{scorer}", "scorerId": scorer, "runId": run_id, "batchId": batch,
        "status": "scored", "score": score, "reason": None,
        "scorer": json.dumps({"id": scorer, "name": scorer, "description": scorer,
                              "hasJudge": False, "fingerprint": _FINGERPRINT[scorer]}),
        "input": json.dumps(f"question {item}: what is the answer to this one?"),
        "output": json.dumps(f"answer {item % 7}"),
        "additionalContext": json.dumps({"groundTruth": f"answer {item % 5}"}),
        "source": "TEST", "datasetItemId": item_id,
        "metadata": json.dumps({"status": "scored", "itemIndex": item,
                                "fingerprint": _FINGERPRINT[scorer]}),
        "createdAt": stamp, "updatedAt": stamp,
    }
    return tuple(values.get(column) for column in WRITTEN)


def _records(batch: str, items: int, shift: int) -> Iterator[tuple[Any, ...]]:
    for item in range(items):
        yield _record(batch, item, "exact", float((item + shift) % 5 == item % 7 % 5))
        yield _record(batch, item, "length", ((item * 7 + shift) % 11) / 10)


def build(db: Path, batch: str, rows: int, shift: int) -> float:
    """Store a batch of ``rows`` rows (``rows / 2`` items x 2 scorers); seconds taken."""
    start = time.perf_counter()
    conn = sqlite3.connect(db)
    for statement in schema(DEFAULT_TABLE, "sqlite"):
        conn.execute(statement)
    conn.executemany(upsert_sql(DEFAULT_TABLE, ["?"] * len(WRITTEN)),
                     _records(batch, rows // 2, shift))
    conn.commit()
    conn.close()
    return time.perf_counter() - start


def measure(args: Sequence[str], cwd: Path) -> tuple[float, float, float, int]:
    """Run ``scorecore ARGS``: wall seconds, CPU seconds, peak RSS in MB, exit code."""
    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        child = subprocess.Popen([PYTHON, "-m", "scorecore_adapters", *args], cwd=cwd, env=ENV,  # noqa: S603 - our own command line
                                 stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    assert child.stderr is not None
    err = child.stderr.read().decode()
    child.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 3):
        raise SystemExit(f"scorecore {' '.join(args)} exited {code}: {err[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


def _built(db: Path, rows: int) -> bool:
    """Whether ``db`` holds both batches of ``rows`` rows (from an earlier run)."""
    if not db.exists():
        return False
    conn = sqlite3.connect(db)
    try:
        sql = f"SELECT COUNT(*) FROM {q(DEFAULT_TABLE)}"  # noqa: S608 - fixed names
        return bool(conn.execute(sql).fetchone()[0] == 2 * (rows // 2) * 2)
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def read(sizes: Sequence[int], commands: Sequence[str], kept: Path | None = None) -> None:
    for rows in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            where = Path(tmp)
            db = where / "scores.db"
            if kept is not None:
                db = kept if len(sizes) == 1 else kept.with_name(f"{kept.name}.{rows}")
            if kept is not None and _built(db, rows):
                took = 0.0
            else:
                db.unlink(missing_ok=True)
                took = build(db, "base", rows, 0) + build(db, "new", rows, 1)
            store = f"sqlite:{db}"
            labels = where / "labels.jsonl"
            labels.write_text("".join(json.dumps({"id": f"item-{i}", "label": i % 3 != 0})
                                      + "\n" for i in range(0, min(400, rows // 2), 2)),
                              encoding="utf-8")
            print(f"store_scale read: 2 batches of {rows:,} rows ({rows // 2:,} items x 2 "
                  f"scorers), {f'built in {took:.1f} s' if took else 'reused'}, "
                  f"{db.stat().st_size / 2**20:.0f} MB")
            for name, args in (
                ("show", ["show", "new", "--store", store]),
                ("show --json", ["show", "new", "--store", store, "--json"]),
                ("report", ["report", "new", "--store", store, "-o", str(where / "r.html")]),
                ("report --baseline", ["report", "new", "--store", store, "--baseline", "base",
                                       "-o", str(where / "r.html")]),
                ("report --labels", ["report", "new", "--store", store, "--labels", str(labels),
                                     "-o", str(where / "r.html")]),
                ("compare", ["compare", "base", "new", "--store", store]),
                ("calibrate", ["calibrate", "new", "--store", store, "--labels", str(labels)]),
                ("calibrate --json", ["calibrate", "new", "--store", store, "--labels",
                                      str(labels), "--json"]),
                # plan pairs "new" with "base" (the ledger's batches of the same cases), or,
                # from "base" (no batch before it), reads one batch's scores.
                ("plan", ["plan", "--dataset", "bench.jsonl", "--effect", "0.05", "--store",
                          store]),
                ("plan one batch", ["plan", "--dataset", "bench.jsonl", "--effect", "0.05",
                                    "--baseline", "base", "--store", store]),
            ):
                if name.split()[0] == "plan" and "plan" in commands:
                    anyio.run(_ledger, store, rows)
                if name.split()[0] not in commands:
                    continue
                elapsed, cpu, rss, code = measure(args, where)
                print(f"  {name:<17} {elapsed:7.2f} s (CPU {cpu:7.2f} s)  peak RSS {rss:7.1f} MB  "
                      f"exit {code}")
            paired = ROOT / "adapters/scorecore_adapters/storage/_paired.py"
            if "compare" in commands and paired.exists():
                took, pairs = anyio.run(_pairing, store)
                print(f"  of which the store's pairing: {took:.2f} s for {pairs:,} pairs (the "
                      f"rest of compare is its statistics: the bootstrap of each scorer's "
                      f"deltas, 1,000 resamples)")


async def _ledger(url: str, rows: int) -> None:
    """Both batches in the store's ledger, as two runs of the same cases (what ``plan``
    reads to find the pair); a batch recorded already keeps its record."""
    from scorecore_adapters.storage import (  # noqa: PLC0415 - the plan cases only
        Experiment,
        ExperimentScorer,
        ExperimentStore,
    )

    scorers = tuple(ExperimentScorer(id=sid, fingerprint=fp) for sid, fp in _FINGERPRINT.items())
    async with ExperimentStore(url) as ledger:
        for batch in ("base", "new"):
            dataset = {"name": None, "version": "bench", "cases": "bench",
                       "file": "bench.jsonl", "items": rows // 2}
            await ledger.start(Experiment(batch_id=batch, dataset=dataset, scorers=scorers),
                               items={})
            await ledger.finish(batch, verdict="passed", means={})


async def _pairing(url: str) -> tuple[float, int]:
    """Seconds the store takes to stream every pair of the two batches, and their count."""
    from contextlib import aclosing  # noqa: PLC0415 - only for the pairing figure

    from scorecore_adapters.storage import open_store  # noqa: PLC0415

    start = time.perf_counter()
    count = 0
    async with open_store(url, read_only=True) as store, \
            aclosing(store.paired_scores("base", "new")) as pages:
        async for pairs in pages:
            count += len(pairs)
    return time.perf_counter() - start, count


def write(items: int) -> None:
    scorers_py = SCORERS
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        (where / "scorers.py").write_text(scorers_py)
        data = where / "items.jsonl"
        with data.open("w") as f:
            for i in range(items):
                f.write(json.dumps({"id": f"item-{i}", "input": f"question {i}: what is it?",
                                    "output": f"answer {i % 7}",
                                    "ground_truth": f"answer {i % 5}"}) + "\n")
        rows = 2 * items
        print(f"store_scale write: {items:,} items x 2 trivial scorers = {rows:,} rows")
        namespace: dict[str, Any] = {}
        exec(compile(scorers_py, "scorers.py", "exec"), namespace)  # noqa: S102 - our text

        async def bare() -> None:
            lines = (json.loads(line) for line in data.open())
            await run_evals(lines, [namespace["exact"], namespace["length"]])

        async def stored() -> None:
            from scorecore_adapters.storage import SqliteScoreStore  # noqa: PLC0415

            lines = (json.loads(line) for line in data.open())
            async with SqliteScoreStore(where / "in-process.db") as store:
                await run_evals(lines, [namespace["exact"], namespace["length"]], store=store,
                                batch_id="in-process")

        # CPU time of this process (all its threads): on a shared machine, wall time measures
        # the neighbours as much as the code.
        start = time.process_time()
        anyio.run(bare)
        without = time.process_time() - start
        start = time.process_time()
        anyio.run(stored)
        with_store = time.process_time() - start
        extra = with_store - without
        print(f"  run_evals, no store      {without:7.2f} s CPU")
        print(f"  run_evals, SQLite store  {with_store:7.2f} s CPU: {extra:.2f} s more, "
              f"{rows / extra:,.0f} stored rows/s ({1e6 * extra / rows:.0f} us a row: building, "
              f"sanitizing, encoding, inserting)")
        stores = [("sqlite file", f"sqlite:{where / 'w.db'}"),
                  ("sqlite::memory:", "sqlite::memory:")]
        dsn = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")
        if dsn:
            stores.append(("postgresql", dsn))
        for label, url in stores:
            batch = f"w{time.time_ns()}"
            elapsed, cpu, rss, code = measure(
                ["eval", str(where / "scorers.py"), "--data", str(data), "--store", url,
                 "--no-cache", "--batch-id", batch, "--max-failures", "0"], where)
            print(f"  eval --store {label:<16} {elapsed:7.2f} s (CPU {cpu:6.2f} s)  "
                  f"{rows / elapsed:9,.0f} rows/s (whole command)  peak RSS {rss:6.1f} MB  "
                  f"exit {code}")
        # The floor: the same stored rows, one executemany into an empty table.
        conn = sqlite3.connect(where / "w.db")
        columns = ", ".join(q(c) for c in WRITTEN)
        sql = f"SELECT {columns} FROM {q(DEFAULT_TABLE)}"  # noqa: S608 - fixed names
        stored = conn.execute(sql).fetchall()
        conn.close()
        floor = sqlite3.connect(where / "floor.db")
        floor.execute(f"CREATE TABLE t ({', '.join(q(c) for c in WRITTEN)})")
        marks = ", ".join("?" * len(WRITTEN))
        start = time.process_time()
        floor.executemany(f"INSERT INTO t VALUES ({marks})", stored)  # noqa: S608 - fixed names
        floor.commit()
        elapsed = time.process_time() - start
        floor.close()
        print(f"  bare executemany         {elapsed:7.2f} s CPU  "
              f"{len(stored) / elapsed:9,.0f} rows/s "
              f"({len(stored):,} rows, {len(WRITTEN)} columns)")


def _backend_cpu(pid: int) -> float | None:
    """CPU seconds the PostgreSQL backend ``pid`` has used (None: a server on another host)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Clocks:
    """Wall time, this process's CPU time and the server backend's CPU time of a block."""

    def __init__(self, backend: int) -> None:
        self.backend = backend
        self.wall = self.cpu = 0.0
        self.server: float | None = None

    def __enter__(self) -> _Clocks:
        self._start = (time.perf_counter(), time.process_time(), _backend_cpu(self.backend))
        return self

    def __exit__(self, *_: object) -> None:
        wall, cpu, server = self._start
        self.wall = time.perf_counter() - wall
        self.cpu = time.process_time() - cpu
        end = _backend_cpu(self.backend)
        self.server = None if server is None or end is None else end - server

    def line(self, label: str, rows: int) -> str:
        server = "n/a" if self.server is None else f"{self.server:5.2f} s"
        both = "" if self.server is None else (
            f", {rows / (self.cpu + self.server):8,.0f} rows per CPU-second (both)")
        return (f"  {label:<40} wall {self.wall:6.2f} s {rows / self.wall:8,.0f} rows/s;  "
                f"CPU here {self.cpu:5.2f} s, server {server}{both}")


def pg_copy(rows: int) -> None:
    """PostgreSQL: the store's save, 1,000 rows a call, by an upsert per row (executemany,
    pipelined) and by COPY (into its staging table, then one INSERT ... SELECT ... ON
    CONFLICT), and by COPY 144 rows a call (the size of ``scorecore eval``'s saves); then
    psycopg's COPY of the same records alone: into a fresh table, and into a temporary one
    then upserted, in one transaction and 1,000 rows a transaction.

    Wall time, this process's CPU time and the server backend's (when the server runs on
    this machine): on a shared machine the CPU times are the figures to compare."""
    import psycopg  # noqa: PLC0415 - only with a PostgreSQL server

    from scorecore.evals import ScoreRow  # noqa: PLC0415
    from scorecore.evals.store import storable_row  # noqa: PLC0415
    from scorecore_adapters.storage import PostgresScoreStore  # noqa: PLC0415
    from scorecore_adapters.storage import _postgres as store_module  # noqa: PLC0415
    from scorecore_adapters.storage._schema import params_of  # noqa: PLC0415

    dsn = os.environ["SCORECORE_TEST_POSTGRES_DSN"]
    table = f"scale_{time.time_ns()}"
    items = rows // 2
    made = [ScoreRow(id=f"r{i}/{s}", scorer_id=s, run_id=f"b:item-{i}", batch_id="b",
                     status="scored", score=(i % 7) / 6, input=f"question {i}: what is it?",
                     output=f"answer {i % 7}", dataset_item_id=f"item-{i}",
                     scorer={"id": s, "name": s, "fingerprint": _FINGERPRINT[s]},
                     additional_context={"groundTruth": f"answer {i % 5}"},
                     metadata={"status": "scored", "itemIndex": i})
            for i in range(items) for s in ("exact", "length")]

    made = [storable_row(row) for row in made]  # as run_evals hands them over
    n = len(made)
    print(f"store_scale pg: {n:,} rows, load average {os.getloadavg()[0]:.2f} at the start")

    async def save(threshold: int, page: int = 1000) -> _Clocks:
        # COPY_FROM: the save's row count from which the store copies (a huge one: never).
        store_module.COPY_FROM = threshold
        async with PostgresScoreStore(dsn, table=table) as store:
            await store.save(made[:1])  # the table, before the clock starts
            connection = store._aconn or store._conn  # its backend, for its CPU time
            with _Clocks(connection.info.backend_pid) as clocks:
                for at in range(0, len(made), page):
                    await store.save(made[at:at + page])
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"TRUNCATE {q(table)}")  # type: ignore[arg-type]
        return clocks

    copy_from = store_module.COPY_FROM
    print(anyio.run(save, 10**9).line("store.save, upsert each", n))
    print(anyio.run(save, copy_from).line("store.save, by COPY", n))
    # scorecore eval's saves: what its writer finds queued, 72 items x 2 scorers here.
    print(anyio.run(save, copy_from, 144).line("store.save, by COPY, 144 a call", n))
    start = time.process_time()
    records = params_of(made, "2026-01-01T00:00:00+00:00", "pg")
    print(f"  (the store's part of both: making the rows' parameters, "
          f"{time.process_time() - start:.2f} s CPU; the rest is psycopg's and the server's)")
    names = ", ".join(q(c) for c in WRITTEN)
    with psycopg.connect(dsn, autocommit=True) as conn:
        backend = conn.info.backend_pid
        conn.execute(f"CREATE TABLE {q(table + '_copy')} (LIKE {q(table)})")  # type: ignore[arg-type]
        with _Clocks(backend) as clocks, conn.transaction(), conn.cursor() as cur, \
                cur.copy(f"COPY {q(table + '_copy')} ({names}) FROM STDIN") as copy:  # type: ignore[arg-type]
            for record in records:
                copy.write_row(record)
        print(clocks.line("COPY into a fresh table", n))
        for page in (n, 1000):
            conn.execute(f"TRUNCATE {q(table)}")  # type: ignore[arg-type]
            with _Clocks(backend) as clocks:
                for at in range(0, n, page):
                    with conn.transaction(), conn.cursor() as cur:
                        cur.execute(f"CREATE TEMP TABLE incoming (LIKE {q(table)}) "  # type: ignore[arg-type]
                                    f"ON COMMIT DROP")
                        with cur.copy(f"COPY incoming ({names}) FROM STDIN") as copy:  # type: ignore[arg-type]
                            for record in records[at:at + page]:
                                copy.write_row(record)
                        cur.execute(f"INSERT INTO {q(table)} ({names}) SELECT {names} "  # type: ignore[arg-type]  # noqa: S608 - fixed names
                                    f"FROM incoming ON CONFLICT (\"runId\", \"scorerId\") "
                                    f"DO NOTHING")
            print(clocks.line(f"COPY to temp + INSERT SELECT, {page:,}/txn", n))
        conn.execute(f"DROP TABLE {q(table)}, {q(table + '_copy')}")  # type: ignore[arg-type]


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "read"
    sizes = [int(a) for a in sys.argv[2:] if a.isdigit()]
    # --only show,compare: the commands to run (all four by default).
    only = [a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith("--only=")]
    commands = only[0].split(",") if only else ["show", "report", "compare", "calibrate",
                                                "plan"]
    kept = [Path(a.split("=", 1)[1]) for a in sys.argv[2:] if a.startswith("--db=")]
    if mode == "read":
        read(sizes or [100_000], commands, kept[0] if kept else None)
    elif mode == "write":
        write(sizes[0] if sizes else 50_000)
    elif mode == "pg":
        pg_copy(sizes[0] if sizes else 100_000)
    else:
        raise SystemExit("usage: store_scale.py read|write [N ...]")


if __name__ == "__main__":
    main()
