"""``scorecore show`` reads a batch a page at a time: the same output as from all its rows."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import pytest

from scorecore.evals import ScoreRow
from scorecore_adapters.cli import _show as show_command
from scorecore_adapters.cli import main
from scorecore_adapters.cli._common import print_table
from scorecore_adapters.cli._economics import fingerprints
from scorecore_adapters.cli._eval import group_json
from scorecore_adapters.cli._show import _cells, structured_outputs
from scorecore_adapters.cli._trust import trust_json
from scorecore_adapters.report._causes import FailureTally, cause_of_row
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.storage import _sqlite as sqlite_store
from tests.adapters.cli.test_results import evaluate, run, scorers  # noqa: F401 - fixture

pytestmark = pytest.mark.usefixtures("scorers")


@pytest.fixture
def batch(tmp_path: Path, scorers: Path, monkeypatch: pytest.MonkeyPatch) -> list[ScoreRow]:  # noqa: F811 - the fixture
    """A batch of 7 items x 2 scorers with failures and not-scorable runs, read 3 rows a page."""
    extra = {1: {"boom": "judge down"}, 4: {"skip": "no answer"}, 5: {"boom": "judge down"}}
    evaluate(tmp_path, scorers, "A", [0.9, 0.1, 0.5, 0.7, 0.2, 0.3, 1.0], extra,
             "--max-failures", "10")
    monkeypatch.setattr(sqlite_store, "PAGE", 3)

    async def rows() -> list[ScoreRow]:
        async with SqliteScoreStore(tmp_path / "r.db", read_only=True) as store:
            return await store.list_run("A")

    return anyio.run(rows)


def _expected_json(rows: list[ScoreRow], store: str, *, failures: bool) -> dict[str, object]:
    tally = FailureTally()
    listed = []
    for row in rows:
        cause = cause_of_row(row)
        item = row.dataset_item_id or row.run_id
        if cause is not None:
            tally.add(row.scorer_id, item, cause)
        if cause is not None or not failures:
            listed.append({"itemId": item, "runId": row.run_id, "scorerId": row.scorer_id,
                           "status": row.status, "score": row.score, "reason": row.reason,
                           "cause": None if cause is None else {
                               "kind": cause.kind, "step": cause.step,
                               "message": cause.message}})
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    return {"batchId": "A", "store": store, "counts": dict(sorted(counts.items())),
            "rows": listed, "failureCauses": [group_json(g) for g in tally.groups()],
            "fingerprints": fingerprints(rows), **trust_json(rows),
            "structuredOutput": structured_outputs(rows)}


@pytest.mark.parametrize("failures", [False, True])
def test_show_json_read_in_pages_is_the_whole_batch(
    tmp_path: Path, batch: list[ScoreRow], failures: bool
) -> None:
    """Pages of 3 rows: the JSON is the document built from every row at once, indented as
    before (print_json's layout)."""
    store = f"sqlite:{tmp_path / 'r.db'}"
    code, out, err = run("show", "A", "--store", store, "--json",
                         *(["--failures"] if failures else []))
    assert code == 0, err
    expected = _expected_json(batch, store, failures=failures)
    assert json.loads(out) == expected
    assert out == json.dumps(expected, indent=2, ensure_ascii=False, default=str) + "\n"


def test_show_table_read_in_pages_lists_every_row_aligned(
    tmp_path: Path, batch: list[ScoreRow]
) -> None:
    """Pages of 3 rows: one line per row in list_run's order, columns aligned over the whole
    batch, then the counts."""
    code, out, err = run("show", "A", "--store", f"sqlite:{tmp_path / 'r.db'}")
    assert code == 0, err
    lines = out.splitlines()
    table = lines[1:1 + len(batch)]
    assert [line.split()[:3] for line in table] == [
        [r.dataset_item_id, r.scorer_id, r.status] for r in batch]
    scorer_column = lines[0].index("scorer")
    assert all(line[scorer_column:].startswith(r.scorer_id)
               for line, r in zip(table, batch, strict=True))
    assert "14 rows (2 failed, 1 not_scorable, 11 scored)" in lines
    code, failed, _ = run("show", "A", "--store", f"sqlite:{tmp_path / 'r.db'}", "--failures")
    assert failed.splitlines()[-1] == "2 failed of 14 rows"


class _Terminal(io.StringIO):
    """An output that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("option", ["--json", "--failures"])
def test_show_on_a_terminal_reads_pages_for_json_and_failures(
    tmp_path: Path, batch: list[ScoreRow], monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    """On a terminal, ``--json`` and ``--failures`` print what they print elsewhere (no rich
    table in them), read a page at a time, never with ``list_run``."""
    store = f"sqlite:{tmp_path / 'r.db'}"
    _, elsewhere, _ = run("show", "A", "--store", store, option)

    _refuse_list_run(monkeypatch)
    out, err = _Terminal(), io.StringIO()
    code = main(["show", "A", "--store", store, option], out=out, err=err)
    assert code == 0, err.getvalue()
    assert out.getvalue() == elsewhere


def _refuse_list_run(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(self: SqliteScoreStore, batch_id: str, /) -> list[ScoreRow]:
        raise AssertionError(f"list_run({batch_id!r}) read the whole batch")

    monkeypatch.setattr(SqliteScoreStore, "list_run", refuse)


def test_show_on_a_terminal_reads_pages_around_its_rich_table(
    tmp_path: Path, batch: list[ScoreRow], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal: the rich table of every row, then the lines printed elsewhere after the
    table (fingerprints, agreements, counts, causes), the batch read a page at a time."""
    store = f"sqlite:{tmp_path / 'r.db'}"
    _, elsewhere, _ = run("show", "A", "--store", store)
    _refuse_list_run(monkeypatch)
    out, err = _Terminal(), io.StringIO()
    assert main(["show", "A", "--store", store], out=out, err=err) == 0, err.getvalue()
    table = _Terminal()
    print_table(("item", "scorer", "status", "score", "reason / cause"),
                [_cells(row, cause_of_row(row)) for row in batch], rich_output=True, out=table)
    tail = "".join(elsewhere.splitlines(keepends=True)[1 + len(batch):])
    assert out.getvalue() == table.getvalue() + tail


def test_show_on_a_terminal_lists_a_large_batch_as_text(
    tmp_path: Path, batch: list[ScoreRow], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch over the rich table's rows is listed on a terminal as elsewhere (aligned text),
    a page at a time."""
    store = f"sqlite:{tmp_path / 'r.db'}"
    _, elsewhere, _ = run("show", "A", "--store", store)
    _refuse_list_run(monkeypatch)
    monkeypatch.setattr(show_command, "RICH_ROWS", len(batch) - 1)
    out, err = _Terminal(), io.StringIO()
    assert main(["show", "A", "--store", store], out=out, err=err) == 0, err.getvalue()
    assert out.getvalue() == elsewhere


@pytest.mark.parametrize("as_json", [False, True])
def test_show_into_a_reader_that_stops_early_exits_quietly(tmp_path: Path, as_json: bool) -> None:
    """``scorecore show B | head -1``: the reader closes the pipe after a line; the command exits
    0 and prints nothing on stderr — no BrokenPipeError from Python's flush at exit, and (in
    development mode, which reports them) no file left open to silence that flush."""
    import subprocess  # noqa: PLC0415 - only this test runs the console entry point
    import sys  # noqa: PLC0415

    rows = [ScoreRow(id=f"B:{i}/s", scorer_id="s", run_id=f"B:{i}", batch_id="B",
                     status="scored", score=0.5, reason="r" * 40, dataset_item_id=f"item-{i}")
            for i in range(6000)]

    async def save() -> None:
        async with SqliteScoreStore(tmp_path / "s.db") as store:
            await store.save(rows)

    anyio.run(save)
    # Far more than a pipe's buffer (64 KiB on Linux), so the write after the close fails.
    argv = ["show", "B", "--store", f"sqlite:{tmp_path / 's.db'}", *(["--json"] if as_json
                                                                      else [])]
    command = [sys.executable, "-X", "dev", "-c",
               "import sys; from scorecore_adapters.cli import main; sys.exit(main())", *argv]
    with subprocess.Popen(command, stdout=subprocess.PIPE,  # noqa: S603 - our own argv
                          stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        assert process.stdout.readline()
        process.stdout.close()
        err = process.stderr.read().decode()
        code = process.wait(timeout=120)
    assert code == 0, err
    for telltale in ("BrokenPipeError", "Exception ignored", "ResourceWarning", "Traceback"):
        assert telltale not in err, err
