"""Response time and memory of ``scorecore view``'s batch page over a 100,000-row store.

    .venv/bin/python benchmarks/view_pages.py [--items 50000] [--runs 5]

The store holds one batch of ``--items`` items scored by two scorers (tests/adapters/view's
rows: a judge scorer with its judge call, a pass/fail check), so 2 × items rows. The workbench
is served in-process on a free 127.0.0.1 port (as ``scorecore view`` serves it; starting, it
makes its indexes once, timed as "start") and asked for: the batch's first page cold (nothing
of the batch read yet), the first page warm, a filtered page (scorer, score range and a text
search), a page filtered by cause kind, a later page sorted by score, one run, the batches page,
and the review queue (cold: its candidates read; then warm). Each figure is the median of ``--runs``
requests; RSS is read before the first request, after the cold one and after all the others.
The batch's judge cost is summed off the pages' path (it reads every row's judge calls): the
warm figures are taken once the page shows it.
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


def _timed(http: httpx.Client, params: dict[str, str], path: str = "/batch") -> float:
    started = time.perf_counter()
    response = http.get(path, params=params)
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
        started = time.perf_counter()
        with running(url) as address, httpx.Client(
                base_url=address.split("/?", maxsplit=1)[0], timeout=600) as http:
            http.get(address, follow_redirects=True).raise_for_status()
            print(f"start (indexes made, first request): "
                  f"{(time.perf_counter() - started) * 1000:.0f} ms")
            before = _rss_mb()
            cold = _timed(http, {"id": "big"})
            after_cold = _rss_mb()
            print(f"first page (cold): {cold:.0f} ms; RSS {before:.0f} → {after_cold:.0f} MB")
            # The batch's judge cost is summed on a second connection after the cold page;
            # the warm figures are taken once it is shown (a reviewer's steady state).
            summing = time.perf_counter()
            while "being summed" in http.get("/batch", params={"id": "big"}).text:
                time.sleep(0.05)
            print(f"cost summed in the background: shown "
                  f"{(time.perf_counter() - summing) * 1000:.0f} ms after the cold page")
            cases: dict[str, tuple[str, dict[str, str]]] = {
                "first page (warm)": ("/batch", {"id": "big"}),
                "filtered page": ("/batch", {"id": "big", "scorer": "judge", "min": "0.2",
                                             "max": "0.8", "q": "answer 12"}),
                "cause page": ("/batch", {"id": "big", "cause": "empty_output"}),
                "page 40, sorted by score": ("/batch", {"id": "big", "sort": "-score",
                                                        "page": "40"}),
                "one run": ("/run", {"batch": "big", "item": "item-31337"}),
            }
            for name, (path, params) in cases.items():
                times = [_timed(http, params, path) for _ in range(args.runs)]
                print(f"{name}: median {statistics.median(times):.0f} ms "
                      f"(min {min(times):.0f}, max {max(times):.0f})")
            times = [_timed(http, {}, "/") for _ in range(args.runs)]
            print(f"batches page: median {statistics.median(times):.0f} ms")
            queue = {"id": "big", "sample": "50"}
            print(f"review queue (cold): {_timed(http, queue, '/queue'):.0f} ms")
            times = [_timed(http, queue, "/queue") for _ in range(args.runs)]
            print(f"review queue (warm): median {statistics.median(times):.0f} ms")
            for _ in range(20):
                _timed(http, cases["filtered page"][1])
            print(f"RSS after {21 + 7 * args.runs} more requests: {_rss_mb():.0f} MB")

if __name__ == "__main__":
    main()
