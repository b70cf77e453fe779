"""Benchmark: `scorecore datasets add` of growing JSONL files keeps memory flat.

For each size (MB), writes a JSONL file of ~1 KB items (an id, an input, an output, a
category), then runs `scorecore datasets add` on it in a fresh process against a new SQLite
store, and prints the wall time, items per second, and the process's peak resident memory
(ru_maxrss), with its CPU seconds (user + system: what a busy machine stretches least). Flat
memory means the peak RSS stays put while the file grows. Then it adds the same file again (its
bytes' hash is known: nothing is read item by item), the same items with the lines in reverse
order (other bytes: read and staged, found stored by their content, nothing written), and
diffs it against a copy with 1 % of the items changed.

    .venv/bin/python benchmarks/datasets_add.py             # 50 and 500 MB
    .venv/bin/python benchmarks/datasets_add.py 100 2000    # sizes in MB (2000: a 2 GB file)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ITEM_BYTES = 1_000


def write_file(path: Path, megabytes: int, *, changed_every: int = 0,
               reverse: bool = False) -> int:
    filler = "x" * (ITEM_BYTES - 120)
    items = megabytes * 1_000_000 // ITEM_BYTES
    with path.open("w") as handle:
        for i in (reversed(range(items)) if reverse else range(items)):
            answer = "changed" if changed_every and i % changed_every == 0 else "4"
            handle.write(json.dumps({"id": f"item-{i:09d}", "input": f"{i} {filler}",
                                     "output": answer, "extra": {"category": i % 7}}) + "\n")
    return items


def run_cli(*argv: str) -> tuple[float, float, float, str]:
    """Wall seconds, the child's CPU seconds (user + system), its peak RSS in MB, and its
    output."""
    # the child reports its own peak (RUSAGE_CHILDREN would keep the largest child's so far);
    # CPU time as well as wall time, because a shared machine's load stretches the wall time
    code = ("import atexit, resource, sys; from scorecore_adapters.cli import main; "
            "u = lambda: resource.getrusage(resource.RUSAGE_SELF); "
            "atexit.register(lambda: print('maxrss', u().ru_maxrss, 'cpu', "
            "u().ru_utime + u().ru_stime, file=sys.stderr)); sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'adapters'}"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,  # noqa: S603 - our own command
                          env=env, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"failed: {done.stderr}")
    tail = done.stderr.split("maxrss")[-1].split()
    peak, cpu = int(tail[0]), float(tail[2])  # ru_maxrss is in kilobytes on Linux
    return elapsed, cpu, peak / 1024, done.stdout.strip()


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [50, 500]
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as folder:
        for megabytes in sizes:
            path = Path(folder) / f"d{megabytes}.jsonl"
            items = write_file(path, megabytes)
            size = path.stat().st_size / 1e6
            store = f"sqlite:{Path(folder) / f's{megabytes}.db'}"
            seconds, cpu, rss, out = run_cli("datasets", "add", "bench", str(path), "--store",
                                             store)
            print(f"add {size:,.0f} MB ({items:,} items): {seconds:.1f} s ({cpu:.1f} s CPU), "
                  f"{items / seconds:,.0f} items/s, peak RSS {rss:.0f} MB  [{out[:60]}]")
            seconds, cpu, rss, out = run_cli("datasets", "add", "bench", str(path), "--store",
                                             store)
            print(f"  again (the same file): {seconds:.1f} s ({cpu:.1f} s CPU), peak RSS "
                  f"{rss:.0f} MB  [{out[:40]}]")
            write_file(path, megabytes, reverse=True)
            seconds, cpu, rss, out = run_cli("datasets", "add", "bench", str(path), "--store",
                                             store)
            print(f"  again (the same items, lines reversed): {seconds:.1f} s ({cpu:.1f} s "
                  f"CPU), peak RSS {rss:.0f} MB  [{out[:40]}]")
            write_file(path, megabytes, changed_every=100)
            run_cli("datasets", "add", "bench", str(path), "--store", store)
            seconds, _, _, out = run_cli("datasets", "diff", "bench@v1", "bench@v2", "--store",
                                      store)
            print(f"  diff v1 v2: {seconds:.1f} s  [{out.splitlines()[0][:90]}]")
            path.unlink()


if __name__ == "__main__":
    main()
