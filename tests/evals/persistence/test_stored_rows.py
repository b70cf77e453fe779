"""Rows scorecore did not write: every store and every read command names the bad row.

Another writer's row (a text score, an infinite one, a time that is not ISO-8601, JSON that does
not parse or is not an object, a status or source outside its values) is refused when it is
read, by the one decoder every store uses (``decode_row``): a ``StoredRowError`` naming the row,
the column and the value; every read command prints it in one line and exits 2. Large but
finite scores (±1e308) are data like any other: ``compare`` and ``report --baseline`` read them.
Checked against SQLite, PostgreSQL (when SCORECORE_TEST_POSTGRES_DSN is set) and the store in
memory.
"""

from __future__ import annotations

import io
import json
import math
import re
import shutil
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

from scorecore.evals import ScoreRow, compare
from scorecore.evals.store import StoredRowError, decode_row, row_id
from scorecore_adapters.cli import main
from scorecore_adapters.storage import SqliteScoreStore
from scorecore_adapters.testing import InMemoryScoreStore
from tests.evals.persistence.test_storage import DSN, make_store

pytestmark = pytest.mark.anyio


def _row(batch: str, item: int, scorer: str, score: float = 0.5) -> ScoreRow:
    run = f"{batch}:q{item}"
    return ScoreRow(
        id=row_id(run, scorer), scorer_id=scorer, run_id=run, batch_id=batch, status="scored",
        score=score, reason="r", scorer={"id": scorer}, input="question", output="answer",
        dataset_item_id=f"q{item}", metadata={"itemIndex": item, "status": "scored"},
    )


def _batch(batch: str, scores: Sequence[float] = (0.5, 0.75, 1.0)) -> list[ScoreRow]:
    return [_row(batch, i, s, score) for i, score in enumerate(scores) for s in ("s", "t")]


# What another writer put in one row's column (SQLite SQL), and the value read back.
SQLITE_EDITS: list[tuple[str, str, object]] = [
    ("score", "'high'", "high"),
    ("score", "'inf'", "inf"),
    ("score", "9e999", math.inf),
    ("score", "-9e999", -math.inf),
    ("createdAt", "'yesterday'", "yesterday"),
    ("createdAt", "'01/02/2025'", "01/02/2025"),
    ("updatedAt", "5", "5"),  # TEXT affinity: the number comes back as text
    ("status", "'weird'", "weird"),
    ("source", "'PROD'", "PROD"),
    ("reason", "X'00ff'", b"\x00\xff"),
    ("metadata", "'{bad'", "{bad"),
    ("metadata", "'[1]'", "[1]"),
    ("metadata", """'{"itemIndex": NaN}'""", '{"itemIndex": NaN}'),
    ("scorer", "'\"text\"'", '"text"'),
    ("input", "'NaN'", "NaN"),
    ("output", "'[1e999]'", "[1e999]"),
]
_EDITED = "A:q1", "s"


def _edit_sqlite(db: Path, column: str, sql_value: str) -> str:
    """Set one row's column, as another writer would; the edited row's id."""
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            f'UPDATE scorecore_scores SET "{column}" = {sql_value} '  # noqa: S608 - test constants
            'WHERE "runId" = ? AND "scorerId" = ?', _EDITED,
        )
    return row_id(*_EDITED)


async def _write(db: Path, *batches: list[ScoreRow]) -> None:
    async with SqliteScoreStore(db) as store:
        for rows in batches:
            await store.save(rows)


def _check(error: StoredRowError, column: str, value: object) -> None:
    assert error.row_id == row_id(*_EDITED)
    assert error.column == column
    assert error.value == value or (
        isinstance(value, float) and math.isnan(value) and math.isnan(error.value)  # type: ignore[arg-type]
    )
    text = str(error)
    assert "\n" not in text
    assert error.row_id in text
    assert repr(column) in text


@pytest.mark.parametrize(("column", "sql_value", "value"), SQLITE_EDITS)
async def test_sqlite_reads_name_the_row_another_writer_broke(
    anyio_backend: str, tmp_path: Path, column: str, sql_value: str, value: object
) -> None:
    """list_run (and completed, for the outcome columns) raise StoredRowError naming it."""
    db = tmp_path / "scores.db"
    await _write(db, _batch("A"))
    _edit_sqlite(db, column, sql_value)
    async with SqliteScoreStore(db, read_only=True) as store:
        with pytest.raises(StoredRowError) as listed:
            await store.list_run("A")
        _check(listed.value, column, value)
        assert listed.value.operation == "list_run"
        if column in ("score", "reason") or (column == "status" and value == "scored"):
            with pytest.raises(StoredRowError) as done:
                await store.completed("A")
            _check(done.value, column, value)


async def test_an_item_index_of_another_type_never_fails_the_listing(
    anyio_backend: str, tmp_path: Path
) -> None:
    """metadata.itemIndex that is not a number only moves its row to the end."""
    db = tmp_path / "scores.db"
    await _write(db, _batch("A"))
    _edit_sqlite(db, "metadata", """'{"itemIndex": "first"}'""")
    async with SqliteScoreStore(db, read_only=True) as store:
        rows = await store.list_run("A")
    assert [(r.run_id, r.scorer_id) for r in rows][-1] == _EDITED
    assert len(rows) == 6


# PostgreSQL's types keep out text scores and bad times; what they let through:
PG_EDITS: list[tuple[str, str, object]] = [
    ("score", "'Infinity'::float8", math.inf),
    ("score", "'NaN'::float8", math.nan),
    ("status", "'weird'", "weird"),
    ("source", "'PROD'", "PROD"),
    ("metadata", "'[1]'::jsonb", [1]),
    ("scorer", "'\"text\"'::jsonb", "text"),
]


@pytest.mark.skipif(DSN is None, reason="SCORECORE_TEST_POSTGRES_DSN unset")
@pytest.mark.parametrize(("column", "sql_value", "value"), PG_EDITS)
async def test_postgres_reads_name_the_row_another_writer_broke(
    anyio_backend: str, tmp_path: Path, column: str, sql_value: str, value: object
) -> None:
    """The same error from PostgreSQL, whose column types let these values through."""
    import psycopg  # noqa: PLC0415 - only when PostgreSQL tests run

    assert DSN is not None
    async with make_store("postgres", tmp_path) as store:
        await store.save(_batch("A"))
        with psycopg.connect(DSN, autocommit=True) as conn:
            conn.execute(
                f'UPDATE "{store._table}" SET "{column}" = {sql_value} '  # type: ignore[arg-type]  # noqa: S608
                'WHERE "runId" = %s AND "scorerId" = %s', _EDITED,
            )
            conn.execute(
                f'''UPDATE "{store._table}" SET "metadata" = '{{"itemIndex": "x"}}'::jsonb '''  # type: ignore[arg-type]  # noqa: S608
                '''WHERE "runId" = 'A:q2' AND "scorerId" = 't' ''',
            )
        with pytest.raises(StoredRowError) as listed:
            await store.list_run("A")
        _check(listed.value, column, value)
        if column == "score":
            with pytest.raises(StoredRowError) as done:
                await store.completed("A")
            _check(done.value, column, value)


@pytest.mark.parametrize(("attribute", "value"), [
    ("score", "high"), ("score", math.inf), ("score", True), ("status", "weird"),
    ("metadata", [1]), ("reason", 5), ("created_at", "yesterday"),
])
async def test_the_store_in_memory_reads_as_the_databases_do(
    anyio_backend: str, attribute: str, value: object
) -> None:
    """A row saved with a value no database store could read back fails the same way."""
    store = InMemoryScoreStore()
    rows = _batch("A")
    rows[2] = attrs.evolve(rows[2], **{attribute: value})
    await store.save(rows)
    if attribute == "created_at":
        # The store stamps its own times: what it keeps is always readable.
        assert len(await store.list_run("A")) == 6
        return
    with pytest.raises(StoredRowError) as listed:
        await store.list_run("A")
    column = {"created_at": "createdAt"}.get(attribute, attribute)
    _check(listed.value, column, value)


def test_decode_row_takes_what_the_stores_write() -> None:
    """Every column of a row as SQLite gives it back decodes to the row itself."""
    row = attrs.evolve(_row("A", 1, "s", score=1e308), entity={"id": "x"},
                       request_context={"user": "u"}, source="LIVE")
    record: dict[str, Any] = {}
    for field in attrs.fields(ScoreRow):
        value = getattr(row, field.name)
        kind = field.metadata["kind"]
        name = {"run_id": "runId", "scorer_id": "scorerId", "batch_id": "batchId"}.get(
            field.name, "".join(p if i == 0 else p.title() for i, p in
                                enumerate(field.name.split("_"))))
        record[name] = json.dumps(value) if kind == "json" and value is not None else value
    assert decode_row(record, json_text=True, store="sqlite:x") == row


# --- the read commands ------------------------------------------------------------------

SCORERS = """
from scorecore import create_scorer
s = create_scorer(id="s", description="d").generate_score(lambda ctx: 0.5)
t = create_scorer(id="t", description="d").generate_score(lambda ctx: 0.5)
"""

READS = [
    ["show", "A"], ["show", "A", "--failures"], ["show", "A", "--json"],
    ["compare", "A", "B"], ["compare", "B", "A", "--json"],
    ["report", "A", "-o", "r.html"], ["report", "B", "--baseline", "A", "-o", "r.html"],
    ["eval", "scorers.py", "--data", "data.jsonl", "--resume", "A"],
]
_OUTCOME_COLUMNS = {"score", "status", "reason"}  # the columns a resume reads
# compare reads, besides the ids, each pair's outcome and each scorer's fingerprint: the store
# pairs the batches, so a batch of millions of rows is never loaded whole.
_COMPARED_COLUMNS = {"score", "status", "scorer"}


def cli(work: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([*argv, "--store", f"sqlite:{work / 'scores.db'}"], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with batches A and B (2 scorers, 3 items), and files to resume A with."""
    work = tmp_path_factory.mktemp("written")
    anyio.run(_write, work / "scores.db", _batch("A"), _batch("B", (0.5, 0.25, 1.0)))
    (work / "scorers.py").write_text(SCORERS)
    (work / "data.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "input": "question", "output": "answer"}) + "\n"
        for i in range(3)
    ))
    return work


@pytest.fixture
def work(written: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("scores.db", "scorers.py", "data.jsonl"):
        shutil.copy(written / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("column", "sql_value", "value"), SQLITE_EDITS)
def test_every_read_command_names_the_bad_row_in_one_line(
    work: Path, column: str, sql_value: str, value: object
) -> None:
    """show, batches, compare, report and a resume: exit 2, one line naming row, column,
    value; never a traceback. Commands that do not read the column are unaffected."""
    bad_id = _edit_sqlite(work / "scores.db", column, sql_value)
    reads = [*READS, ["batches"], ["batches", "--json"]]
    for argv in reads:
        code, out, err = cli(work, *argv)
        reads_column = (
            argv[0] in ("show", "report")
            or (argv[0] == "compare" and column in _COMPARED_COLUMNS)
            or (argv[0] == "eval" and column in _OUTCOME_COLUMNS)
            # batches reads a batch's MIN(createdAt) and MAX(updatedAt) only: as text,
            # "yesterday" sorts after every ISO time, so it is never the first write.
            or (argv[0] == "batches" and column in ("createdAt", "updatedAt")
                and value != "yesterday")
        )
        if argv[0] == "eval" and column == "status":
            reads_column = False  # a resume reads final rows only: "weird" is not one
        if not reads_column:
            # compare of 3 paired items: no verdict (3), the rows read all the same.
            assert code in ((3,) if argv[0] == "compare" else (0, 1)), (argv, err)
            continue
        assert code == 2, (argv, out, err)
        assert "Traceback" not in err
        assert err.count("\n") == 1, (argv, err)
        assert err.startswith("scorecore: error: "), err
        assert bad_id in err, (argv, err)
        assert repr(column) in err, (argv, err)


def _scores(work: Path, batch: str, score: float) -> None:
    with closing(sqlite3.connect(work / "scores.db")) as conn, conn:
        conn.execute('UPDATE scorecore_scores SET "score" = ? WHERE "batchId" = ? '
                     'AND "scorerId" = ?', (score, batch, "s"))


@pytest.mark.parametrize("huge", [1e308, -1e308, 1.7976931348623157e308])
def test_huge_finite_scores_are_compared_and_reported(work: Path, huge: float) -> None:
    """Scores of ±1e308 are finite data: compare and report --baseline read them (exit 0 or
    1 as the data says), their means and intervals finite."""
    _scores(work, "A", huge)
    code, out, err = cli(work, "compare", "A", "B", "--json", "--min-paired", "3")
    assert code in (0, 1), err
    result = json.loads(out)
    (s,) = [c for c in result["scorers"] if c["id"] == "s"]
    assert s["baseMean"] == huge
    assert all(math.isfinite(s[k]) for k in ("meanDelta", "ciLow", "ciHigh"))
    assert s["verdict"] == ("regressed" if huge > 0 else "improved")
    assert code == (1 if huge > 0 else 0)
    code, _, err = cli(work, "report", "B", "--baseline", "A", "-o", "r.html")
    assert code == 0, err
    code, out, err = cli(work, "show", "A")
    assert code == 0, err


def test_a_difference_beyond_the_largest_float_names_the_rows(work: Path) -> None:
    """-1e308 in one batch, 1e308 in the other: the change is not a float; one line, exit 2,
    naming both rows and their scores."""
    _scores(work, "A", -1e308)
    _scores(work, "B", 1e308)
    for argv in (["compare", "A", "B"], ["report", "B", "--baseline", "A", "-o", "r.html"]):
        code, _, err = cli(work, *argv)
        assert code == 2, err
        assert err.count("\n") == 1, err
        assert row_id("A:q0", "s") in err
        assert row_id("B:q0", "s") in err
        assert "-1e+308" in err
        assert "1e+308" in err


def test_compare_of_huge_scores_matches_compare_of_scaled_ones() -> None:
    """The interval of scores near the largest float is the interval of the same scores
    scaled down, scaled back: nothing overflows on the way."""
    base = [_row("a", i, "s", score=v) for i, v in enumerate([1e308, -1e308, 5e307, 0.0])]
    new = [_row("b", i, "s", score=v) for i, v in enumerate([-1e307, 1e307, 1e308, 1e308])]
    scale = 2.0**-20
    small = compare([attrs.evolve(r, score=r.score * scale) for r in base],  # type: ignore[operator]
                    [attrs.evolve(r, score=r.score * scale) for r in new],  # type: ignore[operator]
                    min_paired=1)
    big = compare(base, new, min_paired=1)
    (s_small,), (s_big,) = small.scorers, big.scorers
    for name in ("base_mean", "new_mean", "mean_delta", "ci_low", "ci_high"):
        assert getattr(s_big, name) == getattr(s_small, name) / scale, name


def test_a_report_of_scores_across_the_whole_float_range(work: Path) -> None:
    """One batch scoring both -1e308 and the largest float: its report is written, its
    summary mean finite."""
    with closing(sqlite3.connect(work / "scores.db")) as conn, conn:
        conn.execute('UPDATE scorecore_scores SET "score" = -1e308 WHERE "runId" = \'A:q0\'')
        conn.execute('UPDATE scorecore_scores SET "score" = ? WHERE "runId" = \'A:q1\'',
                     (1.7976931348623157e308,))
    code, out, err = cli(work, "report", "A", "-o", "r.html")
    assert (code, err) == (0, ""), out
    page = (work / "r.html").read_text()
    tables = page[page.index("<h2>Summary</h2>"):page.index("<h2>Failures</h2>")]
    assert not {"nan", "inf"} & set(re.findall(r"[a-z]+", tables.lower()))


def test_huge_scores_are_printed_short(work: Path) -> None:
    """show and compare print 1e+308, not a number of 309 digits."""
    _scores(work, "A", 1e308)
    for argv in (["show", "A"], ["compare", "A", "B", "--min-paired", "3"]):
        code, out, err = cli(work, *argv)
        assert code in (0, 1), err
        assert "1e+308" in out
        assert "0" * 100 not in out
