"""The workbench in a real headless Chromium, driven by Playwright: hostile stored text runs no
script anywhere, and a reviewer labels runs from the keyboard end to end.

.ci/run installs Debian's ``chromium``; Playwright drives that binary (``executable_path``),
never a browser of its own (nothing is downloaded). The server runs in this process, on a free
127.0.0.1 port.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import pytest

from scorecore.evals import ScoreRow
from scorecore_adapters.cli import main
from scorecore_adapters.view import Label, LabelStore, running
from tests.adapters.view.stores import off_loop, rows, scaled_rows, store_with

BROWSER = next((found for name in ("/usr/bin/chromium", "chromium", "chromium-browser")
                if (found := shutil.which(name))), None)
if BROWSER is None and not os.environ.get("CI"):
    pytest.skip("no chromium binary (.ci/run installs Debian's chromium with apt-get)",
                allow_module_level=True)
# Under CI (the dev extra installed) a missing playwright fails here instead of skipping.
sync_api: Any = (importlib.import_module("playwright.sync_api") if os.environ.get("CI")
                 else pytest.importorskip("playwright.sync_api"))

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
HOSTILE = ("</script><script>alert('script')</script><img src=x onerror=alert('img')>"
           "\"'><svg onload=alert('svg')></svg>{{7*7}}<a href=\"javascript:alert('a')\">x</a>")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=BROWSER, args=FLAGS)
        yield launched
        launched.close()


class Watched:
    """A page with every dialog and console error recorded."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(message.text)


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    page = Watched(browser)
    yield page
    page.context.close()


def _hostile_rows(batch: str) -> list[ScoreRow]:
    item = f"{HOSTILE}-item"
    common: dict[str, Any] = {"batch_id": batch, "dataset_item_id": item,
                              "input": HOSTILE, "output": {"html": HOSTILE}}
    return [
        ScoreRow(id=f"{batch}-1", scorer_id=f"{HOSTILE}-scorer", run_id=f"{batch}:{HOSTILE}",
                 status="scored", score=0.5, reason=HOSTILE, analyze_prompt=HOSTILE,
                 preprocess_step_result={"x": HOSTILE}, analyze_step_result=HOSTILE,
                 metadata={"itemIndex": 0, "judge": {"analyze": {"executions": [{
                     "status": "success", "prompt": HOSTILE, "rawOutput": HOSTILE,
                     "judgeModelId": HOSTILE, "usage": {"inputTokens": 1},
                     "costUsd": 0.1}]}}},
                 **common),
        ScoreRow(id=f"{batch}-2", scorer_id="plain", run_id=f"{batch}:x", status="not_scorable",
                 reason=HOSTILE, metadata={"itemIndex": 0, "notScorable": {
                     "kind": HOSTILE, "message": HOSTILE}}, **common),
        ScoreRow(id=f"{batch}-3", scorer_id="plain", run_id=f"{batch}:y", status="failed",
                 metadata={"itemIndex": 1, "error": HOSTILE, "failedStep": HOSTILE},
                 **{**common, "dataset_item_id": "second"}),
    ]


def test_hostile_text_in_every_stored_field_runs_no_script(
    tmp_path: Path, watched: Watched
) -> None:
    """Hostile strings as batch, item, run and scorer ids, input, output, reason, prompts,
    replies, causes, label notes and reviewers: every page shows them as text; no dialog
    opens, no injected element exists, the console stays clean."""
    batch = f"{HOSTILE}-batch"
    url = store_with(tmp_path / "s.db", _hostile_rows(batch), _hostile_rows("other"))

    async def label() -> None:
        async with LabelStore(url) as store:
            await store.add([Label(batch_id=batch, item_id=f"{HOSTILE}-item",
                                   scorer_id=f"{HOSTILE}-scorer", value=HOSTILE,
                                   note=HOSTILE, reviewer=HOSTILE, queued=(HOSTILE,))])

    off_loop(anyio.run, label)
    with running(url) as address:
        page = watched.page
        page.goto(address)
        assert batch in page.inner_text("table.batches")
        base = address.split("/?", maxsplit=1)[0]
        visits = [
            ("/batch", {"id": batch}), ("/batch", {"id": batch, "q": "alert"}),
            ("/run", {"batch": batch, "item": f"{HOSTILE}-item"}),
            ("/run", {"batch": batch, "item": "second"}),
            ("/queue", {"id": batch, "sample": "10"}), ("/ledger", {"id": batch}),
            ("/trust", {"id": batch}),
            ("/compare", {"base": "other", "new": batch}),
        ]
        for path, query in visits:
            page.goto(f"{base}{path}?{urlencode(query)}")
            assert "onerror=alert('img')" in page.inner_text("main"), path
            assert page.locator("main img, main svg, script:not([src])").count() == 0, path
            assert page.locator("a[href^='javascript']").count() == 0, path
        page.goto(f"{base}/run?{urlencode({'batch': batch, 'item': f'{HOSTILE}-item'})}")
        assert page.locator("table.history td", has_text="onload=alert").count() >= 2
        assert watched.errors == []
        # an unknown batch named by hostile text: a 404 page that quotes it as text
        missing = page.goto(f"{base}/batch?{urlencode({'id': HOSTILE})}")
        assert missing is not None
        assert missing.status == 404
        assert "onerror=alert(" in page.inner_text("main")
        assert page.locator("main img, main svg").count() == 0
    assert watched.dialogs == []


def _cli(argv: list[str], out: io.StringIO, err: io.StringIO) -> int:
    return main(argv, out=out, err=err)


def _export_kappa(url: str, tmp_path: Path, scorer: str) -> tuple[Any, int]:
    exported = tmp_path / "labels.jsonl"
    out, err = io.StringIO(), io.StringIO()
    assert off_loop(_cli, ["labels", "export", "--store", url, "--batch", "b1", "--scorer",
                           scorer, "--stratum", "random", "-o", str(exported)], out, err) == 0
    out = io.StringIO()
    assert off_loop(_cli, ["calibrate", "b1", "--store", url, "--labels", str(exported),
                           "--scorer", scorer, "--json"], out, err) == 0, err.getvalue()
    line = json.loads(out.getvalue())["scorers"][0]
    return line["kappa"]["value"], line["n"]


def test_keyboard_labelling_end_to_end(tmp_path: Path, watched: Watched) -> None:
    """In the queue: j/k to move, 1 and 0 to label, n for a note; the ledger shows the three
    labels and the κ that calibrate computes on the export."""
    url = store_with(tmp_path / "s.db", rows("b1", 20))
    with running(url) as address:
        page = watched.page
        page.goto(address)
        page.goto(address.split("/?", maxsplit=1)[0] + "/queue?id=b1&sample=100")
        queue = page.locator("tr[data-run]")
        shown = [(queue.nth(i).get_attribute("data-scorer"),
                  queue.nth(i).locator("td").nth(2).inner_text()) for i in range(queue.count())]
        assert all("random" in (queue.nth(i).get_attribute("data-queued") or "")
                   for i in range(queue.count()))
        exact = [i for i, (scorer, _) in enumerate(shown) if scorer == "exact"]
        passing = [i for i in exact if shown[i][1] == "1.000"]
        failing = [i for i in exact if shown[i][1] == "0.000"]
        # two the judge got right, one it got wrong (with a note): kappa is defined
        plan = sorted([(passing[0], "1", None), (failing[0], "0", None),
                       (passing[1], "0", "wrong: no claim holds")])
        page.keyboard.press("j")
        page.keyboard.press("j")
        page.keyboard.press("k")
        assert "selected" in (queue.nth(1).get_attribute("class") or "")
        assert page.locator("tr[data-run].selected").count() == 1
        at = 1
        for target, key, note in plan:
            while at < target:
                page.keyboard.press("j")
                at += 1
            while at > target:
                page.keyboard.press("k")
                at -= 1
            assert "selected" in (queue.nth(at).get_attribute("class") or "")
            if note is not None:
                page.keyboard.press("n")
                page.keyboard.type(note)
                page.keyboard.press("Enter")
            page.keyboard.press(key)
            page.wait_for_function(
                "i => document.querySelectorAll('tr[data-run]')[i].dataset.labelled === 'yes'",
                arg=at)
            at += 1  # a label moves to the next run
        noted = next(target for target, _, note in plan if note is not None)
        assert "wrong: no claim holds" in queue.nth(noted).inner_text()
        page.reload()
        ledger = page.locator("table.ledger tr[data-scorer='exact']")
        assert ledger.locator("td.labels").inner_text() == "3"
        shown_kappa = ledger.locator("td.value").inner_text()
    kappa, n = _export_kappa(url, tmp_path, "exact")
    assert n == 3
    assert kappa is not None
    assert shown_kappa == f"{kappa:.3f}"
    assert watched.dialogs == []
    assert watched.errors == []


def test_a_report_link_opens_the_run_in_the_workbench(tmp_path: Path, watched: Watched,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A report written while the workbench serves its store, opened from disk: an item's
    link opens that run's page in the workbench (the browser opened the workbench once)."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    url = store_with(tmp_path / "s.db", rows("b1", 4))
    report = tmp_path / "report.html"
    with running(url) as address:
        code = off_loop(_cli, ["report", "b1", "--store", url, "-o", str(report)],
                        io.StringIO(), io.StringIO())
        assert code == 0
        page = watched.page
        page.goto(address)
        page.goto(report.as_uri())
        link = page.locator("#items-body tr").first.locator("a.view-run")
        item = page.locator("#items-body tr").first.locator("td").first.inner_text()
        link.click()
        page.wait_for_url(re.compile(r"/run\?"))
        assert item in page.content()
        assert "forbidden" not in page.content()
        assert watched.dialogs == []


def test_a_page_elsewhere_cannot_label_through_the_cookie(tmp_path: Path,
                                                          watched: Watched) -> None:
    """The cookie follows links from other pages, not their writes: a page opened from disk
    that posts a label to the workbench (in a browser that opened it; even knowing the CSRF
    token) is refused and stores nothing."""
    url = store_with(tmp_path / "s.db", rows("b1", 4))
    with running(url) as address:
        base = address.split("/?", maxsplit=1)[0]
        page = watched.page
        page.goto(address)
        csrf = page.locator('meta[name="csrf"]').get_attribute("content")
        forged = tmp_path / "forged.html"
        forged.write_text(
            f'<form method="post" action="{base}/labels"><input name="batch" value="b1">'
            '<input name="item" value="item-000"><input name="scorer" value="judge">'
            f'<input name="value" value="false"><input name="csrf" value="{csrf}"></form>'
            "<script>document.forms[0].submit()</script>", encoding="utf-8")
        with page.expect_response(lambda response: response.url.endswith("/labels")) as sent:
            page.goto(forged.as_uri())
        assert sent.value.status == 403

    async def stored() -> list[Label]:
        async with LabelStore(url, read_only=True) as store:
            return await store.current(batch_id="b1")

    assert off_loop(anyio.run, stored) == []


def test_digit_keys_label_on_each_scorer_s_scale(tmp_path: Path, watched: Watched) -> None:
    """By keyboard on a batch page: 5 on a pass/fail scorer is refused (said, nothing stored)
    and 1 labels it pass; 2 on a 1-2-3 verdict scorer labels it 3; 7 on a continuous 0..1
    scorer labels it 7/9."""
    url = store_with(tmp_path / "s.db", scaled_rows("d"))
    with running(url) as address:
        page = watched.page
        page.goto(address)
        page.goto(address.split("/?", maxsplit=1)[0] + "/batch?id=d")
        runs = page.locator("tr[data-run]")
        assert [runs.nth(i).get_attribute("data-scorer") for i in range(3)] == [
            "binary", "likert", "spread"]
        page.keyboard.press("5")
        page.wait_for_function(
            "() => document.getElementById('status').textContent.includes('not on the scale')")
        assert runs.nth(0).get_attribute("data-labelled") is None
        for key, at in (("1", 0), ("2", 1), ("7", 2)):
            page.keyboard.press(key)
            page.wait_for_function(
                "i => document.querySelectorAll('tr[data-run]')[i].dataset.labelled === 'yes'",
                arg=at)
        shown = [runs.nth(i).locator("td.label").inner_text() for i in range(3)]

    async def stored() -> dict[str, object]:
        async with LabelStore(url, read_only=True) as store:
            return {lb.scorer_id or "": lb.value for lb in await store.current(batch_id="d")}

    assert off_loop(anyio.run, stored) == {"binary": True, "likert": 3.0,
                                           "spread": pytest.approx(7 / 9, abs=1e-6)}
    assert shown == ["pass", "3", "0.777778"]
    assert watched.dialogs == []
    assert watched.errors == []
