"""``scorecore report`` reads a batch a page at a time: the same page as from all its rows.

Checked against SQLite and PostgreSQL (when SCORECORE_TEST_POSTGRES_DSN is set).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore.evals import ScoreRow, Threshold
from scorecore.evals.results import OutcomeStatus as Status
from scorecore_adapters.cli._calibrate import calibration_of, report_thresholds
from scorecore_adapters.cli._compare import compare_batches
from scorecore_adapters.report import render_report
from scorecore_adapters.storage import SqliteScoreStore, open_store
from scorecore_adapters.storage import _postgres as postgres_store
from scorecore_adapters.storage import _sqlite as sqlite_store
from tests.cli_runs import run

DSN = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")
KINDS = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.skipif(
        DSN is None, reason="SCORECORE_TEST_POSTGRES_DSN unset")),
]
_REASONS = ["ok", "no answer", "<b>bold</b>", "x" * 300]


@st.composite
def batches(draw: st.DrawFn, batch_id: str) -> list[ScoreRow]:
    """Small batches: two scorers, trials, every status, scores in and out of [0, 1], rows
    with and without a dataset position (so items are not always consecutive)."""
    items = draw(st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=6, unique=True))
    trials = draw(st.integers(1, 2))
    positioned = draw(st.booleans())
    rows = []
    for trial in range(trials):
        for index, item in enumerate(items):
            run_id = f"{batch_id}:{item}" if trials == 1 else f"{batch_id}/trial-{trial}:{item}"
            for scorer in draw(st.lists(st.sampled_from(["s", "t"]), min_size=1, max_size=2,
                                        unique=True)):
                status: Status = draw(st.sampled_from(["scored", "scored", "not_scorable",
                                                       "failed"]))
                metadata: dict[str, Any] = {"status": status}
                if positioned:
                    metadata["itemIndex"] = index
                if status == "failed":
                    metadata |= {"error": draw(st.sampled_from(["judge down", "timeout"])),
                                 "failedStep": "analyze"}
                score = (draw(st.sampled_from([0.0, 0.25, 1.0, -2.0, 3.5]))
                         if status == "scored" else None)
                rows.append(ScoreRow(
                    id=f"{run_id}/{scorer}", scorer_id=scorer, run_id=run_id, batch_id=batch_id,
                    status=status, score=score, reason=draw(st.sampled_from(_REASONS)),
                    input={"q": item}, output=draw(st.sampled_from(["yes", "no", "y" * 500])),
                    dataset_item_id=item if draw(st.booleans()) else None, metadata=metadata))
    return rows


def _store_url(kind: str, folder: Path) -> str:
    if kind == "postgres":
        assert DSN is not None
        return DSN
    return f"sqlite:{folder / 's.db'}"


async def _save_and_read(url: str, batches: Sequence[list[ScoreRow]]) -> list[list[ScoreRow]]:
    async with open_store(url) as store:
        for rows in batches:
            await store.save(rows)
        return [await store.list_run(rows[0].batch_id) for rows in batches]


def _expected(
    url: str, rows: list[ScoreRow], base: list[ScoreRow] | None, budget: int
) -> str:
    """The page ``render_report`` makes of every row at once, as the command asks for it."""
    args = argparse.Namespace(store=url, tolerance=0.02, min_paired=None,
                              require_same_scorers=False)
    thresholds = {"s": Threshold(min=0.5)} if any(r.scorer_id == "s" for r in rows) else {}
    comparison = None if base is None else compare_batches(base, rows, args, thresholds)
    return render_report(rows, batch_id=rows[0].batch_id, baseline=base, thresholds=thresholds,
                         source=open_store(url).url, comparison=comparison, budget=budget)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), with_baseline=st.booleans(), budget=st.sampled_from([4_500_000, 400]))
def test_report_read_in_pages_is_the_page_of_all_rows(
    kind: str, monkeypatch: pytest.MonkeyPatch, data: st.DataObject, with_baseline: bool,
    budget: int,
) -> None:
    """Pages of 3 rows, items consecutive or not, a baseline or none, texts cut to a budget or
    not: the file is byte for byte the page of every row read at once."""
    monkeypatch.setattr(sqlite_store, "PAGE", 3)
    monkeypatch.setattr(postgres_store, "PAGE", 3)
    monkeypatch.setattr("scorecore_adapters.cli._report.DEFAULT_BUDGET", budget, raising=False)
    tag = uuid.uuid4().hex[:8]
    new = data.draw(batches(f"new-{tag}"))
    base = data.draw(batches(f"base-{tag}")) if with_baseline else None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = _store_url(kind, folder)
        stored = anyio.run(_save_and_read, url, [new] if base is None else [new, base])
        out = folder / "r.html"
        code, printed, err = run(
            "report", new[0].batch_id, "--store", url, "-o", str(out), "--no-view-links",
            *(["--threshold", "s=0.5"] if any(r.scorer_id == "s" for r in new) else []),
            *([] if base is None else ["--baseline", base[0].batch_id]))
        assert code == 0, err
        expected = _expected(url, stored[0], None if base is None else stored[1], budget)
        assert out.read_text(encoding="utf-8") == expected
        assert f"({len(new)} rows)" in printed


def test_report_never_reads_the_whole_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command reads pages (memory flat in the batch's size), never ``list_run``."""
    rows = [ScoreRow(id=f"b:{i}/s", scorer_id="s", run_id=f"b:{i}", batch_id="b",
                     status="scored", score=i / 9, metadata={"itemIndex": i}) for i in range(10)]
    url = f"sqlite:{tmp_path / 's.db'}"
    (stored,) = anyio.run(_save_and_read, url, [rows])

    async def refuse(self: SqliteScoreStore, batch_id: str, /) -> list[ScoreRow]:
        raise AssertionError(f"list_run({batch_id!r}) read the whole batch")

    monkeypatch.setattr(SqliteScoreStore, "list_run", refuse)
    monkeypatch.setattr(sqlite_store, "PAGE", 4)
    out = tmp_path / "r.html"
    code, _, err = run("report", "b", "--store", url, "-o", str(out), "--no-view-links")
    assert code == 0, err
    assert out.read_text(encoding="utf-8") == render_report(
        stored, batch_id="b", source=open_store(url).url)


def _labels_file(path: Path, labels: dict[str, bool]) -> Path:
    path.write_text("".join(json.dumps({"id": k, "label": v}) + "\n" for k, v in labels.items()),
                    encoding="utf-8")
    return path


def _labelled_page(
    url: str, rows: list[ScoreRow], base: list[ScoreRow] | None, *, labels: dict[str, bool],
    labels_path: Path, min_kappa: float | None,
) -> str:
    """The page ``render_report`` makes of every row at once with ``--labels``: the
    calibration over all the rows, as the command computed it when it read the batch whole."""
    args = argparse.Namespace(store=url, tolerance=0.02, min_paired=None,
                              require_same_scorers=False, labels=str(labels_path),
                              kind="binary", scale=None, label_value=[])
    thresholds = {"s": Threshold(min=0.5)} if any(r.scorer_id == "s" for r in rows) else {}
    comparison = None if base is None else compare_batches(base, rows, args, thresholds)
    calibration = calibration_of(args, rows, threshold=report_thresholds(thresholds, rows),
                                 labels=labels)
    return render_report(rows, batch_id=rows[0].batch_id, baseline=base, thresholds=thresholds,
                         source=open_store(url).url, comparison=comparison,
                         calibration=calibration, min_kappa=min_kappa, labels=labels)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), with_baseline=st.booleans(), min_kappa=st.sampled_from([None, 0.2]))
def test_report_with_labels_read_in_pages_is_the_page_of_all_rows(
    kind: str, monkeypatch: pytest.MonkeyPatch, data: st.DataObject, with_baseline: bool,
    min_kappa: float | None,
) -> None:
    """With ``--labels`` (labelled items in the batch and not, items without a label), pages
    of 3 rows: the file is byte for byte the page of every row read at once, calibration,
    κ gate and cascades included."""
    monkeypatch.setattr(sqlite_store, "PAGE", 3)
    monkeypatch.setattr(postgres_store, "PAGE", 3)
    tag = uuid.uuid4().hex[:8]
    new = data.draw(batches(f"new-{tag}"))
    base = data.draw(batches(f"base-{tag}")) if with_baseline else None
    # Ids in the batch and not ("h" to "j"): labels without rows, items without labels.
    labels = data.draw(st.dictionaries(st.sampled_from("abcdefghij"), st.booleans(),
                                       min_size=1))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = _store_url(kind, folder)
        stored = anyio.run(_save_and_read, url, [new] if base is None else [new, base])
        labels_path = _labels_file(folder / "labels.jsonl", labels)
        out = folder / "r.html"
        code, printed, err = run(
            "report", new[0].batch_id, "--store", url, "-o", str(out), "--no-view-links",
            "--labels", str(labels_path),
            *(["--threshold", "s=0.5"] if any(r.scorer_id == "s" for r in new) else []),
            *([] if min_kappa is None else ["--min-kappa", str(min_kappa)]),
            *([] if base is None else ["--baseline", base[0].batch_id]))
        assert code == 0, err
        expected = _labelled_page(url, stored[0], None if base is None else stored[1],
                                  labels=labels, labels_path=labels_path, min_kappa=min_kappa)
        assert out.read_text(encoding="utf-8") == expected
        assert f"({len(new)} rows)" in printed


def test_report_with_labels_never_reads_the_whole_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--labels`` reads pages too, never ``list_run``; the items without a label are
    counted and the first of them listed, as from all the rows."""
    rows = [ScoreRow(id=f"b:{i}/s", scorer_id="s", run_id=f"b:{i}", batch_id="b",
                     status="scored", score=i / 79, metadata={"itemIndex": i})
            for i in range(80)]
    url = f"sqlite:{tmp_path / 's.db'}"
    (stored,) = anyio.run(_save_and_read, url, [rows])
    labels = {str(i): i % 3 == 0 for i in range(0, 80, 4)} | {"stray": True}
    labels_path = _labels_file(tmp_path / "labels.jsonl", labels)

    async def refuse(self: SqliteScoreStore, batch_id: str, /) -> list[ScoreRow]:
        raise AssertionError(f"list_run({batch_id!r}) read the whole batch")

    monkeypatch.setattr(SqliteScoreStore, "list_run", refuse)
    monkeypatch.setattr(sqlite_store, "PAGE", 4)
    out = tmp_path / "r.html"
    code, _, err = run("report", "b", "--store", url, "-o", str(out), "--no-view-links",
                       "--labels", str(labels_path), "--threshold", "s=0.5")
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert page == _labelled_page(url, stored, None, labels=labels, labels_path=labels_path,
                                  min_kappa=None)
    assert "60 item(s) without a label: 1, 10, 11, 13" in page
