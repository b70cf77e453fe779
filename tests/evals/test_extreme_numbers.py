"""Numbers at the edge of floats never end a command in a traceback: panel members scoring
±1e308 (the agreement statistics), labels of 10**400 or ±1e308 (calibrate, report --labels),
and label ids holding terminal control characters."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore import create_scorer
from scorecore.evals import run_evals
from scorecore.evals._agreement import krippendorff_alpha
from scorecore.scorers import panel
from scorecore_adapters.cli import main

HUGE = 1e308


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


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
