"""Size and load time of ``scorecore report`` for a 10,000-item batch with a baseline.

    .venv/bin/python benchmarks/report_size.py [--items 10000] [--text 120] [--runs 3]

Rows come from tests/adapters/report/batches.py (three scorers: a judge scorer with prompts,
replies and token usage, a function scorer, a pass/fail check; inputs and outputs of ``--text``
characters of word-like text that compresses about as well as English).
Load time is measured in headless Chromium (``chromium --headless --dump-dom``): the page's own
figure (navigation start to its script done, parsing the file included) and the wall time of
the whole browser process minus that of a blank page.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scorecore_adapters.report import render_report
from tests.adapters.report.batches import batch_rows


def _load(browser: str, page: Path) -> tuple[float, float | None]:
    with tempfile.TemporaryDirectory() as profile:
        started = time.perf_counter()
        done = subprocess.run(  # noqa: S603 - the browser found on PATH
            # The page unpacks its data asynchronously: the virtual-time budget lets it finish
            # before the DOM is dumped (it ends as soon as the page is idle).
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={profile}", "--virtual-time-budget=30000", "--dump-dom",
             page.as_uri()],
            capture_output=True, text=True, timeout=300, check=True,
        )
        wall = time.perf_counter() - started
    found = re.search(r'data-loaded-ms="([0-9.]+)"', done.stdout)
    return wall, float(found.group(1)) if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--text", type=int, default=120)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = batch_rows("new", args.items, text=args.text)
    baseline = batch_rows("base", args.items, shift=0.05, text=args.text)
    started = time.perf_counter()
    page = render_report(rows, batch_id="new", baseline=baseline)
    rendered = time.perf_counter() - started
    size = len(page.encode("utf-8"))
    cut = re.search(r"Values longer than ([0-9,]+) characters", page)
    print(f"{args.items:,} items, {len(rows):,} rows, {args.text}-character inputs and outputs, "
          f"with a baseline: {size / 1e6:.2f} MB "
          f"(limit 5 MB), rendered in {rendered:.2f} s; "
          + (f"values cut to {cut.group(1)} characters" if cut else "no value cut"))
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("no chromium on PATH: load time not measured")
        return
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.html"
        report.write_text(page, encoding="utf-8")
        blank = Path(folder) / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title>", encoding="utf-8")
        blank_walls = [_load(browser, blank)[0] for _ in range(args.runs)]
        loads = [_load(browser, report) for _ in range(args.runs)]
    page_ms = [ms for _, ms in loads if ms is not None]
    extra = statistics.median(w for w, _ in loads) - statistics.median(blank_walls)
    print(f"headless chromium, median of {args.runs}: the browser process takes {extra:.2f} s "
          f"longer than for a blank page; the page reports itself ready "
          f"{statistics.median(page_ms) / 1000:.2f} s after navigation start (virtual time)")


if __name__ == "__main__":
    main()
