"""Response time and memory of ``scorecore view``'s batch page over a 100,000-row store.

    .venv/bin/python benchmarks/view_pages.py [--items 50000] [--runs 5]

The store holds one batch of ``--items`` items scored by two scorers (tests/adapters/view's
rows: a judge scorer with its judge call, a pass/fail check), so 2 × items rows. The workbench
is served in-process on a free 127.0.0.1 port (as ``scorecore view`` serves it) and asked for:
the batch's first page cold (its rows not yet read), the first page warm, a filtered page
(scorer, score range and a text search) and a later page sorted by score. Each figure is the
median of ``--runs`` requests; RSS is read after the cold request and after all the others.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scorecore_adapters.view import running
from tests.adapters.view.stores import rows, store_with


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(http: httpx.Client, params: dict[str, str]) -> float:
    started = time.perf_counter()
    response = http.get("/batch", params=params)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = store_with(Path(folder) / "s.db", rows("big", args.items))
        print(f"store: {2 * args.items} rows")
        with running(url) as address, httpx.Client(
                base_url=address.split("/?", maxsplit=1)[0], timeout=600) as http:
            http.get(address, follow_redirects=True).raise_for_status()
            before = _rss_mb()
            cold = _timed(http, {"id": "big"})
            after_cold = _rss_mb()
            cases = {
                "first page (warm)": {"id": "big"},
                "filtered page": {"id": "big", "scorer": "judge", "min": "0.2", "max": "0.8",
                                  "q": "answer 12"},
                "page 40, sorted by score": {"id": "big", "sort": "-score", "page": "40"},
            }
            print(f"first page (cold): {cold:.0f} ms; RSS {before:.0f} → {after_cold:.0f} MB")
            for name, params in cases.items():
                times = [_timed(http, params) for _ in range(args.runs)]
                print(f"{name}: median {statistics.median(times):.0f} ms "
                      f"(min {min(times):.0f}, max {max(times):.0f})")
            for _ in range(20):
                _timed(http, cases["filtered page"])
            print(f"RSS after {20 + 3 * args.runs} more requests: {_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
