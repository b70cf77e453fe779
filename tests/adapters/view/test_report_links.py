"""The HTML report links each run to its page in a running workbench over the same store."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from scorecore.evals.store import row_item_id
from scorecore_adapters._workbenches import find_view, store_identity, views_dir
from scorecore_adapters.cli import main
from scorecore_adapters.report import render_report
from scorecore_adapters.view import running
from tests.adapters.view.stores import rows, store_with


@pytest.fixture(autouse=True)
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runtime directory of the test's own: no workbench of another test or user is seen."""
    where = tmp_path / "runtime"
    where.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(where))
    return where


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def view_prefix(html: str) -> str | None:
    found = re.search(r'<script type="application/json" id="view-links">(.*?)</script>', html)
    return None if found is None else str(json.loads(found.group(1))["run"])


def report(url: str, out: Path, *flags: str) -> str:
    code, _, err = run("report", "b1", "--store", url, "-o", str(out), *flags)
    assert code == 0, err
    return out.read_text(encoding="utf-8")


def test_a_running_view_is_recorded_without_its_token_and_removed_after(
        tmp_path: Path) -> None:
    """While the workbench runs, its record names the store and its address (no token);
    after it stops, the record is gone and no view is found."""
    url = store_with(tmp_path / "s.db", rows("b1", 5))
    with running(url) as address:
        token = address.split("token=", 1)[1]
        (record,) = views_dir().glob("*.json")  # type: ignore[union-attr]
        text = record.read_text(encoding="utf-8")
        assert token not in text
        assert json.loads(text)["store"] == store_identity(url)
        assert os.stat(record.parent).st_mode & 0o077 == 0
        assert find_view(url) == address.split("/?", 1)[0]
        assert find_view(f"sqlite:{tmp_path / 'other.db'}") is None
    assert list(views_dir().glob("*.json")) == []  # type: ignore[union-attr]
    assert find_view(url) is None


def test_a_stale_record_is_ignored_and_removed(tmp_path: Path) -> None:
    """A record whose process is gone, or whose address answers nothing, is no view."""
    url = store_with(tmp_path / "s.db", rows("b1", 5))
    where = views_dir()
    assert where is not None
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    records = {"dead.json": {"pid": int(dead.stdout), "port": closed_port},
               "silent.json": {"pid": os.getpid(), "port": closed_port}}
    for name, record in records.items():
        (where / name).write_text(json.dumps(
            {"store": store_identity(url), "host": "127.0.0.1", **record}), encoding="utf-8")
    (where / "torn.json").write_text('{"store": ', encoding="utf-8")
    assert find_view(url) is None
    assert list(where.glob("*.json")) == []
    assert view_prefix(report(url, tmp_path / "r.html")) is None


def test_the_report_links_each_run_to_its_page_in_the_view(tmp_path: Path) -> None:
    """With a workbench serving the store, each item of the report links to a URL the
    workbench answers with that run's page; the token is nowhere in the file."""
    made = rows("b1", 6, text="<b>&amp;")
    url = store_with(tmp_path / "s.db", made)
    with running(url) as address:
        base, token = address.split("/?token=", 1)
        html = report(url, tmp_path / "r.html")
        assert token not in html
        prefix = view_prefix(html)
        assert prefix is not None
        assert prefix.startswith(base + "/run?")
        assert "<th>workbench</th>" in html
        with httpx.Client() as browser:
            browser.get(address, follow_redirects=True)  # the token → the cookie
            for item in sorted({row_item_id(r) for r in made}):
                page = browser.get(prefix + quote(item, safe=""))
                assert page.status_code == 200, item
                assert f"question {int(item.split('-')[1])} " in page.text
    # The workbench stopped: the same report has no links again.
    assert view_prefix(report(url, tmp_path / "r2.html")) is None


def test_links_follow_the_flags_and_escape_what_they_carry(tmp_path: Path) -> None:
    """--no-view-links turns them off; --view-url links there (its token dropped); a view
    over another store is not linked; a bad --view-url is a usage error naming it."""
    url = store_with(tmp_path / "s.db", rows("b1", 3))
    other = store_with(tmp_path / "other.db", rows("b1", 3))
    with running(other):
        assert view_prefix(report(url, tmp_path / "a.html")) is None
        with running(url):
            assert view_prefix(report(url, tmp_path / "b.html", "--no-view-links")) is None
            html = report(url, tmp_path / "c.html", "--view-url",
                          "http://127.0.0.1:9/?token=s3cret#x")
    assert "s3cret" not in html
    assert view_prefix(html) == "http://127.0.0.1:9/run?batch=b1&item="
    code, _, err = run("report", "b1", "--store", url, "-o", str(tmp_path / "d.html"),
                       "--view-url", "javascript:alert(1)")
    assert code != 0
    assert "javascript:alert(1)" in err
    hostile = render_report(rows("</script><b>", 1), batch_id="</script><b>",
                            view_url="http://127.0.0.1:8765")
    links = re.search(r'id="view-links">(.*?)</script>', hostile)
    assert links is not None
    assert "<" not in links.group(1)
    assert json.loads(links.group(1))["run"].endswith("batch=%3C%2Fscript%3E%3Cb%3E&item=")


def test_without_a_view_the_report_is_as_it_was(tmp_path: Path) -> None:
    """No view_url: the page's two scripts only (data and explorer), nothing links out."""
    made = rows("b1", 4)
    html = render_report(made, batch_id="b1")
    assert html.count("<script") == 2
    assert "view-links" not in html
    assert "http://" not in html
    assert "<th>workbench</th>" not in html
    with pytest.raises(ValueError, match="view_url"):
        render_report(made, batch_id="b1", view_url="ftp://somewhere")


def test_the_command_records_itself_until_stopped_and_a_killed_one_is_stale(
        tmp_path: Path, runtime: Path) -> None:
    """scorecore view: recorded while it serves; stopped (SIGTERM), its record goes; killed
    outright, the record it leaves is stale, and the report links nowhere."""
    url = store_with(tmp_path / "s.db", rows("b1", 3))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
            [sys.executable, "-m", "scorecore_adapters", "view", "--store", url, "--port", "0",
             "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=env)

    records = runtime / "scorecore" / "views"
    # Stopped as soon as its URL shows, once it has served a page, and killed outright.
    for stop, serves in ((subprocess.Popen.terminate, False), (subprocess.Popen.terminate, True),
                         (subprocess.Popen.kill, True)):
        with start() as process:
            try:
                assert process.stdout is not None
                first = process.stdout.readline().strip()
                assert find_view(url) == first.split("/?", 1)[0]
                if serves:
                    assert httpx.get(first, follow_redirects=True).status_code == 200
                (record,) = records.glob("*.json")
                assert json.loads(record.read_text(encoding="utf-8"))["pid"] == process.pid
            finally:
                stop(process)
                process.wait(10)
        left = list(records.glob("*.json"))
        assert left == ([] if stop is subprocess.Popen.terminate else [record])
        assert view_prefix(report(url, tmp_path / "r.html")) is None
        assert list(records.glob("*.json")) == []
