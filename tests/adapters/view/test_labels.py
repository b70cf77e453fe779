"""Labels in the store: append-only rows, export to the --labels file, import, --labels store."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from scorecore_adapters.cli import main
from scorecore_adapters.view import Label, LabelStore
from tests.adapters.view.stores import rows, store_with


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def add(url: str, *labels: Label) -> None:
    async def go() -> None:
        async with LabelStore(url) as store:
            await store.add(labels)

    anyio.run(go)


def current(url: str, batch: str) -> list[Label]:
    async def go() -> list[Label]:
        async with LabelStore(url, read_only=True) as store:
            return await store.current(batch_id=batch)

    return anyio.run(go)


DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")
BATCH = "b1"


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store holding batch b1 (30 items), in SQLite and in PostgreSQL (when
    SCORECORE_TEST_POSTGRES_DSN names a database: .ci/run starts one)."""
    if request.param == "sqlite":
        yield store_with(tmp_path / "s.db", rows(BATCH, 30))
        return
    if DSN is None:
        pytest.skip("SCORECORE_TEST_POSTGRES_DSN unset (start one with .ci/postgres.sh)")
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(DSN, autocommit=True) as conn:
        # this suite owns batch b1 in the shared database: start from nothing
        conn.execute("DROP TABLE IF EXISTS scorecore_labels")
        exists = conn.execute("SELECT to_regclass('scorecore_scores')").fetchone()
        if exists is not None and exists[0] is not None:
            conn.execute('DELETE FROM scorecore_scores WHERE "batchId" = %s', (BATCH,))
    yield store_with(DSN, rows(BATCH, 30))


def label(item: int, value: bool, scorer: str | None = "judge", **kw: object) -> Label:
    return Label(batch_id=BATCH, item_id=f"item-{item:03d}", scorer_id=scorer, value=value,
                 **kw)  # type: ignore[arg-type]


def test_a_new_label_supersedes_the_old_one_which_stays_in_the_history(url: str) -> None:
    """The current label is the latest; the history keeps both, oldest first."""
    add(url, label(1, True, note="fine"))
    add(url, label(1, False, note="missed a claim"))

    async def history() -> list[Label]:
        async with LabelStore(url) as store:
            return await store.history("b1", "item-001")

    assert [(lb.value, lb.note) for lb in current(url, "b1")] == [(False, "missed a claim")]
    assert [lb.value for lb in anyio.run(history)] == [True, False]


def test_a_label_of_no_value_is_refused_naming_the_field() -> None:
    """An empty string or NaN is not a label."""
    with pytest.raises(ValueError, match="value must be"):
        Label(batch_id="b", item_id="i", value=float("nan"))
    with pytest.raises(ValueError, match="item_id must be"):
        Label(batch_id="b", item_id="", value=True)


def test_export_writes_the_file_calibrate_reads_and_gives_the_same_kappa(
    url: str, tmp_path: Path
) -> None:
    """labels export → calibrate --labels FILE gives the κ of calibrate --labels store."""
    add(url, *(label(i, (i * 37) % 100 >= 40) for i in range(0, 30, 2)))
    add(url, label(4, True, "exact"))  # another scorer's label is not the judge's
    exported = tmp_path / "labels.jsonl"
    code, out, err = run("labels", "export", "--store", url, "--batch", "b1", "--scorer",
                         "judge", "-o", str(exported))
    assert code == 0, err
    assert "15 label(s)" in out
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert lines[0] == {"id": "item-000", "label": False, "scorer": "judge"}
    from_file = run("calibrate", "b1", "--store", url, "--labels", str(exported),
                    "--scorer", "judge", "--json")
    from_store = run("calibrate", "b1", "--store", url, "--labels", "store",
                     "--scorer", "judge", "--json")
    assert from_file[0] == from_store[0] == 0, from_file[2] + from_store[2]
    kappa_file = json.loads(from_file[1])["scorers"][0]["kappa"]
    kappa_store = json.loads(from_store[1])["scorers"][0]["kappa"]
    assert kappa_file == kappa_store
    assert kappa_file["value"] is not None


def test_labels_differing_across_scorers_need_a_scorer(url: str, tmp_path: Path) -> None:
    """Without --scorer, an item labelled true for one scorer and false for another is one
    usage error naming it."""
    add(url, label(3, True, "judge"), label(3, False, "exact"))
    code, _, err = run("labels", "export", "--store", url, "-o", str(tmp_path / "x.jsonl"))
    assert code == 2
    assert "'item-003' (judge, exact)" in err
    assert "--scorer" in err


def test_import_loads_a_labels_file_with_its_scorer_and_note(url: str, tmp_path: Path) -> None:
    """labels import stores each line (scorer and note kept); a bad file stores nothing."""
    good = tmp_path / "labels.jsonl"
    good.write_text('{"id": "item-001", "label": true, "note": "ok"}\n'
                    '{"id": "item-002", "label": false, "scorer": "exact"}\n')
    code, out, err = run("labels", "import", str(good), "--store", url, "--batch", "b1",
                         "--reviewer", "ana")
    assert code == 0, err
    assert "2 label(s)" in out
    stored = current(url, "b1")
    assert [(lb.item_id, lb.scorer_id, lb.value, lb.note, lb.reviewer) for lb in stored] == [
        ("item-001", None, True, "ok", "ana"), ("item-002", "exact", False, None, "ana")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "item-005", "label": true}\n{"id": "item-006"}\n')
    code, _, err = run("labels", "import", str(bad), "--store", url, "--batch", "b1")
    assert code == 2
    assert "bad.jsonl:2: field 'label' is missing" in err
    assert len(current(url, "b1")) == 2
    nul = tmp_path / "nul.jsonl"
    nul.write_text('{"id": "item-007", "label": true, "note": "a\\u0000b"}\n')
    code, _, err = run("labels", "import", str(nul), "--store", url, "--batch", "b1")
    assert code == 2
    assert "note holds a NUL character" in err
    assert len(current(url, "b1")) == 2
    code, _, err = run("labels", "import", str(good), "--store", url, "--batch", "nope")
    assert code == 2
    assert "no rows for batch 'nope'" in err


def test_report_reads_labels_from_the_store(url: str, tmp_path: Path) -> None:
    """report --labels store puts the calibration in the page."""
    add(url, *(label(i, i % 2 == 0, None) for i in range(10)))
    page = tmp_path / "r.html"
    code, _, err = run("report", "b1", "--store", url, "--labels", "store", "-o", str(page))
    assert code == 0, err
    assert "kappa" in page.read_text().lower()


def test_labels_store_without_labels_is_a_usage_error(url: str) -> None:
    """calibrate --labels store on a batch nobody labelled says so."""
    code, _, err = run("calibrate", "b1", "--store", url, "--labels", "store")
    assert code == 2
    assert "no labels for batch 'b1'" in err
