"""The HTML report in a real headless Chromium: charts, filters and drill-down render, no errors.

.ci/run installs Debian's ``chromium``. The page is loaded from disk (``file://``) with the
network of a report: none. ``--dump-dom`` gives the DOM after the page's script ran (the
script unpacks its data asynchronously: ``--virtual-time-budget`` lets it finish first);
``--enable-logging=stderr`` prints every console message (an uncaught error included) as a
``CONSOLE`` line, and the page itself logs nothing, so any such line is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from scorecore.evals import ScoreRow
from scorecore_adapters.report import render_report
from tests.adapters.report.batches import batch_rows

BROWSER = next(
    (found for name in ("chromium", "chromium-browser", "google-chrome")
     if (found := shutil.which(name))),
    None,
)
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no chromium binary on PATH (.ci/run installs Debian's chromium with apt-get)",
)
HOSTILE = "</script><script>document.body.dataset.pwned='1'</script><img src=x>\x00\"'"


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(  # noqa: S603 - the browser found on PATH, fixed arguments
            [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", f"--user-data-dir={profile}", "--enable-logging=stderr",
             "--v=0", "--virtual-time-budget=10000", *args],
            capture_output=True, text=True, timeout=120, check=False,
        )


def load(page: Path, fragment: str = "") -> str:
    """The DOM after the page's script ran; fails on any console message."""
    done = _chromium("--dump-dom", page.as_uri() + fragment)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console
    return done.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = batch_rows("new", 300)
    rows.append(ScoreRow(id="h", scorer_id="answer-match", run_id="new:hostile", batch_id="new",
                         status="scored", score=1.0, dataset_item_id="hostile", output=HOSTILE,
                         reason=HOSTILE, input=HOSTILE))
    # a cache hit: the judge answered from the cache, with 0 model calls
    rows.append(ScoreRow(
        id="c", scorer_id="faithfulness", run_id="new:cached", batch_id="new", status="scored",
        score=1.0, dataset_item_id="cached", input={"question": "as given"}, output="answer",
        metadata={"itemInput": "What is the weather?", "judge": {"analyze": {"executions": [{
            "status": "success", "prompt": "p", "output": {"claims": []},
            "judgeModelId": "gpt-4o-mini", "modelCallCount": 0, "cacheHits": 1}]}}}))
    page = tmp_path_factory.mktemp("report") / "report.html"
    page.write_text(render_report(rows, batch_id="new", baseline=batch_rows("base", 300,
                                                                              shift=0.1)))
    return page


def test_charts_summary_and_items_render(report: Path) -> None:
    """Three histograms with bars, the comparison, and the first 100 item rows render."""
    dom = load(report)
    assert 'data-ready="1"' in dom
    assert len(re.findall(r'<svg class="chart histogram"', dom)) == 3
    assert len(re.findall(r'<rect class="bar"', dom)) == 60
    assert 'id="comparison"' in dom
    body = re.search(r'<tbody id="items-body">(.*?)</tbody>', dom, re.DOTALL)
    assert body is not None
    assert body.group(1).count("<tr") == 100
    assert "1\u2013100 of 902 rows" in dom  # 900 + the hostile and the cached item


def test_drill_down_opens_from_the_address(report: Path) -> None:
    """#item=ID opens that item's drill-down: input, output, each scorer, judge prompt, usage."""
    dom = load(report, "#item=item-00003")
    drill = re.search(r'<section id="drill" data-item="item-00003">(.*?)</section>', dom,
                      re.DOTALL)
    assert drill is not None, "drill-down not open"
    text = drill.group(1)
    for heading in ("Input", "Output", "Judge prompt", "Judge reply", "Usage",
                    "Analyze step result"):
        assert f"<h3>{heading}</h3>" in text
    assert text.count('class="scorer-run"') == 3
    assert "input 120 tokens, output 14 tokens, total 134" in text
    assert "(baseline " in text


def test_a_cache_hit_shows_zero_model_calls_and_the_input_as_given(report: Path) -> None:
    """A judge answered from the cache made 0 model calls, and the page says 0 (not "?");
    the Input box shows the item's input as given (``metadata.itemInput``)."""
    dom = load(report, "#item=cached")
    drill = re.search(r'<section id="drill" data-item="cached">(.*?)</section>', dom, re.DOTALL)
    assert drill is not None, "drill-down not open"
    text = drill.group(1)
    assert "gpt-4o-mini, 0 model call(s))" in text
    assert "? model call(s)" not in text
    assert "<h3>Input</h3><pre>What is the weather?</pre>" in text


def test_filters_by_status_and_search(report: Path) -> None:
    """#status=failed shows only failed rows, with their cause; a search narrows the rows."""
    dom = load(report, "#status=failed")
    body = re.search(r'<tbody id="items-body">(.*?)</tbody>', dom, re.DOTALL)
    assert body is not None
    statuses = re.findall(r'class="status-(\w+)"', body.group(1))
    assert statuses == ["failed"] * 6
    assert "network: openai connection failed" in body.group(1)
    dom = load(report, "#scorer=answer-match&q=item-0001")
    assert "1\u201310 of 10 rows" in dom


def test_hostile_values_do_not_run(report: Path) -> None:
    """A value holding a script, an image and quotes is shown as text, never run."""
    dom = load(report, "#item=hostile")
    assert "pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]
    assert "&lt;/script&gt;&lt;script&gt;document.body.dataset.pwned" in dom
    assert "<img src" not in dom


def test_screenshot_artefact() -> None:
    """A screenshot of a report is written (kept in a temp dir, or SCORECORE_SCREENSHOTS)."""
    folder = Path(os.environ.get("SCORECORE_SCREENSHOTS") or tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / "report.html"
    page.write_text(render_report(batch_rows("b", 60), batch_id="b",
                                  baseline=batch_rows("a", 60, shift=0.2)))
    shot = folder / "report.png"
    done = _chromium(f"--screenshot={shot}", "--window-size=1280,2400",
                     page.as_uri() + "#item=item-00049")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000
