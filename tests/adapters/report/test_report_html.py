"""The HTML report: self-contained, every user value escaped, bounded in size."""

from __future__ import annotations

import base64
import gzip
import json
import re
from html.parser import HTMLParser
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore import StepRaised, create_scorer
from scorecore.evals import ScoreRow, Threshold, calibrate, run_evals
from scorecore.evals._rows._row import stored_cause
from scorecore_adapters.report import render_report
from scorecore_adapters.testing import InMemoryScoreStore
from tests.adapters.report.batches import batch_rows, prose

HOSTILE = [
    "</script><script>document.body.dataset.pwned='1'</script>",
    "<img src=x onerror=\"document.body.dataset.pwned='1'\">",
    "\"' onmouseover=alert(1) x='",
    "<!-- <script> -->",
    "a\x00b",
    "line\u2028separator\u2029",
    "lone \ud800 surrogate",
    "&amp; &lt;script&gt;",
]


class _Elements(HTMLParser):
    """Counts start tags and collects attributes, as a browser's tokenizer would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.data_script = ""
        self._in_data = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)
        self._in_data = tag == "script" and ("id", "report-data") in attrs

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self.data_script += data

    def handle_endtag(self, tag: str) -> None:
        self._in_data = False


def hostile_rows(text: str) -> list[ScoreRow]:
    error = f"scorer {text!r} failed at step 'analyze' (completed: none): analyze raised X: {text}"
    return [
        ScoreRow(id="1", scorer_id=text, run_id=f"b:{text}", batch_id="b", status="scored",
                 score=0.5, reason=text, input={text: [text]}, output=text,
                 dataset_item_id=text, analyze_prompt=text,
                 metadata={"judge": {text: {"executions": [{"prompt": text, "rawOutput": text,
                                                            "judgeModelId": text}]}}}),
        ScoreRow(id="2", scorer_id=text, run_id="b:2", batch_id="b", status="failed",
                 dataset_item_id="2", metadata={
                     "error": error, "failedStep": "analyze",
                     "cause": stored_cause(StepRaised(exception_type="X", message=text,
                                                      where="analyze"), "analyze")}),
        ScoreRow(id="3", scorer_id=text, run_id="b:3", batch_id="b", status="not_scorable",
                 dataset_item_id="3", reason=text),
    ]


def parse(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    parser.close()
    return parser


def data_of(page: str) -> dict[str, Any]:
    """The items' data as the page's script unpacks it (gzip-compressed JSON in base64)."""
    packed = parse(page).data_script
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", packed)
    found: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(packed)))
    return found


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_values_stay_text(text: str) -> None:
    """Scripts, quotes, comments, NUL, separators, surrogates: no new element, no handler."""
    page = render_report(hostile_rows(text), batch_id=text, baseline=hostile_rows(text),
                         thresholds={})
    page.encode("utf-8")  # valid UTF-8 text: no lone surrogate left
    elements = parse(page)
    assert elements.tags.count("script") == 2  # the data block and the page's own script
    assert "img" not in elements.tags
    assert not [a for a, _ in elements.attrs if a.startswith("on")]
    assert "\x00" not in page
    data = data_of(page)
    expected = text.replace("\ud800", "\ufffd")
    assert data["scorers"] == [expected]
    assert data["items"][0][2] == expected  # the output, as the drill-down will show it
    assert data["causes"][0][2] == f"analyze raised X: {expected}"


@given(st.text(max_size=200))
def test_any_text_round_trips_through_the_page(text: str) -> None:
    """Whatever a value holds, the page's data gives it back (lone surrogates as U+FFFD)."""
    row = ScoreRow(id="1", scorer_id="s", run_id="b:1", batch_id="b", status="scored",
                   score=1.0, output=text, reason=text, dataset_item_id="1")
    page = render_report([row], batch_id="b")
    elements = parse(page)
    assert elements.tags.count("script") == 2
    clean = re.sub("[\ud800-\udfff]", "\ufffd", text)
    data = data_of(page)
    assert (data["items"][0][2], data["rows"][0][4]) == (clean, clean)


def test_huge_and_deep_values_are_bounded() -> None:
    """A 10 MB output is cut (saying how much), a 10,000-deep value is summarised, the cause
    is kept whole."""
    deep: Any = "bottom"
    for _ in range(10_000):
        deep = [deep]
    raised = StepRaised(exception_type="ValueError", message="c" * 990, where="analyze")
    cause = raised.describe()
    rows = [
        ScoreRow(id="1", scorer_id="s", run_id="b:1", batch_id="b", status="scored", score=1.0,
                 output="x" * 10_000_000, input=deep, dataset_item_id="1"),
        ScoreRow(id="2", scorer_id="s", run_id="b:2", batch_id="b", status="failed",
                 dataset_item_id="2",
                 metadata={"error": f"scorer 's' failed at step 'analyze' (completed: none): "
                                    f"{cause}", "failedStep": "analyze",
                           "cause": stored_cause(raised, "analyze")}),
    ]
    page = render_report(rows, batch_id="b")
    assert len(page) < 200_000
    items = data_of(page)["items"]
    assert items[0][2] == "x" * 20_000 + "…(+9,980,000)"
    assert "nested deeper than 32 levels" in json.dumps(items[0][1])
    assert data_of(page)["causes"] == [["raised ValueError", "analyze", cause]]


def test_ten_thousand_items_fit_in_five_megabytes() -> None:
    """10,000 items with three scorers and a baseline: one file under 5 MB, nothing cut."""
    rows = batch_rows("new", 10_000)
    page = render_report(rows, batch_id="new", baseline=batch_rows("base", 10_000, shift=0.05))
    assert len(page.encode("utf-8")) < 5_000_000
    assert "Values longer than" not in page
    data = data_of(page)
    assert len(data["items"]) == 10_000
    assert len(data["rows"]) == 30_000
    assert data["items"][9_999][1:] == [rows[-1].input, rows[-1].output]


def test_summary_thresholds_verdict_and_sections() -> None:
    """The summary has each scorer's mean, counts, threshold and result; the verdict follows."""
    rows = batch_rows("b", 100)
    page = render_report(rows, batch_id="b", thresholds={"answer-match": Threshold(min=0.9)})
    assert re.search(r"<td>answer-match</td><td class=num>0\.660</td><td class=num>100</td>"
                     r"<td class=num>0</td><td class=num>0</td><td>&gt;= 0\.9</td>"
                     r"<td><span class=\"fail\">FAIL</span></td>", page)
    assert '<span class="verdict failed" id="verdict">failed</span>' in page
    assert page.count('<svg class="chart histogram"') == 3
    assert "the item lists no keywords" in page  # not-scorable reasons
    assert "network: openai connection failed" in page  # failures with full causes
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


def test_over_budget_items_with_failures_keep_their_values() -> None:
    """Over the budget, scored items' values are cut; items with a failed run keep theirs."""
    rows = [
        ScoreRow(id=str(i), scorer_id="s", run_id=f"b:{i}", batch_id="b",
                 status="failed" if i == 0 else "scored", score=None if i == 0 else 1.0,
                 output=prose(i, 600), dataset_item_id=str(i))
        for i in range(200)
    ]
    page = render_report(rows, batch_id="b", budget=20_000)
    assert len(page) < 20_000 + 20_000  # the data, and the page around it
    items = data_of(page)["items"]
    assert items[0][2] == prose(0, 600)
    assert items[1][2].endswith(")")
    assert "…(+" in items[1][2]
    assert len(data_of(page)["rows"]) == 200
    assert "Values longer than" in page


@pytest.mark.parametrize("item_id", ["a&b=c", "q#1 + x", "é/ü?", "lone \ud800"])
def test_most_regressed_links_percent_encode_the_item_id(item_id: str) -> None:
    """``#item=`` links carry the whole id: ``&``, ``#``, ``+`` never end or change it."""
    from urllib.parse import parse_qs  # noqa: PLC0415

    def rows(batch: str, score: float) -> list[ScoreRow]:
        return [ScoreRow(id=f"{batch}{i}", scorer_id="s", run_id=f"{batch}:{item}",
                         batch_id=batch, status="scored", score=score,
                         dataset_item_id=item)
                for i, item in enumerate([item_id, "other"])]

    page = render_report(rows("new", 0.0), batch_id="new", baseline=rows("base", 1.0))
    links = [value for name, value in parse(page).attrs
             if name == "href" and value and value.startswith("#item=")]
    assert links
    expected = item_id.encode("utf-8", "replace").decode()
    decoded = {parse_qs(link[1:], keep_blank_values=True)["item"][0] for link in links}
    assert expected in decoded


def test_an_items_trials_count_as_one_item() -> None:
    """A batch run with trials=3 over two id-less items reports 2 items and 6 rows."""
    rows = [ScoreRow(id=f"{t}{i}", scorer_id="s", batch_id="b", status="scored", score=1.0,
                     run_id=f"{'b' if t == 0 else f'b/trial-{t}'}:#{i}")
            for t in range(3) for i in range(2)]
    page = render_report(rows, batch_id="b")
    assert "2 item(s), 6 row(s), 1 scorer(s)" in page


def _runs(statuses: list[str], scorer: str = "judge") -> list[ScoreRow]:
    return [ScoreRow(id=f"{i}/{scorer}", scorer_id=scorer, run_id=f"b:{i}", batch_id="b",
                     status=status, score=1.0 if status == "scored" else None,  # type: ignore[arg-type]
                     dataset_item_id=str(i))
            for i, status in enumerate(statuses)]


def test_the_header_gives_the_verdict_of_the_stored_batch_with_its_reason() -> None:
    """The page's verdict is run_evals's rule applied to the stored rows, with the reason in
    one line: a batch whose every judged run failed is "failed", never "no thresholds"."""
    page = render_report(_runs(["failed"] * 59) + _runs(["scored"] * 59, scorer="code"),
                         batch_id="b")
    assert '<span class="verdict failed" id="verdict">failed</span>' in page
    assert ('<p id="verdict-reason">verdict: failed — scorer &#x27;judge&#x27; has no scored '
            'run (59 failed) (and 1 more failed check(s))</p>') in page
    assert "no thresholds" not in page
    fine = render_report(_runs(["scored", "not_scorable"]), batch_id="b")
    assert '<span class="verdict passed" id="verdict">passed</span>' in fine
    tolerated = render_report(_runs(["scored", "failed"]), batch_id="b", max_failures=1)
    assert '<span class="verdict passed" id="verdict">passed</span>' in tolerated


def test_the_input_box_shows_the_input_as_the_item_gave_it() -> None:
    """An agent scorer's row stores the converted run input (Mastra's column) and keeps the
    item's input as given in ``metadata["itemInput"]``; the page shows the latter. A plain
    scorer's row, whose input is the one given, keeps nothing twice."""
    item_input = {"inputMessages": [{"role": "user", "content": {
        "parts": [{"type": "text", "text": "What is the weather?"}]}}]}
    answer = [{"role": "assistant", "content": {"parts": [{"type": "text", "text": "Sunny"}]}}]
    agent = create_scorer(id="agent", description="d", type="agent").generate_score(
        lambda ctx: 1.0)
    plain = create_scorer(id="plain", description="d").generate_score(lambda ctx: 1.0)

    async def stored(scorers: list[Any]) -> list[ScoreRow]:
        store = InMemoryScoreStore()
        async with store:
            await run_evals([{"id": "q1", "input": item_input, "output": answer}], scorers,
                            store=store, batch_id="b")
            return list(await store.list_run("b"))

    rows = anyio.run(stored, [agent])
    assert rows[0].input != item_input  # converted: defaults filled in
    assert rows[0].input["inputMessages"][0]["content"]["format"] == 2
    assert (rows[0].metadata or {})["itemInput"] == item_input
    assert data_of(render_report(rows, batch_id="b"))["items"][0][1] == item_input
    plain_rows = anyio.run(stored, [plain])
    assert plain_rows[0].input == item_input
    assert "itemInput" not in (plain_rows[0].metadata or {})


def _scored(batch: str, scores: list[float], scorer: str = "judge") -> list[ScoreRow]:
    return [ScoreRow(id=f"{batch}{i}", scorer_id=scorer, run_id=f"{batch}:{i}", batch_id=batch,
                     status="scored", score=score, dataset_item_id=str(i))
            for i, score in enumerate(scores)]


def test_the_header_verdict_is_the_conjunction_of_every_gate_asked() -> None:
    """Checks that pass under a significant regression against the baseline, or under a κ
    below ``min_kappa``: the header says failed, lists each gate with its outcome, and gives
    the first failed gate's reason."""
    base = _scored("base", [1.0] * 30)
    new = _scored("new", [0.0] * 30)
    page = render_report(new, batch_id="new", baseline=base)
    assert '<span class="verdict failed" id="verdict">failed</span>' in page
    assert ('<p id="verdict-reason">verdict: failed — significant regression in judge</p>'
            in page)
    gates = page[page.index('<ul id="gates">'):page.index("</ul>")]
    assert ('checks (thresholds, gates, failure budget): <span class="pass">passed</span>'
            in gates)
    assert ('compared with baseline base: <span class="fail">significant regression</span>'
            in gates)
    same = render_report(_scored("new", [1.0] * 30), batch_id="new", baseline=base)
    assert '<span class="verdict passed" id="verdict">passed</span>' in same
    labels = {str(i): i % 2 == 0 for i in range(30)}
    coin = _scored("new", [0.9 if i % 4 < 2 else 0.1 for i in range(30)])
    calibration = calibrate(coin, labels, resamples=200)
    gated = render_report(coin, batch_id="new", calibration=calibration, min_kappa=0.6)
    assert '<span class="verdict failed" id="verdict">failed</span>' in gated
    assert "calibration: every scorer&#x27;s κ interval above 0.6" in gated
    assert "verdict: failed — judge: kappa " in gated
    ungated = render_report(coin, batch_id="new", calibration=calibration)
    assert '<span class="verdict passed" id="verdict">passed</span>' in ungated
    assert '<ul id="gates">' not in ungated


def test_a_judge_at_chance_gets_the_caveat_under_the_verdict() -> None:
    """With labels, a scorer whose κ interval includes 0 gets the one-line caveat in the
    header and in its calibration section; one that agrees gets none."""
    labels = {str(i): i % 2 == 0 for i in range(30)}
    rows = (_scored("b", [0.9 if i % 4 < 2 else 0.1 for i in range(30)], scorer="coin")
            + _scored("b", [0.9 if i % 2 == 0 else 0.1 for i in range(30)], scorer="sharp"))
    page = render_report(rows, batch_id="b", calibration=calibrate(rows, labels, resamples=200))
    header = page[:page.index("</header>")]
    caveat = "coin: agreement with your labels is at chance level: do not gate on this judge"
    assert f'<p class="caveat" id="caveat-0">{caveat}</p>' in header
    assert "sharp: agreement" not in page
    section = page[page.index('<section id="calibration">'):]
    assert f'<p class="caveat">{caveat}</p>' in section
