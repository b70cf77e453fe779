"""A batch with a panel and a pairwise judge: ``scorecore show`` and the HTML report give the
members' agreement, the items they disagree on, the win rate and the position bias."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore import JudgeConfig, ScorePromptStep, Scorer, create_scorer
from scorecore.evals import ScoreRow, run_evals
from scorecore.judge import JudgeRequest
from scorecore.scorers import TEXT, pairwise, panel
from scorecore_adapters.cli import main
from scorecore_adapters.report import render_report
from scorecore_adapters.report._data import Cutter, _detail
from scorecore_adapters.report._text import packed_json
from scorecore_adapters.storage import open_store
from scorecore_adapters.testing import FunctionJudge, judge_error
from tests.adapters.report.test_report_browser import BROWSER, load

SCORES = {"m1": {"a": 0.9, "b": 0.2, "c": 0.6}, "m2": {"a": 0.8, "b": 0.9, "c": 0.6}}


def judged(scorer_id: str) -> Scorer[Any, Any]:
    def answer(request: JudgeRequest) -> Any:
        item = request.messages[-1].content.split()[1]
        if scorer_id == "m3":
            return judge_error(503, message="m3 is down")
        return {"score": SCORES[scorer_id][item]}

    return create_scorer(id=scorer_id, description="d", judge=JudgeConfig(
        model=FunctionJudge(answer), instructions="Grade.")).generate_score(
        ScorePromptStep(description="grade", create_prompt=lambda ctx: f"Answer: {ctx.run.output}"))


def first_is_better(_request: JudgeRequest) -> dict[str, str]:
    return {"reason": "A reads better", "winner": "A"}


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[ScoreRow]]:
    url = f"sqlite:{tmp_path_factory.mktemp('trust') / 'r.db'}"
    jury = panel([judged("m1"), judged("m2"), judged("m3")], min_successful=2,
                 threshold=0.5, id="jury")
    ab = pairwise(FunctionJudge(first_is_better), criteria="helpfulness", shape=TEXT,
                  id="ab")
    data = [{"input": "q", "output": item, "baseline_output": f"old {item}", "id": item}
            for item in "abc"]

    async def go() -> list[ScoreRow]:
        async with open_store(url) as store:
            await run_evals(data, [jury, ab], store=store, batch_id="t")
            return list(await store.list_run("t"))

    return url, anyio.run(go)


def show(url: str, *more: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert main(["show", "t", "--store", url, *more], out=out, err=err) == 0, err.getvalue()
    return out.getvalue()


def test_show_prints_agreement_disagreements_and_position_bias(
    batch: tuple[str, list[ScoreRow]],
) -> None:
    text = show(batch[0])
    assert re.search(r"panel jury \(m1, m2, m3\): 3 of 3 runs with 2\+ scores; alpha scores "
                     r"-?\d\.\d{3}", text)
    assert "3 member failures" in text
    assert "disagree on b: spread 0.700 (m1 0.200, m2 0.900)" in text
    assert ("pairwise ab: win rate 0.500 [0.000, 1.000] over 3 items (0 won, 0 lost, 0 tied); "
            "position bias on 3 (100.0%)") in text


def test_show_json_has_the_trust_parts(batch: tuple[str, list[ScoreRow]]) -> None:
    document = json.loads(show(batch[0], "--json"))
    (agreement,) = document["panels"]
    assert agreement["scorerId"] == "jury"
    assert agreement["mostDisagreed"][0]["itemId"] == "b"
    (summary,) = document["pairwise"]
    assert (summary["positionBias"], summary["winRate"]) == (3, 0.5)


def test_the_html_report_has_agreement_pairwise_and_a_members_table(
    batch: tuple[str, list[ScoreRow]],
) -> None:
    rows = batch[1]
    page = render_report(rows, batch_id="t")
    assert '<section id="agreement">' in page
    # Three items: a resample drawing one item thrice has no alpha, far more often than the
    # interval's 2.5 % tail allows, so alpha is shown without an interval.
    assert re.search(r'<tr><td>jury</td><td>m1, m2, m3</td><td class=num>3</td>'
                     r'<td class=num>3</td><td class=num>-?\d\.\d{3}</td>', page)
    assert '<a href="#item=b">b</a></td><td class=num>0.700</td>' in page
    assert '<section id="pairwise">' in page
    assert "<td class=num>3 (100.0%)</td><td class=num>0.500</td>" in page
    assert "Panel members" in page  # the drill-down's per-item members table
    # The item's members travel in the page's data: member, status, score, vote, why, replaces.
    jury_row = next(r for r in rows if r.scorer_id == "jury" and r.dataset_item_id == "b")
    members = _detail(jury_row, Cutter(None))["pn"]
    assert members[0] == ["m1", "scored", 0.2, False, None, None]
    assert members[2][:2] == ["m3", "failed"]
    assert "m3 is down" in members[2][4]
    assert packed_json(members)  # plain JSON


def test_a_batch_without_panels_has_no_trust_sections() -> None:
    row = ScoreRow(id="1", scorer_id="s", run_id="b:1", batch_id="b", status="scored", score=1.0)
    page = render_report([row], batch_id="b")
    assert 'id="agreement"' not in page
    assert 'id="pairwise"' not in page


def test_the_members_table_renders_in_a_browser(
    batch: tuple[str, list[ScoreRow]], tmp_path: Path
) -> None:
    """In headless Chromium the drill-down of an item shows its panel's members table."""
    if BROWSER is None:
        pytest.skip("no chromium binary on PATH")
    page = tmp_path / "report.html"
    page.write_text(render_report(batch[1], batch_id="t"))
    dom = load(page, "#item=b")
    assert '<table class="members">' in dom
    assert "<td>m3</td><td>failed</td>" in dom
