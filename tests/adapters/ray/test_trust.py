"""On Ray, the report folds panels' agreement and pairwise win rates as run_evals does."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

from scorecore.evals import EvalReport, run_evals
from scorecore_adapters.cli import main
from scorecore_adapters.ray import items_dataset, score_dataset
from scorecore_adapters.storage import open_store
from tests.adapters.ray import _scorers
from tests.adapters.ray.conftest import RAY_WARNINGS

pytestmark = [pytest.mark.usefixtures("ray_cluster"), RAY_WARNINGS]


def _in_process(items: list[Any], url: str, batch_id: str) -> EvalReport:
    async def run() -> EvalReport:
        async with open_store(url) as store:
            return await run_evals(items, _scorers.trust(), store=store, batch_id=batch_id)

    return anyio.run(run)


def test_panels_and_pairwise_are_in_the_ray_report(tmp_path: Path, batch_id: str) -> None:
    """Alpha, the most disagreed items and the win rate with position bias: the same values
    as run_evals's report over the same items, batches of a few items apart."""
    items = _scorers.trust_items(12)
    expected = _in_process(items, f"sqlite:{tmp_path}/expected.db", batch_id)
    assert expected.panels
    assert expected.pairwise
    result = score_dataset(items_dataset(items), "tests.adapters.ray._scorers:trust",
                           store_url=f"sqlite:{tmp_path}/ray.db", batch_id=batch_id,
                           batch_size=5)
    report = result.report
    assert report.panels == expected.panels
    assert report.pairwise == expected.pairwise
    (agreement,) = report.panels
    assert (agreement.scorer_id, agreement.runs, agreement.members) == (
        "jury", 12, ("m1", "m2", "m3"))
    assert agreement.alpha_interval is not None
    (summary,) = report.pairwise
    assert (summary.position_bias, summary.win_rate) == (12, 0.5)
    assert attrs.evolve(report, duration=0.0) == attrs.evolve(expected, duration=0.0)


def test_eval_on_ray_prints_what_the_local_engine_prints(tmp_path: Path) -> None:
    """``scorecore eval --engine ray`` prints the panels' and pairwise lines the local engine
    prints for the same batch."""
    scorers = tmp_path / "scorers.py"
    scorers.write_text("from tests.adapters.ray._scorers import trust\n\nscorers = trust()\n")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(item) + "\n" for item in _scorers.trust_items(8)))

    def trust_lines(*engine: str, db: str) -> list[str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(["eval", str(scorers), "--data", str(data), "--batch-id", "b", "--no-cache",
                     "--store", f"sqlite:{tmp_path}/{db}.db", *engine], out=out, err=err)
        assert code == 0, err.getvalue() + out.getvalue()
        return [line for line in out.getvalue().splitlines()
                if line.startswith(("panel ", "pairwise ", "    disagree on"))]

    local = trust_lines(db="local")
    assert any(line.startswith("panel jury (m1, m2, m3): 8 of 8 runs") for line in local)
    assert any(line.startswith("pairwise ab: win rate 0.500") for line in local)
    assert trust_lines("--engine", "ray", db="ray") == local
