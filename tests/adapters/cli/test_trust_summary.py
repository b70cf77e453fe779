"""``scorecore eval``'s terminal summary shows panels' agreement and pairwise win rates."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli_runs import run

SCORERS = '''
from scorecore import create_scorer
from scorecore.scorers import TEXT, pairwise, panel
from scorecore_adapters.testing import FunctionJudge

# Ten items, so that alpha has an interval: with three, a resample drawing one item thrice
# has no alpha more often than the interval's 2.5 % tail allows.
GRADES = {
    "m1": {"a": 0.9, "b": 0.2, "c": 0.6, "d": 0.3, "e": 0.7, "f": 0.1, "g": 0.5, "h": 0.4,
           "i": 1.0, "j": 0.6},
    "m2": {"a": 0.8, "b": 0.9, "c": 0.6, "d": 0.4, "e": 0.5, "f": 0.2, "g": 0.8, "h": 0.4,
           "i": 0.9, "j": 0.3},
}


def member(name):
    return create_scorer(id=name, description="d").generate_score(
        lambda ctx: GRADES[name][ctx.run.output])


jury = panel([member("m1"), member("m2")], threshold=0.5, id="jury")
ab = pairwise(FunctionJudge(lambda request: {"reason": "A reads better", "winner": "A"}),
              criteria="helpfulness", shape=TEXT, id="ab")
plain = create_scorer(id="plain", description="d").generate_score(lambda ctx: 1.0)
'''


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    scorers = tmp_path / "trust_scorers.py"
    scorers.write_text(SCORERS)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(
        f'{{"id": "{i}", "input": "q", "output": "{i}", "baseline_output": "old {i}"}}\n'
        for i in "abcdefghij"))
    return scorers, data


def test_eval_prints_panel_agreement_and_pairwise_win_rate(tmp_path: Path) -> None:
    """The same lines ``scorecore show`` prints: alpha with its interval, the most disagreed
    item, and the win rate with position bias."""
    scorers, data = _setup(tmp_path)
    code, out, err = run("eval", str(scorers), "--data", str(data), "--store",
                         f"sqlite:{tmp_path / 'x.db'}", "--batch-id", "t")
    assert code == 0, err + out
    assert re.search(r"panel jury \(m1, m2\): 10 of 10 runs with 2\+ scores; alpha scores "
                     r"-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\], votes -?\d\.\d{3}", out)
    assert "disagree on b: spread 0.700 (m1 0.200, m2 0.900)" in out
    assert ("pairwise ab: win rate 0.500 [0.000, 1.000] over 10 items (0 won, 0 lost, 0 tied); "
            "position bias on 10 (100.0%)") in out
    # The same figures as `scorecore show` gives for the stored batch.
    shown = run("show", "t", "--store", f"sqlite:{tmp_path / 'x.db'}")[1]
    trust = [line for line in out.splitlines() if line.startswith(("panel ", "pairwise ",
                                                                   "    disagree on"))]
    assert trust
    assert all(line in shown for line in trust)


def test_eval_without_panels_prints_no_agreement(tmp_path: Path) -> None:
    scorers, data = _setup(tmp_path)
    code, out, err = run("eval", f"{scorers}:plain", "--data", str(data), "--store",
                         f"sqlite:{tmp_path / 'x.db'}")
    assert code == 0, err + out
    assert "alpha" not in out
    assert "win rate" not in out
