"""The workbench over HTTP: pages, paging and filters, the token, CSRF, read-only, headers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from scorecore.evals import ScoreRow
from scorecore_adapters.view import running
from tests.adapters.view.stores import rows, scaled_rows, store_with


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("view") / "s.db"
    return store_with(path, rows("base", 120), rows("new", 120, shift=0.2))


@pytest.fixture(scope="module")
def served(url: str) -> Iterator[str]:
    with running(url) as address:
        yield address


@pytest.fixture
def client(served: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.split("/?", maxsplit=1)[0]) as http:
        assert http.get(served, follow_redirects=True).status_code == 200
        yield http


def csrf(page: str) -> str:
    found = re.search(r'<meta name="csrf" content="([0-9a-f]+)">', page)
    assert found is not None
    return found.group(1)


def test_every_page_needs_the_token_and_carries_a_strict_csp(served: str) -> None:
    """Without the token's cookie a page is refused; each response forbids inline script."""
    base = served.split("/?", maxsplit=1)[0]
    refused = httpx.get(base + "/batch?id=new")
    assert refused.status_code == 403
    assert "script-src 'self'" in refused.headers["content-security-policy"]
    assert httpx.get(base + "/?token=wrong").status_code == 403
    with httpx.Client() as http:
        page = http.get(served, follow_redirects=True)
    assert page.status_code == 200
    assert "unsafe-inline" not in page.headers["content-security-policy"]
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "token=" not in str(page.url)


def test_a_foreign_host_header_is_refused(client: httpx.Client) -> None:
    """A page reached through another name (DNS rebinding) is refused."""
    assert client.get("/", headers={"host": "evil.example:80"}).status_code == 421


def test_batches_list_counts_and_scorers(client: httpx.Client) -> None:
    """The batches page lists both batches with their scorers and counts."""
    page = client.get("/").text
    assert 'data-batch="base"' in page
    assert 'data-batch="new"' in page
    assert "exact, judge" in page


def test_batch_items_are_paged_filtered_and_sorted_on_the_server(client: httpx.Client) -> None:
    """240 rows: 50 a page; the judge's not-scorable rows filtered by cause; sorted by score."""
    first = client.get("/batch", params={"id": "new"}).text
    assert "240 run(s) · page 1 of 5" in first
    assert first.count("<tr data-run") == 50
    filtered = client.get("/batch", params={"id": "new", "cause": "empty_output"}).text
    assert "12 run(s)" in filtered
    scored = client.get("/batch", params={"id": "new", "scorer": "judge", "min": "0.5",
                                          "sort": "-score"}).text
    scores = [float(s) for s in re.findall(r"<td>(\d\.\d{3})</td>", scored)]
    assert scores == sorted(scores, reverse=True)
    assert min(scores) >= 0.5
    text = client.get("/batch", params={"id": "new", "q": "question 7 "}).text
    assert "2 run(s)" in text


def test_one_run_in_full(client: httpx.Client) -> None:
    """The run page shows input, output, reason, the judge's request, reply, usage and cost."""
    page = client.get("/run", params={"batch": "new", "item": "item-001"}).text
    for shown in ("question 1", "answer 1", "claims hold", "List the claims", "inputTokens",
                  "0.0001", "gpt-4o-mini"):
        assert shown in page
    missing = client.get("/run", params={"batch": "new", "item": "nope"})
    assert missing.status_code == 404


def test_compare_lists_paired_deltas_most_regressed_first(client: httpx.Client) -> None:
    """The new batch scores 0.2 lower: the judge regressed; deltas ascend."""
    page = client.get("/compare", params={"base": "base", "new": "new"}).text
    assert "verdict: regressed" in page
    deltas = [float(d) for d in re.findall(r'<td class="delta">(-?\d\.\d{3})</td>', page)]
    assert deltas
    assert deltas == sorted(deltas)


def test_a_label_needs_the_csrf_token(client: httpx.Client) -> None:
    """A POST without the CSRF token, or from another origin, stores nothing."""
    form = {"batch": "new", "item": "item-002", "scorer": "judge", "value": "true"}
    assert client.post("/labels", data=form).status_code == 403
    token = csrf(client.get("/").text)
    foreign = client.post("/labels", data={**form, "csrf": token},
                          headers={"origin": "http://evil.example"})
    assert foreign.status_code == 403
    page = client.get("/run", params={"batch": "new", "item": "item-002"}).text
    assert "<span class=\"value\">pass" not in page
    stored = client.post("/labels", data={**form, "csrf": token},
                         headers={"accept": "application/json"})
    assert stored.status_code == 200
    assert stored.json()["label"] == {"id": "item-002", "label": True, "scorer": "judge",
                                      "queued": []}


def test_read_only_refuses_labels(url: str) -> None:
    """--read-only: a correct POST is still refused, and pages show no keys."""
    with running(url, read_only=True) as address, httpx.Client(
            base_url=address.split("/?", maxsplit=1)[0]) as http:
        page = http.get(address, follow_redirects=True).text
        assert "read-only" in page
        refused = http.post("/labels", data={"batch": "new", "item": "item-003",
                                             "value": "true", "csrf": csrf(page)})
        assert refused.status_code == 403
        assert 'id="note"' not in http.get("/batch", params={"id": "new"}).text


def test_the_command_prints_its_url_with_the_token_first(url: str, tmp_path: Path) -> None:
    """scorecore view --port 0 --no-browser: the first line is the URL, which serves."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", "scorecore_adapters", "view", "--store", url, "--port", "0",
         "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=env,
    ) as process:
        try:
            assert process.stdout is not None
            first = process.stdout.readline().strip()
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{20,}", first), first
            with httpx.Client() as http:
                page = http.get(first, follow_redirects=True)
            assert page.status_code == 200
            assert "Batches" in page.text
        finally:
            process.terminate()
            process.wait(10)


@pytest.mark.skipif(os.environ.get("SCORECORE_TEST_POSTGRES_DSN") is None,
                    reason="SCORECORE_TEST_POSTGRES_DSN unset (start one with .ci/postgres.sh)")
def test_the_workbench_serves_a_postgresql_store() -> None:
    """Over PostgreSQL: the batch page lists the runs, a label is stored and shown."""
    dsn = os.environ["SCORECORE_TEST_POSTGRES_DSN"]
    batch = f"pg-view-{os.getpid()}"
    url = store_with(dsn, rows(batch, 12))
    with running(url) as address, httpx.Client(
            base_url=address.split("/?", maxsplit=1)[0]) as http:
        page = http.get(address, follow_redirects=True).text
        assert f'data-batch="{batch}"' in page
        assert "24 run(s)" in http.get("/batch", params={"id": batch}).text
        stored = http.post("/labels", data={"batch": batch, "item": "item-004",
                                            "scorer": "exact", "value": "0",
                                            "csrf": csrf(page)})
        assert stored.status_code == 303
        shown = http.get("/run", params={"batch": batch, "item": "item-004"}).text
        assert "<span class=\"value\">0.0</span>" in shown


def test_rows_written_while_serving_show_on_reload(tmp_path: Path) -> None:
    """A batch still running: rows saved after the page was first read appear on reload."""
    path = tmp_path / "s.db"
    url = store_with(path, rows("live", 10))
    with running(url) as address, httpx.Client(
            base_url=address.split("/?", maxsplit=1)[0]) as http:
        http.get(address, follow_redirects=True)
        assert "20 run(s)" in http.get("/batch", params={"id": "live"}).text
        store_with(path, rows("live", 15))
        assert "30 run(s)" in http.get("/batch", params={"id": "live"}).text


def test_an_embedded_app_checks_the_origin_against_its_own_host(url: str) -> None:
    """create_app served by another server: a POST from its own origin is stored, one from
    another origin refused."""
    from starlette.testclient import TestClient  # noqa: PLC0415 - this test only

    from scorecore_adapters.view import Guard, create_app  # noqa: PLC0415

    app = create_app(url, guard=Guard(token="t0k3n"))
    with TestClient(app, base_url="http://testserver") as http:
        page = http.get("/?token=t0k3n").text
        form = {"batch": "new", "item": "item-009", "scorer": "exact", "value": "true",
                "csrf": csrf(page)}
        assert http.post("/labels", data=form,
                         headers={"origin": "http://evil.example"}).status_code == 403
        assert http.post("/labels", data=form, headers={"origin": "http://testserver"},
                         follow_redirects=False).status_code == 303


def test_a_cascade_run_shows_its_tiers_and_low_confidence_is_a_cause_and_a_queue_reason(
    tmp_path: Path,
) -> None:
    """A cascade decided by its second tier: the run page names the tier and each tier's
    confidence; one no tier was sure of is found by cause low_confidence and queued so."""
    def row(item: str, tier: int | None, confidences: list[float]) -> ScoreRow:
        cascade = {"tier": tier, "scorerIds": ["cheap-tier", "strong-tier"],
                   "scores": [0.4, 0.9], "confidences": confidences, "minConfidence": 0.8,
                   "costs": [0.001, 0.02]}
        common: dict[str, object] = {"id": f"c/{item}", "scorer_id": "casc",
                                     "run_id": f"c:{item}", "batch_id": "c",
                                     "dataset_item_id": item, "input": "q", "output": "a"}
        if tier is None:
            return ScoreRow(status="not_scorable", **common, metadata={  # type: ignore[arg-type]
                "itemIndex": 1, "cascade": cascade,
                "notScorable": {"kind": "low_confidence", "message": "no tier was sure"}})
        return ScoreRow(status="scored", score=0.9, **common,  # type: ignore[arg-type]
                        metadata={"itemIndex": 0, "cascade": cascade})

    url = store_with(tmp_path / "c.db", [row("decided", 1, [0.55, 0.93]),
                                         row("unsure", None, [0.31, 0.62])])
    with running(url) as address, httpx.Client(
            base_url=address.split("/?", maxsplit=1)[0]) as http:
        http.get(address, follow_redirects=True)
        page = http.get("/run", params={"batch": "c", "item": "decided"}).text
        assert "decided by tier 1 (strong-tier)" in page
        assert re.findall(r'<td class="confidence">([\d.]+)</td>', page) == ["0.55", "0.93"]
        unsure = http.get("/run", params={"batch": "c", "item": "unsure"}).text
        assert "no tier reached confidence 0.80" in unsure
        assert re.findall(r'<td class="confidence">([\d.]+)</td>', unsure) == ["0.31", "0.62"]
        listed = http.get("/batch", params={"id": "c", "cause": "low_confidence"}).text
        assert "1 run(s)" in listed
        assert 'data-item="unsure"' in listed
        assert '<option selected>low_confidence</option>' in listed
        queue = http.get("/queue", params={"id": "c"}).text
        assert 'data-item="unsure" data-scorer="casc"' in queue
        assert 'data-queued="low_confidence"' in queue
        trust = http.get("/trust", params={"id": "c"}).text
        assert "<td>1 strong-tier</td><td>2</td><td>1</td>" in trust
        assert "1 low confidence, 0 failed" in trust


def test_each_scorer_s_digit_keys_are_said_on_the_page(tmp_path: Path) -> None:
    """A pass/fail scorer: 1 pass, 0 fail; a continuous one: d/9; a verdict scale: its
    values, lowest first; each row carries its scorer's digits."""
    url = store_with(tmp_path / "d.db", scaled_rows("d"))
    with running(url) as address, httpx.Client(
            base_url=address.split("/?", maxsplit=1)[0]) as http:
        http.get(address, follow_redirects=True)
        page = http.get("/batch", params={"id": "d"}).text
    legend = dict(re.findall(r'<li data-scale="(\w+)"><span class="id">\w+</span> (.*?)</li>',
                             page))
    assert legend["binary"] == "(pass/fail): 1 pass · 0 fail"
    assert legend["likert"] == "(verdicts): 0 = 1 · 1 = 2 · 2 = 3"
    assert legend["spread"].startswith("(continuous): 0 = 0 · 1 = 0.111111 · ")
    assert legend["spread"].endswith(" · 9 = 1")
    digits = dict(re.findall(r'data-scorer="(\w+)" data-digits="([^"]*)"', page))
    assert digits["binary"] == "{&#34;1&#34;: true, &#34;0&#34;: false}"
    assert digits["likert"] == "{&#34;0&#34;: 1.0, &#34;1&#34;: 2.0, &#34;2&#34;: 3.0}"


def test_the_batch_s_judge_cost_is_shown_once_summed(client: httpx.Client) -> None:
    """The cost is summed after the batch page is sent (it reads every judge call): a reload
    shows it, and the batches page too — 108 judge calls at 0.0001 USD."""
    shown = ""
    for _ in range(200):  # a background sum on a real thread: a bounded wait, not a timing
        shown = client.get("/batch", params={"id": "base"}).text
        if "being summed" not in shown:
            break
        time.sleep(0.05)
    assert "cost 0.0108 USD" in shown
    assert "<td>0.0108</td>" in client.get("/").text
