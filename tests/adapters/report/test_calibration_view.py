"""One view of a calibration's statistics per kind of labels: ``calibrate``, the ``calibrate``
command's table and the HTML report's table list the same statistics, in the same order."""

from __future__ import annotations

import io
import re

import pytest

from scorecore.evals import ScoreRow, calibrate
from scorecore.evals.results import CalibrationStatistic
from scorecore_adapters.cli._calibrate import print_calibration
from scorecore_adapters.report._calibration import calibration_section

EXPECTED: dict[str, tuple[CalibrationStatistic, ...]] = {
    "binary": ("kappa", "accuracy", "precision", "recall"),
    "ordinal": ("kappa", "mae", "accuracy", "precision", "recall"),
    "continuous": ("spearman", "kendall", "kappa", "mae", "accuracy", "precision", "recall"),
}
# What each table calls a statistic: the command's plain names, the page's symbols.
TEXT = {"kappa": "kappa", "spearman": "spearman", "kendall": "kendall", "mae": "MAE",
        "accuracy": "accuracy", "precision": "precision", "recall": "recall"}
HTML = {"kappa": "κ", "spearman": "Spearman ρ", "kendall": "Kendall τ", "mae": "MAE",
        "accuracy": "accuracy", "precision": "precision", "recall": "recall"}
LABELS = {
    "binary": [True, False, True, False, True, True],
    "ordinal": [1, 2, 3, 4, 5, 3],
    "continuous": [0.0, 2.5, 5.0, 7.5, 10.0, 4.0],
}
SCALE = {"binary": None, "ordinal": (1.0, 5.0), "continuous": (0.0, 10.0)}


def _rows() -> list[ScoreRow]:
    scores = [0.9, 0.1, 0.6, 0.3, 1.0, 0.5]
    return [ScoreRow(id=f"r{i}", scorer_id="judge", run_id=f"b:i{i}", batch_id="b",
                     status="scored", score=s, dataset_item_id=f"i{i}")
            for i, s in enumerate(scores)]


def _in_order(text: str, names: list[str]) -> bool:
    """Whether ``names`` appear in ``text`` in this order."""
    return re.search(".*?".join(re.escape(n) for n in names), text, re.DOTALL) is not None


@pytest.mark.parametrize("kind", ["binary", "ordinal", "continuous"])
def test_the_command_and_the_report_show_the_kinds_statistics(kind: str) -> None:
    """Each kind's statistics, and only those, head both tables in the one order."""
    labels = {f"i{i}": v for i, v in enumerate(LABELS[kind])}
    result = calibrate(_rows(), labels, kind=kind, scale=SCALE[kind])  # type: ignore[arg-type]
    assert result.statistics == EXPECTED[kind]
    judge = result.scorer("judge")
    for statistic in ("kappa", "spearman", "kendall", "mae", "accuracy", "precision", "recall"):
        given = judge.estimate(statistic)  # type: ignore[arg-type]
        assert (given is not None) == (statistic in EXPECTED[kind])

    out = io.StringIO()
    print_calibration(result, "labels.jsonl", out)
    header = out.getvalue().splitlines()[1]
    assert _in_order(header, ["scorer", *(TEXT[s] for s in EXPECTED[kind]), "fitted threshold"])
    for absent in set(TEXT) - set(EXPECTED[kind]):
        assert TEXT[absent] not in header

    page = calibration_section(result)
    head = page[page.index("<thead>"):page.index("</thead>")]
    cells = re.findall(r"<th[^>]*>([^<]*)</th>", head)
    assert cells[3:-1] == [
        {"ordinal": "quadratic κ", "continuous": "κ (pass/fail)"}.get(kind, "κ")
        if s == "kappa" else HTML[s]
        for s in EXPECTED[kind]
    ]
