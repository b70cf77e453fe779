"""``make demo``'s evaluation judged for real by the bundled local model (marked ``real_model``)."""

from __future__ import annotations

import io
import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from scorecore_adapters.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
DEMO = ROOT / "examples" / "demo_scorers.py"
DEMO_DATA = ROOT / "examples" / "data" / "demo.jsonl"
DEMO_LABELS = ROOT / "examples" / "data" / "demo_labels.jsonl"

pytestmark = pytest.mark.real_model


def test_the_demo_is_judged_by_the_local_model_without_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key, no base URL: llm-faithfulness runs on the bundled model, every run it can score
    is scored (none fails), the verdict passes, and the output names the judge, its calls,
    tokens and tokens/s."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SCORECORE_DEMO_JUDGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", str(DEMO), "--data", str(DEMO_DATA), "--store", "sqlite:demo.sqlite",
                 "--threshold", "keyword-coverage=0.5", "--max-failures", "2", "--no-cache",
                 "--output", "r.json", "--labels", str(DEMO_LABELS)],
                out=out, err=err)
    text = out.getvalue()
    assert code == 0, text + err.getvalue()
    assert "verdict: passed" in text
    assert "skipped: llm-faithfulness" not in text
    report = json.loads((tmp_path / "r.json").read_text())
    faithfulness = next(s for s in report["scorers"] if s["id"] == "llm-faithfulness")
    # 8 items have a reference answer (the context); the other 4 are not scorable. The small
    # judge may restate the prompt's worked example twice on an item: that run is undecided by
    # the judge (example_echo), within the demo's --max-failures 2, never a score.
    undecided = faithfulness["undecidedByJudge"]
    assert set(undecided) <= {"example_echo"}, undecided
    echoed = undecided.get("example_echo", 0)
    assert echoed <= 2, text
    assert (faithfulness["scored"], faithfulness["notScorable"], faithfulness["failed"]) == (
        8 - echoed, 4 + echoed, 0)
    calls = re.search(
        r"^judge model llama\.cpp SmolLM2-135M-Instruct\.Q4_1\.gguf: (\d+) call\(s\), [\d,]+ "
        r"tokens \([\d,]+ in, [\d,]+ out\); [\d.,]+ output tokens/s", text, re.MULTILINE)
    assert calls, text
    # one call per item, and a second one for each reply that restated the example
    assert 8 <= int(calls.group(1)) <= 16, text
    # No score's reason is about the worked example's tower instead of the item's answer (an
    # undecided run's reason names the echo, and has no score).
    with closing(sqlite3.connect(tmp_path / "demo.sqlite")) as db:
        reasons = [r for (r,) in db.execute(
            "SELECT reason FROM scorecore_scores WHERE scorerId = 'llm-faithfulness' "
            "AND score IS NOT NULL")]
    assert len(reasons) == 8 - echoed
    assert not [r for r in reasons if r and "Eiffel" in r], reasons
    # The judge's agreement with the shipped labels, and the caveat exactly when its interval
    # includes chance.
    found = re.search(r"^  llm-faithfulness: kappa (?P<kappa>.+), accuracy .* over [78] labelled "
                      r"item\(s\), passing at >= 0\.5$", text, re.MULTILINE)
    assert found, text
    kappa = report["calibration"]["scorers"][0]["kappa"]
    value, low, high = kappa["value"], kappa["low"], kappa["high"]
    # The documented rule: at chance when the interval includes 0, or, without an interval,
    # when kappa is at most 0 (a judge passing every item).
    chance = value is not None and (
        (low is not None and high is not None and low <= 0 <= high)
        or ((low is None or high is None) and value <= 0))
    caveat = ("  llm-faithfulness: agreement with your labels is at chance level: do not gate "
              "on this judge")
    assert (caveat in text) == chance, text
