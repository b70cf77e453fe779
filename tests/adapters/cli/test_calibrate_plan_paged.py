"""``scorecore calibrate`` and ``scorecore plan`` read a batch a page at a time: what they print
is what they printed from every row read at once, and ``list_run`` is never called.

Checked against SQLite and PostgreSQL (when SCORECORE_TEST_POSTGRES_DSN is set).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import statistics
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecore import create_scorer
from scorecore.evals import (
    ScoreRow,
    StoreError,
    cascade_summaries,
    compare,
    items_needed,
    run_evals,
)
from scorecore_adapters._resample import mean_resampler
from scorecore_adapters.cli._calibrate import calibration_of, print_calibration
from scorecore_adapters.cli._common import print_json
from scorecore_adapters.cli._experiments import read_ledger
from scorecore_adapters.cli._plan import ASSUMPTION, Spread
from scorecore_adapters.cli._trust import print_cascades
from scorecore_adapters.storage import SqliteScoreStore, open_store, record_experiment
from scorecore_adapters.storage import _postgres as postgres_store
from scorecore_adapters.storage import _sqlite as sqlite_store
from tests.adapters.cli.test_report_paged import KINDS, batches
from tests.cli_runs import run


def _url(kind: str, folder: Path) -> str:
    if kind == "postgres":
        from tests.adapters.cli.test_report_paged import DSN  # noqa: PLC0415 - set with it

        assert DSN is not None
        return DSN
    return f"sqlite:{folder / 's.db'}"


def _small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "PAGE", 3)
    monkeypatch.setattr(postgres_store, "PAGE", 3)


def _refuse_list_run(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(self: SqliteScoreStore, batch_id: str, /) -> list[ScoreRow]:
        raise AssertionError(f"list_run({batch_id!r}) read the whole batch")

    monkeypatch.setattr(SqliteScoreStore, "list_run", refuse)


async def _save(url: str, rows: Sequence[ScoreRow]) -> list[ScoreRow]:
    async with open_store(url) as store:
        await store.save(rows)
        return await store.list_run(rows[0].batch_id)


def _labels_file(path: Path, labels: dict[str, bool]) -> Path:
    path.write_text("".join(json.dumps({"id": k, "label": v}) + "\n" for k, v in labels.items()),
                    encoding="utf-8")
    return path


def _calibrated_from_all_rows(
    rows: Sequence[ScoreRow], labels: dict[str, bool], labels_path: Path, *,
    scorer: list[str], as_json: bool, min_kappa: float | None,
) -> tuple[int, str]:
    """What ``calibrate`` printed when it read every row of the batch at once."""
    args = argparse.Namespace(labels=str(labels_path), kind="binary", scale=None,
                              label_value=[], seed=0)
    out = io.StringIO()
    result = calibration_of(args, rows, threshold=None, scorer_ids=scorer or None,
                            labels=labels)
    chosen = [r for r in rows if not scorer or r.scorer_id in scorer]
    failed = () if min_kappa is None else result.failed_checks(min_kappa)
    code = 1 if failed else 0
    cascades = cascade_summaries(chosen, labels=labels, threshold=0.5)
    if as_json:
        print_json({**result.to_json(), "labelsFile": str(labels_path), "minKappa": min_kappa,
                    "verdict": None if min_kappa is None else ("failed" if failed else "passed"),
                    "failedChecks": list(failed), "exitCode": code,
                    "cascades": [c.to_json() for c in cascades]}, out)
        return code, out.getvalue()
    print_calibration(result, str(labels_path), out)
    print_cascades(cascades, out=out)
    if min_kappa is None:
        print("no gate: --min-kappa K exits 1 when a scorer's kappa interval reaches below K",
              file=out)
    elif failed:
        print(f"verdict: failed (min kappa {min_kappa:g}, read at the interval's lower end)",
              file=out)
        for line in failed:
            print(f"  {line}", file=out)
    else:
        print(f"verdict: passed: every scorer's kappa interval is above {min_kappa:g}",
              file=out)
    return code, out.getvalue()


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), as_json=st.booleans(), min_kappa=st.sampled_from([None, 0.2]))
def test_calibrate_read_in_pages_prints_what_all_rows_print(
    kind: str, monkeypatch: pytest.MonkeyPatch, data: st.DataObject, as_json: bool,
    min_kappa: float | None,
) -> None:
    """Pages of 3 rows, labels on items in the batch and not, items without a label, text or
    JSON, a κ gate or none, one scorer or all: byte for byte what all the rows gave."""
    _small_pages(monkeypatch)
    scorer = data.draw(st.sampled_from([[], ["s"]]))
    rows = data.draw(batches(f"cal-{uuid.uuid4().hex[:8]}"))
    if scorer and not any(r.scorer_id == "s" for r in rows):
        scorer = []
    labels = data.draw(st.dictionaries(st.sampled_from("abcdefghij"), st.booleans(),
                                       min_size=1))
    with tempfile.TemporaryDirectory() as tmp:
        url = _url(kind, Path(tmp))
        stored = anyio.run(_save, url, rows)
        labels_path = _labels_file(Path(tmp) / "labels.jsonl", labels)
        code, out, err = run(
            "calibrate", rows[0].batch_id, "--labels", str(labels_path), "--store", url,
            *(["--json"] if as_json else []), *(["--scorer", "s"] if scorer else []),
            *([] if min_kappa is None else ["--min-kappa", str(min_kappa)]))
        assert err == ""
        assert (code, out) == _calibrated_from_all_rows(
            stored, labels, labels_path, scorer=scorer, as_json=as_json, min_kappa=min_kappa)


@pytest.mark.parametrize("as_json", [False, True])
def test_calibrate_never_reads_the_whole_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    """Never ``list_run``: the labelled rows come from pages, the 60 items without a label
    are counted and the first ten listed (text) or all of them listed (JSON), as from every
    row."""
    rows = [ScoreRow(id=f"b:{i}/s", scorer_id="s", run_id=f"b:{i}", batch_id="b",
                     status="scored", score=i / 79, metadata={"itemIndex": i})
            for i in range(80)]
    url = f"sqlite:{tmp_path / 's.db'}"
    stored = anyio.run(_save, url, rows)
    labels = {str(i): i % 3 == 0 for i in range(0, 80, 4)} | {"stray": True}
    labels_path = _labels_file(tmp_path / "labels.jsonl", labels)
    _refuse_list_run(monkeypatch)
    monkeypatch.setattr(sqlite_store, "PAGE", 4)
    code, out, err = run("calibrate", "b", "--labels", str(labels_path), "--store", url,
                         *(["--json"] if as_json else []))
    assert (code, err) == (0, "")
    assert out == _calibrated_from_all_rows(stored, labels, labels_path, scorer=[],
                                            as_json=as_json, min_kappa=None)[1]
    if as_json:
        assert len(json.loads(out)["rowsWithoutLabels"]) == 60
    else:
        assert "items without a label: 1, 10, 11, 13, 14, 15, 17, 18, 19, 2, … (60 in all)" in out


def _failing_after(
    page: list[str],
) -> Callable[[SqliteScoreStore, str], AsyncIterator[list[str]]]:
    """``SqliteScoreStore.item_ids`` giving ``page``, then failing as a lost disk would."""

    async def failing(self: SqliteScoreStore, batch_id: str, /) -> AsyncIterator[list[str]]:
        yield page
        raise StoreError(f"item_ids({batch_id!r}): the disk went away", store=self.url,
                         operation="item_ids")

    return failing


def test_calibrate_json_failing_midway_prints_its_error_and_no_half_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store fails after a page of unlabelled ids: stdout stays empty (a pipe into a JSON
    reader gets nothing rather than the start of a document), the error names the failure."""
    rows = [ScoreRow(id=f"b:{i}/s", scorer_id="s", run_id=f"b:{i}", batch_id="b",
                     status="scored", score=i / 9, metadata={"itemIndex": i}) for i in range(10)]
    url = f"sqlite:{tmp_path / 's.db'}"
    anyio.run(_save, url, rows)
    labels_path = _labels_file(tmp_path / "labels.jsonl", {"0": True, "4": False})

    monkeypatch.setattr(SqliteScoreStore, "item_ids", _failing_after(["1", "2"]))
    code, out, err = run("calibrate", "b", "--labels", str(labels_path), "--store", url, "--json")
    assert code == 2
    assert out == ""
    assert "the disk went away" in err


def test_calibrate_of_a_missing_batch_is_a_usage_error(tmp_path: Path) -> None:
    """No rows for the batch: the error names it, as when the batch was read whole."""
    url = f"sqlite:{tmp_path / 's.db'}"
    anyio.run(_save, url, [ScoreRow(id="b:1/s", scorer_id="s", run_id="b:1", batch_id="b",
                                    status="scored", score=1.0)])
    labels_path = _labels_file(tmp_path / "labels.jsonl", {"1": True})
    code, out, err = run("calibrate", "nope", "--labels", str(labels_path), "--store", url)
    assert (code, out) == (2, "")
    assert "no rows for batch 'nope'" in err


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e150,
                          max_value=1e150) | st.sampled_from([0.0, 0.1, 0.25, 1.0, 5e-324]),
                min_size=1, max_size=40))
def test_the_running_spread_is_pstdev(values: list[float]) -> None:
    """Given one at a time, the spread is exactly :func:`statistics.pstdev` of them all."""
    spread = Spread()
    for x in values:
        spread.add(x)
    assert spread.value() == statistics.pstdev(values)


# The plan's scorers read their score from the output ("x": a failed run).
def _score(ctx: Any) -> float:
    return float(ctx.run.output)


_S = create_scorer(id="s", description="d").generate_score(_score)
_T = create_scorer(id="t", description="d").generate_score(lambda ctx: 2 * _score(ctx))


def _plan_from_all_rows(url: str, dataset: str, effect: float, *, as_json: bool) -> str:
    """What ``plan`` printed when it read every row of both batches at once."""
    from scorecore_adapters.cli._plan import _baseline, _partner  # noqa: PLC0415

    args = argparse.Namespace(baseline=None, dataset=dataset)
    found = read_ledger(url, dataset=dataset)
    baseline = _baseline(args, found)
    partner = _partner(baseline, found)

    async def rows(batch: str) -> list[ScoreRow]:
        async with open_store(url) as store:
            return await store.list_run(batch)

    new = anyio.run(rows, baseline.batch_id)
    spreads: dict[str, float | None]
    if partner is not None:
        before = anyio.run(rows, partner.batch_id)
        spreads = {s.scorer_id: s.spread
                   for s in compare(before, new, resampler=mean_resampler()).scorers}
        source = f"paired differences of {partner.batch_id} -> {baseline.batch_id}"
    else:
        scores: dict[str, list[float]] = {}
        for row in new:
            if row.status == "scored" and row.score is not None:
                scores.setdefault(row.scorer_id, []).append(row.score)
        spreads = {sid: math.sqrt(2) * statistics.pstdev(v) if len(v) >= 2 else None
                   for sid, v in sorted(scores.items())}
        source = ASSUMPTION
    level = 0.05 / max(1, len(spreads))
    plans = [{"scorer": sid, "spread": sd, "itemsNeeded": None if sd is None else items_needed(
        sd, effect, alpha=level, power=0.8, tolerance=0.02)} for sid, sd in spreads.items()]
    assert as_json
    out = io.StringIO()
    print_json({"dataset": dataset, "baseline": baseline.batch_id,
                "partner": partner.batch_id if partner else None, "source": source,
                "effect": effect, "tolerance": 0.02, "alpha": 0.05, "alphaPerScorer": level,
                "power": 0.8, "datasetItems": baseline.dataset.get("items"), "scorers": plans},
               out)
    return out.getvalue()


def _record(url: str, dataset: str, batch: str, outputs: Sequence[str]) -> None:
    """A batch of ``outputs`` (item ``q<i>``, the same input each time) run and recorded."""
    lines = [{"id": f"q{i}", "input": f"question {i}", "output": o}
             for i, o in enumerate(outputs)]

    async def go() -> None:
        async with open_store(url) as store:
            report = await run_evals(lines, [_S, _T], store=store, batch_id=batch)
        await record_experiment(url, report, scorers=[_S, _T], items=lines, source=dataset,
                                command=["plan-test"])

    anyio.run(go)


_OUTPUTS = st.sampled_from(["0", "0.25", "1", "0.1", "x", "1e6", "-3.5"])


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(base=st.lists(_OUTPUTS, min_size=1, max_size=8), data=st.data(), paired=st.booleans())
def test_plan_read_in_pages_prints_what_all_rows_print(
    kind: str, monkeypatch: pytest.MonkeyPatch, base: list[str], data: st.DataObject,
    paired: bool,
) -> None:
    """Pages of 3 rows, one batch or a pair of the same data, scored and failed runs: the
    plan is byte for byte the one made of every row read at once."""
    _small_pages(monkeypatch)
    effect = data.draw(st.sampled_from([0.05, 0.3]))
    tag = uuid.uuid4().hex[:8]
    dataset = f"items-{tag}.jsonl"
    with tempfile.TemporaryDirectory() as tmp:
        url = _url(kind, Path(tmp))
        _record(url, dataset, f"one-{tag}", base)
        if paired:
            again = data.draw(st.lists(_OUTPUTS, min_size=len(base), max_size=len(base)))
            _record(url, dataset, f"two-{tag}", again)
        code, out, err = run("plan", "--dataset", dataset, "--effect", str(effect),
                             "--store", url, "--json")
        assert (code, err) == (0, "")
        assert out == _plan_from_all_rows(url, dataset, effect, as_json=True)


@pytest.mark.parametrize("paired", [False, True])
def test_plan_never_reads_the_whole_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paired: bool
) -> None:
    """Never ``list_run``, from one batch or a pair; the figures are those of all the rows."""
    url = f"sqlite:{tmp_path / 's.db'}"
    _record(url, "items.jsonl", "one", [str(i % 7 / 7) for i in range(40)])
    if paired:
        _record(url, "items.jsonl", "two", [str(i % 5 / 5) for i in range(40)])
    expected = _plan_from_all_rows(url, "items.jsonl", 0.1, as_json=True)
    _refuse_list_run(monkeypatch)
    monkeypatch.setattr(sqlite_store, "PAGE", 4)
    code, out, err = run("plan", "--dataset", "items.jsonl", "--effect", "0.1", "--store", url,
                         "--json")
    assert (code, err) == (0, "")
    assert out == expected
    assert json.loads(out)["partner"] == ("one" if paired else None)
    code, out, err = run("plan", "--dataset", "items.jsonl", "--effect", "0.1", "--store", url)
    assert (code, err) == (0, "")
    assert "items needed" in out


def _agreement_from_all_rows(
    url: str, batch: str, labels: dict[str, bool], labels_path: Path
) -> tuple[str, dict[str, Any]]:
    """What ``eval --labels`` printed of its agreement, and put in ``--output``, when it read
    the stored batch back whole (the judged scorers sharp then coin; ``sharp=0.6``)."""
    from scorecore.evals import Threshold  # noqa: PLC0415
    from scorecore_adapters.cli._calibrate import (  # noqa: PLC0415
        print_agreement,
        report_thresholds,
    )

    async def read() -> list[ScoreRow]:
        async with open_store(url) as store:
            return await store.list_run(batch)

    rows = anyio.run(read)
    chosen = ["sharp", "coin"]
    args = argparse.Namespace(labels=str(labels_path), kind="binary", scale=None,
                              label_value=[])
    thresholds = {sid: t for sid, t in report_thresholds({"sharp": Threshold(min=0.6)},
                                                         rows).items() if sid in chosen}
    result = calibration_of(args, rows, threshold=thresholds, scorer_ids=chosen,
                            labels=labels)
    out = io.StringIO()
    print_agreement(result, str(labels_path), out)
    summaries = [s for sid in sorted({r.scorer_id for r in rows})
                 for s in cascade_summaries([r for r in rows if r.scorer_id == sid],
                                            labels=labels, threshold=thresholds.get(sid, 0.5))]
    print_cascades(summaries, out=out)
    cascades = [s.to_json() for s in summaries]
    return out.getvalue(), {**result.to_json(), "labelsFile": str(labels_path),
                            **({"cascades": cascades} if cascades else {})}


def _judged_eval(folder: Path, url: str, batch: str, labels_path: Path, *,
                 items: int) -> tuple[int, str, str]:
    from tests.adapters.cli.test_calibrate import JUDGED  # noqa: PLC0415

    (folder / "judged_scorers.py").write_text(JUDGED)
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "input": "q", "output":
                                        f"{'good' if i % 2 == 0 else 'bad'} {i}"}) + "\n"
                            for i in range(items)))
    return run("eval", str(folder / "judged_scorers.py"), "--data", str(data), "--store", url,
               "--batch-id", batch, "--labels", str(labels_path), "--threshold", "sharp=0.6",
               "--output", str(folder / "r.json"))


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(labels=st.dictionaries(st.sampled_from([f"q{i}" for i in range(14)]), st.booleans(),
                              min_size=1))
def test_eval_labels_agreement_read_in_pages_is_that_of_all_rows(
    kind: str, monkeypatch: pytest.MonkeyPatch, labels: dict[str, bool]
) -> None:
    """``eval --labels``, the stored batch read back in pages of 3 (labels on items of the
    batch and not, items without a label): the agreement printed and the ``--output``
    calibration are those of every row read at once."""
    _small_pages(monkeypatch)
    batch = f"ev-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = _url(kind, folder)
        labels_path = _labels_file(folder / "labels.jsonl", labels)
        code, out, err = _judged_eval(folder, url, batch, labels_path, items=12)
        assert code in (0, 1), err + out
        text, document = _agreement_from_all_rows(url, batch, labels, labels_path)
        assert text in out
        assert json.loads((folder / "r.json").read_text())["calibration"] == document


def test_eval_labels_never_reads_the_whole_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``eval --labels`` reads its stored batch back in pages, never with ``list_run``."""
    url = f"sqlite:{tmp_path / 's.db'}"
    labels = {f"q{i}": i % 2 == 0 for i in range(0, 40, 3)}
    labels_path = _labels_file(tmp_path / "labels.jsonl", labels)
    monkeypatch.setattr(sqlite_store, "PAGE", 4)
    with monkeypatch.context() as refused:
        _refuse_list_run(refused)
        code, out, err = _judged_eval(tmp_path, url, "j", labels_path, items=40)
    assert code in (0, 1), err + out
    text, document = _agreement_from_all_rows(url, "j", labels, labels_path)
    assert text in out
    calibration = json.loads((tmp_path / "r.json").read_text())["calibration"]
    assert calibration == document
    assert len(calibration["rowsWithoutLabels"]) == 40 - len(labels)


def test_eval_labels_output_failing_midway_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store fails while listing the items without a label for ``--output``: the command
    says why and exits 2, and no report file is left that a reader would take for whole."""
    url = f"sqlite:{tmp_path / 's.db'}"
    labels_path = _labels_file(tmp_path / "labels.jsonl", {"q0": True, "q3": False})

    monkeypatch.setattr(SqliteScoreStore, "item_ids", _failing_after(["q1", "q2"]))
    code, out, err = _judged_eval(tmp_path, url, "j", labels_path, items=8)
    assert code == 2, err + out
    assert "the disk went away" in err
    assert not (tmp_path / "r.json").exists()


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(outer=st.dictionaries(st.text(max_size=5), _JSON, max_size=4),
       inner=st.dictionaries(st.text(max_size=5), _JSON, max_size=4),
       ids=st.lists(st.text(), max_size=5), flags=st.tuples(st.booleans(), st.booleans()))
def test_the_listed_document_is_the_text_json_dumps_makes(
    monkeypatch: pytest.MonkeyPatch, outer: dict[str, Any], inner: dict[str, Any],
    ids: list[str], flags: tuple[bool, bool],
) -> None:
    """The JSON written with its ids listed by the store is, byte for byte, what
    ``json.dumps(indent=2)`` makes of the whole document, at any depth, whatever the document
    holds (including the placeholder text the listing puts where the ids go)."""
    from scorecore_adapters.cli import _calibrate  # noqa: PLC0415

    async def listed(_store: object, _batch: str, _labels: object, take: Any) -> None:
        for item in ids:
            take(item)

    monkeypatch.setattr(_calibrate, "unlabelled_ids", listed)
    monkeypatch.setattr(_calibrate, "in_store", lambda _url, work: anyio.run(work, None))
    ascii_only, marker_in_document = flags
    if marker_in_document:
        inner = {**inner, "other": "\0unlabelled 0", "more": ["\0unlabelled 1"]}
    document = {**outer, "calibration": {**inner, "rowsWithoutLabels": ["stale"]}}
    written: list[str] = []
    _calibrate.json_with_unlabelled("sqlite:unused", document,
                                    ("calibration", "rowsWithoutLabels"), batch_id="b",
                                    labels={}, write=written.extend, ensure_ascii=ascii_only)
    whole = {**document, "calibration": {**document["calibration"], "rowsWithoutLabels": ids}}
    assert "".join(written) == json.dumps(whole, indent=2, ensure_ascii=ascii_only) + "\n"


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_item_ids_are_the_batchs_items_sorted(
    kind: str, monkeypatch: pytest.MonkeyPatch, data: st.DataObject
) -> None:
    """A store's ``item_ids``, in pages of 3: each item id of the batch's rows once (trials,
    dataset ids and run ids alike), in code point order."""
    from scorecore.evals.store import row_item_id  # noqa: PLC0415

    _small_pages(monkeypatch)
    rows = data.draw(batches(f"ids-{uuid.uuid4().hex[:8]}"))
    with tempfile.TemporaryDirectory() as tmp:
        url = _url(kind, Path(tmp))
        stored = anyio.run(_save, url, rows)

        async def listed() -> list[str]:
            async with open_store(url) as store:
                return [i async for page in store.item_ids(rows[0].batch_id) for i in page]

        assert anyio.run(listed) == sorted({row_item_id(r) for r in stored})
