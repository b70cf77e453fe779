"""Numbers at the edge of floats never end a command in a traceback: panel members scoring
±1e308 (the agreement statistics), labels of 10**400 or ±1e308 (calibrate, report --labels),
and label ids holding terminal control characters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore import create_scorer
from scorecore.evals import ScoreRow, calibrate, run_evals
from scorecore.evals._stats._alpha import krippendorff_alpha
from scorecore.scorers import panel
from tests.cli_runs import run

HUGE = 1e308


def strict_json(text: str) -> Any:
    """JSON as the standard has it: Infinity and NaN are not JSON."""
    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_alpha_of_scores_near_the_largest_float_is_alpha_of_the_same_scores_scaled() -> None:
    """Alpha is unchanged by a common scale: ±1e308 give the alpha of ±1 (no OverflowError)."""
    units = [[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0], [0.5, -0.5]]
    scaled = [[v * HUGE for v in unit] for unit in units]
    assert krippendorff_alpha(scaled) == pytest.approx(krippendorff_alpha(units))


PANEL = '''
from scorecore import create_scorer
from scorecore.scorers import panel

def member(name, sign):
    return create_scorer(id=name, description="d").generate_score(
        lambda ctx: sign * (1e308 if ctx.run.output == "a" else -1e308))

jury = panel([member("m1", 1), member("m2", -1)], id="jury")
'''


def _panel() -> Any:
    def member(name: str, sign: float) -> Any:
        return create_scorer(id=name, description="d").generate_score(
            lambda ctx: sign * (HUGE if ctx.run.output == "a" else -HUGE))
    return panel([member("m1", 1.0), member("m2", -1.0)], id="jury")


def _items() -> list[dict[str, str]]:
    return [{"id": str(i), "input": "q", "output": "ab"[i % 2]} for i in range(6)]


def test_run_evals_with_panel_members_scoring_the_largest_floats() -> None:
    """run_evals finishes and reports the panel's agreement."""
    report = anyio.run(lambda: run_evals(_items(), [_panel()]))
    (agreement,) = report.panels
    assert agreement.units == 6
    assert agreement.alpha_interval is not None
    assert agreement.most_disagreed[0].scores in ({"m1": HUGE, "m2": -HUGE},
                                                 {"m1": -HUGE, "m2": HUGE})


def test_eval_and_show_with_panel_members_scoring_the_largest_floats(tmp_path: Path) -> None:
    """``eval`` and ``show`` print the agreement in three significant digits (not 309), and
    ``show --json`` is valid JSON."""
    scorers = tmp_path / "huge_scorers.py"
    scorers.write_text(PANEL)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in _items()))
    store = f"sqlite:{tmp_path / 's.db'}"
    code, out, err = run("eval", str(scorers), "--data", str(data), "--store", store,
                         "--batch-id", "b")
    assert code == 0, err + out
    assert "disagree on 0: spread inf (m1 1e+308, m2 -1e+308)" in out
    code, shown, err = run("show", "b", "--store", store)
    assert code == 0, err
    assert "disagree on 0: spread inf (m1 1e+308, m2 -1e+308)" in shown
    code, text, err = run("show", "b", "--store", store, "--json")
    assert code == 0, err
    (agreement,) = strict_json(text)["panels"]
    assert agreement["mostDisagreed"][0]["spread"] is None


SCORERS = '''
from scorecore import create_scorer

judge = create_scorer(id="judge", description="d").generate_score(
    lambda ctx: float(ctx.run.extra["s"]))
'''


@pytest.fixture
def batch(tmp_path: Path) -> str:
    """A stored batch "b" of 20 items scored 0.9 (even) or 0.1 (odd); the store's URL."""
    (tmp_path / "edge_scorers.py").write_text(SCORERS)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{i}", "input": i, "output": i,
                                        "extra": {"s": 0.9 if i % 2 == 0 else 0.1}}) + "\n"
                            for i in range(20)))
    url = f"sqlite:{tmp_path / 'r.db'}"
    code, out, err = run("eval", str(tmp_path / "edge_scorers.py"), "--data", str(data),
                         "--store", url, "--batch-id", "b")
    assert code == 0, err + out
    return url


def _labels(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize("command", ["calibrate", "report"])
def test_a_label_too_large_for_a_float_is_a_usage_error(
    tmp_path: Path, batch: str, command: str
) -> None:
    """A label of 10**400 (valid JSON, no float holds it): exit 2, naming the line and the
    field, for calibrate and report --labels alike."""
    labels = _labels(tmp_path / "l.jsonl", '{"id": "i0", "label": 1' + "0" * 400 + "}\n")
    argv = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    code, out, err = run(command, "b", "--labels", str(labels), "--store", batch,
                         "--kind", "continuous", *argv)
    assert (code, out) == (2, "")
    assert f"{labels}:1: field 'label' must be a finite number" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["calibrate", "report"])
def test_labels_near_the_largest_float_are_measured(
    tmp_path: Path, batch: str, command: str
) -> None:
    """Continuous labels of ±1e308: calibrate prints the MAE in three significant digits and
    the report is written; nothing overflows."""
    labels = _labels(tmp_path / "l.jsonl", "".join(
        json.dumps({"id": f"i{i}", "label": HUGE if i % 2 == 0 else -HUGE}) + "\n"
        for i in range(20)))
    argv = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    code, out, err = run(command, "b", "--labels", str(labels), "--store", batch,
                         "--kind", "continuous", *argv)
    assert code == 0, err
    if command == "calibrate":
        assert "1e+308 [1e+308, 1e+308]" in out
        assert "0" * 50 not in out
    else:
        assert "1e+308" in (tmp_path / "r.html").read_text()


def test_label_ids_with_control_characters_are_printed_escaped(tmp_path: Path,
                                                               batch: str) -> None:
    """Label ids holding ESC or CR (labels without rows) reach the terminal escaped."""
    labels = _labels(tmp_path / "l.jsonl", json.dumps({"id": "i0", "label": True}) + "\n"
                     + json.dumps({"id": "x\x1b[2Jy\rz", "label": False}) + "\n")
    code, out, err = run("calibrate", "b", "--labels", str(labels), "--store", batch)
    assert code == 0, err
    assert "\x1b" not in out
    assert "\r" not in out
    assert "labels without rows in b: x\\x1b[2Jy\\rz" in out


def test_calibrate_from_python_refuses_a_label_too_large_for_a_float() -> None:
    """``calibrate`` raises ValueError naming the item, not OverflowError."""
    rows = [ScoreRow(id="r", scorer_id="s", run_id="b:a", batch_id="b", status="scored",
                     score=0.5, dataset_item_id="a")]
    with pytest.raises(ValueError, match="the label of item 'a' must be a bool, a finite number"):
        calibrate(rows, {"a": 10**400}, kind="continuous")
