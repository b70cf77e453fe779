"""The experiment ledger on the command line: eval records, experiments lists, compare knows
the data it compares and its power, --baseline auto, plan."""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import math
import os
import statistics
import subprocess
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.datasets import DatasetItem, DatasetVersion, item_digest
from scorecore.evals import items_needed, run_evals
from scorecore_adapters.cli import main
from scorecore_adapters.cli._experiments import record_start
from scorecore_adapters.storage import (
    DatasetStore,
    Experiment,
    ExperimentStore,
    SqliteScoreStore,
    record_experiment,
)
from scorecore_adapters.storage._recording import line_digests, scrub_command

SCORERS = '''
import os

from scorecore import create_scorer

# SHIFT (read when scoring, so the fingerprint stays) shuffles the scores of the same items.
length = create_scorer(id="length", description="d").generate_score(
    lambda ctx: (len(str(ctx.run.output)) * (1 + int(os.environ.get("SHIFT", "0"))) % 10) / 10
    * float(os.environ.get("SCALE", "1")))
'''


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def data(path: Path, n: int, *, changed: set[int] = frozenset(), extra: int = 0) -> Path:  # type: ignore[assignment]
    lines = []
    for i in range(n + extra):
        text = "x" * (i % 10)
        question = f"question {i}" + (" (reworded)" if i in changed else "")
        lines.append(json.dumps({"id": f"q{i}", "input": question, "output": text}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder outside any git checkout with the scorers file; commands run there."""
    (tmp_path / "scorers.py").write_text(SCORERS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def evaluate(work: Path, batch: str, data_file: Path, *extra: str) -> int:
    code, out, err = run("eval", str(work / "scorers.py"), "--data", str(data_file),
                         "--store", f"sqlite:{work / 's.db'}", "--batch-id", batch, *extra)
    assert code in (0, 1), (out, err)
    return code


def ledger(work: Path, *extra: str) -> list[dict[str, object]]:
    code, out, err = run("experiments", "--store", f"sqlite:{work / 's.db'}", "--json", *extra)
    assert code == 0, err
    found: list[dict[str, object]] = json.loads(out)["experiments"]
    return found


def test_eval_records_what_ran_on_what_and_how_it_ended(work: Path) -> None:
    """Dataset version (the file's content digest), scorer fingerprints, command, no git
    outside a checkout, then the verdict and means."""
    items = data(work / "items.jsonl", 20)
    evaluate(work, "b1", items)
    evaluate(work, "b2", items, "--threshold", "length=0.99")
    first, second = ledger(work)
    assert first["batchId"] == "b1"
    dataset = first["dataset"]
    assert isinstance(dataset, dict)
    assert dataset["name"] is None
    assert dataset["items"] == 20
    assert dataset["file"] == str(items)
    assert dataset["version"] == second["dataset"]["version"]  # type: ignore[index]
    assert len(str(dataset["version"])) == 64
    (scorer,) = first["scorers"]  # type: ignore[misc]
    assert scorer["id"] == "length"
    assert len(scorer["fingerprint"]) == 64
    assert (first["gitCommit"], first["gitDirty"]) == (None, None)
    assert first["command"][:2] == ["scorecore", "eval"]  # type: ignore[index]
    assert (first["verdict"], second["verdict"]) == ("passed", "failed")
    assert first["means"] == {"length": pytest.approx(0.45)}


def test_another_file_content_is_another_version(work: Path) -> None:
    """One changed item under the same id: another version of the data."""
    evaluate(work, "b1", data(work / "a.jsonl", 20))
    evaluate(work, "b2", data(work / "b.jsonl", 20, changed={3}))
    a, b = ledger(work)
    assert a["dataset"]["version"] != b["dataset"]["version"]  # type: ignore[index]
    assert [e["batchId"] for e in ledger(work, "--dataset", str(work / "b.jsonl"))] == ["b2"]


def test_the_commit_and_a_dirty_tree_are_recorded_inside_git(work: Path) -> None:
    """Inside a git checkout: its HEAD, and whether tracked files changed since."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=work, check=True,  # noqa: S603, S607 - git from PATH
                              capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("add", "scorers.py")
    git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "one")
    head = git("rev-parse", "HEAD")
    items = data(work / "items.jsonl", 12)
    evaluate(work, "clean", items)
    (work / "scorers.py").write_text(SCORERS + "\n# edited\n")
    evaluate(work, "dirty", items)
    clean, dirty = ledger(work)
    assert (clean["gitCommit"], clean["gitDirty"]) == (head, False)
    assert (dirty["gitCommit"], dirty["gitDirty"]) == (head, True)


def test_the_command_line_is_recorded_without_secrets() -> None:
    """A credential flag's value and credential shapes in any argument are redacted."""
    scrubbed = scrub_command(["eval", "s.py", "--api-key", "hunter2", "--store",
                              "postgresql://me:pw@db/x", "--token=abc",
                              "sk-proj-abc123def456ghi789jkl0"])
    assert "hunter2" not in scrubbed
    assert ":pw@" not in " ".join(scrubbed)
    assert "abc" not in " ".join(scrubbed).replace("abc123", "")
    assert scrubbed[:4] == ("scorecore", "eval", "s.py", "--api-key")


def test_experiments_lists_batches_per_dataset_version(work: Path) -> None:
    """A table per dataset version: each batch's mean and verdict over time."""
    items = data(work / "items.jsonl", 20)
    evaluate(work, "b1", items)
    evaluate(work, "b2", items, "--threshold", "length=0.99")
    code, out, _ = run("experiments", "--store", f"sqlite:{work / 's.db'}")
    assert code == 0
    assert f"dataset {items}@" in out
    assert out.index("b1") < out.index("b2")
    assert "0.45" in out
    assert "passed" in out
    assert "failed" in out
    code, out, _ = run("experiments", "--store", f"sqlite:{work / 's.db'}", "--dataset", "nope")
    assert (code, out.strip()) == (0, f"no recorded batches of dataset 'nope' in sqlite:"
                                       f"{work / 's.db'}")


def test_other_outputs_of_the_same_cases_are_compared_item_by_item(work: Path) -> None:
    """A --data file whose recorded answers changed: another version, the same cases; every
    item is paired and the versions line says so."""
    evaluate(work, "base", data(work / "a.jsonl", 20))
    shorter = [json.loads(line) | {"output": ""} for line in
               (work / "a.jsonl").read_text().splitlines()]
    (work / "b.jsonl").write_text("\n".join(json.dumps(r) for r in shorter) + "\n")
    evaluate(work, "new", work / "b.jsonl")
    code, out, _ = run("compare", "base", "new", "--store", f"sqlite:{work / 's.db'}")
    assert code == 1
    assert "datasets differ" not in out
    assert "the same cases, other recorded outputs" in out
    assert "length   20" in out or "length  20" in out, out


def test_compare_says_the_data_differ_and_compares_only_the_same_items(work: Path) -> None:
    """Two changed items, one added: listed, and left out of the pairs."""
    evaluate(work, "base", data(work / "a.jsonl", 20))
    evaluate(work, "new", data(work / "b.jsonl", 20, changed={3, 4}, extra=1))
    code, out, _ = run("compare", "base", "new", "--store", f"sqlite:{work / 's.db'}")
    assert code == 0
    assert "datasets differ: 2 changed, 0 removed, 1 added; 18 compared" in out, out
    assert "changed, not compared: q3, q4" in out
    assert "items only in new: q20" in out
    _code, out, _ = run("compare", "base", "new", "--store", f"sqlite:{work / 's.db'}",
                       "--json")
    result = json.loads(out)
    assert result["datasetsDiffer"] is True
    assert result["scorers"][0]["paired"] == 18


def test_compare_of_scores_far_outside_the_unit_interval_says_no_count_would_do(
        work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A custom scorer's scores around 1e200: the items a 0.02 change needs are past any float,
    and compare says so instead of dying on an OverflowError."""
    items = data(work / "items.jsonl", 20)
    monkeypatch.setenv("SCALE", "1e200")
    evaluate(work, "base", items)
    monkeypatch.setenv("SHIFT", "2")
    evaluate(work, "new", items)
    code, out, err = run("compare", "base", "new", "--store", f"sqlite:{work / 's.db'}",
                         "--min-paired", "5")
    assert code == 0, (out, err)
    assert "no finite number of paired items would detect it" in out, out


def test_compare_prints_the_mde_and_an_uninformative_pass(
        work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """20 items scored in another order cannot see a 0.02 change: the MDE says so, and the
    verdict is qualified."""
    items = data(work / "items.jsonl", 20)
    evaluate(work, "base", items)
    monkeypatch.setenv("SHIFT", "2")
    evaluate(work, "new", items)
    code, out, _ = run("compare", "base", "new", "--store", f"sqlite:{work / 's.db'}",
                       "--min-paired", "5")
    assert code == 0
    assert "MDE" in out
    assert "length: no significant change, but uninformative: its MDE" in out, out
    assert "paired items would detect it" in out
    _code, out, _ = run("compare", "base", "new", "--store", f"sqlite:{work / 's.db'}",
                       "--min-paired", "5", "--json")
    scorer = json.loads(out)["scorers"][0]
    assert scorer["mde"] > 0.02
    assert scorer["uninformative"] is True


def test_baseline_auto_picks_the_latest_passing_batch_of_the_same_data(work: Path) -> None:
    """Not the failing one, not the other data's: the latest passing on the same version."""
    items = data(work / "items.jsonl", 20)
    evaluate(work, "old-pass", items)
    evaluate(work, "last-pass", items)
    evaluate(work, "failing", items, "--threshold", "length=0.99")
    evaluate(work, "other-data", data(work / "o.jsonl", 20, changed={1}))
    evaluate(work, "new", items)
    code, out, _ = run("compare", "new", "--baseline", "auto", "--store",
                       f"sqlite:{work / 's.db'}")
    assert out.startswith("compare last-pass -> new"), out
    code, out, err = run("compare", "other-data", "--baseline", "auto", "--store",
                         f"sqlite:{work / 's.db'}")
    assert code == 2
    assert "no passing batch before 'other-data' on the same dataset version" in err
    code, _, err = run("compare", "a", "b", "--baseline", "auto", "--store",
                       f"sqlite:{work / 's.db'}")
    assert code == 2
    assert "give the baseline once" in err
    code, out, err = run("report", "new", "--baseline", "auto", "--store",
                         f"sqlite:{work / 's.db'}", "-o", str(work / "r.html"))
    assert code == 0, err
    assert "last-pass" in (work / "r.html").read_text()


def test_plan_from_a_pair_of_batches_and_from_one(
        work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One batch: its scores' spread under the stated assumption; two runs of the same data:
    their paired differences' spread; the items needed follow items_needed at compare's
    level and tolerance."""
    items = data(work / "items.jsonl", 30)
    store = f"sqlite:{work / 's.db'}"
    evaluate(work, "only", items)
    code, out, err = run("plan", "--dataset", str(items), "--effect", "0.1", "--store", store,
                         "--json")
    assert code == 0, err
    single = json.loads(out)
    assert single["partner"] is None
    assert "assumed" in single["source"]
    (one,) = single["scorers"]
    assert one["spread"] == pytest.approx(math.sqrt(2) * statistics.pstdev(
        [(i % 10) / 10 for i in range(30)]))
    assert one["itemsNeeded"] == items_needed(one["spread"], 0.1, tolerance=0.02,
                                              min_paired=10)
    monkeypatch.setenv("SHIFT", "2")
    evaluate(work, "again", items)
    code, out, err = run("plan", "--dataset", str(items), "--effect", "0.1", "--store", store,
                         "--json")
    paired = json.loads(out)
    assert (paired["baseline"], paired["partner"]) == ("again", "only")
    assert paired["source"] == "paired differences of only -> again"
    (two,) = paired["scorers"]
    before = [(i % 10) / 10 for i in range(30)]
    after = [(3 * (i % 10) % 10) / 10 for i in range(30)]
    assert two["spread"] == pytest.approx(statistics.pstdev(
        [a - b for a, b in zip(after, before, strict=True)]))
    assert two["itemsNeeded"] == items_needed(two["spread"], 0.1, tolerance=0.02,
                                              min_paired=10)
    code, out, err = run("plan", "--dataset", str(items), "--effect", "0.1", "--store", store)
    assert code == 0, err
    assert "items needed" in out
    assert "the baseline ran on 30 items" in out
    code, _, err = run("plan", "--dataset", "nope", "--effect", "0.1", "--store", store)
    assert code == 2
    assert "no recorded batch of dataset 'nope'" in err
    code, _, err = run("plan", "--dataset", str(items), "--effect", "0.01", "--store", store)
    assert code == 2
    assert "must be above --tolerance" in err


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(), lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


@given(st.dictionaries(st.sampled_from(["id", "input", "output", "é", "a\"b", "Output", ""])
                       | st.text(max_size=4), json_values, max_size=6))
def test_a_lines_digests_are_the_datasets_item_digests(record: dict[str, object]) -> None:
    """The whole line's digest is item_digest of it; the case's, of it without its output."""
    whole, case = line_digests(record)
    assert whole == item_digest(record)
    assert case == item_digest({k: v for k, v in record.items() if k != "output"})


def test_a_stored_dataset_version_is_recorded_as_given(work: Path) -> None:
    """A batch on a stored version records the version's own record and item digests."""
    async def go() -> list[dict[str, object]]:
        args = argparse.Namespace(store=f"sqlite:{work / 's.db'}", command_line=["eval"])
        await record_start(args, scorers=[], target=None, batch_id="b1", data=work,
                           shown="qa@v2", stored=({"name": "qa", "version": "abc", "number": 2,
                                                   "sample": {"n": 5, "seed": 1}},
                                                  {"q1": "d1"}))
        return [e.to_json() for e in (await _read(work))]

    async def _read(work: Path) -> list[Experiment]:
        async with ExperimentStore(f"sqlite:{work / 's.db'}") as ledger:
            assert await ledger.item_digests("b1") == {"q1": "d1"}
            return await ledger.experiments(dataset="qa")

    (found,) = anyio.run(go)
    assert found["dataset"] == {"name": "qa", "version": "abc", "number": 2,
                                "sample": {"n": 5, "seed": 1}}


def test_a_postgres_batch_is_recorded_without_the_stores_password(work: Path) -> None:
    """On PostgreSQL too; the --store URL's password is not in the recorded command line."""
    dsn = os.environ.get("SCORECORE_TEST_POSTGRES_DSN")
    if dsn is None:
        pytest.skip("SCORECORE_TEST_POSTGRES_DSN unset (start one with .ci/postgres.sh)")
    password = urlsplit(dsn).password
    assert password
    batch = f"ledger-{uuid.uuid4().hex[:8]}"
    code, out, err = run("eval", str(work / "scorers.py"), "--data",
                         str(data(work / "items.jsonl", 12)), "--store", dsn, "--batch-id", batch)
    assert code == 0, err
    code, out, err = run("experiments", "--store", dsn, "--json")
    (found,) = [e for e in json.loads(out)["experiments"] if e["batchId"] == batch]
    assert found["verdict"] == "passed"
    command = " ".join(found["command"])
    assert "--store" in command
    assert f":{password}@" not in command
    assert ":[REDACTED]@" in command


def test_a_data_file_stored_as_a_version_keeps_its_record_and_pairs_by_case(
        work: Path) -> None:
    """--data with its stored version: the version's record, the file's case digests."""
    items = data(work / "items.jsonl", 3)

    async def go() -> tuple[Experiment, dict[str, str]]:
        args = argparse.Namespace(store=f"sqlite:{work / 's.db'}", data=str(items))
        await record_start(args, scorers=[], target=None, batch_id="b1", data=items,
                           shown=str(items), stored=({"name": None, "version": "stored-v",
                                                      "number": None, "sample": None},
                                                     {"q0": "whole-item-digest"}))
        async with ExperimentStore(f"sqlite:{work / 's.db'}") as ledger:
            found = await ledger.experiment("b1")
            assert found is not None
            return found, await ledger.item_digests("b1")

    found, digests = anyio.run(go)
    assert found.dataset_version == "stored-v"
    assert found.dataset["file"] == str(items)
    assert sorted(digests) == ["q0", "q1", "q2"]
    line = json.loads(items.read_text().splitlines()[0])
    del line["output"]
    assert digests["q0"] == item_digest(line)


def _scorers_module(work: Path) -> Any:
    spec = importlib.util.spec_from_file_location("ledger_scorers", work / "scorers.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_in_python(work: Path, batch: str, lines: list[Any], **record: Any) -> Experiment:
    """A batch run by ``run_evals`` over ``lines`` into the store, then recorded in its
    ledger (``record``: ``record_experiment``'s arguments; ``items`` the same ``lines``
    unless given)."""
    length = _scorers_module(work).length

    async def go() -> Experiment:
        async with SqliteScoreStore(str(work / "s.db")) as store:
            report = await run_evals(lines, [length], store=store, batch_id=batch)
        return await record_experiment(f"sqlite:{work / 's.db'}", report, scorers=[length],
                                       **({"items": lines} | record))

    return anyio.run(go)


def test_a_batch_run_in_python_and_recorded_is_in_the_ledger(work: Path) -> None:
    """``record_experiment`` after ``run_evals``: the batch is listed by ``experiments`` with
    its data, scorers, command and end, and ``compare --baseline auto`` of a later ``eval`` of
    the same file picks it."""
    items_file = data(work / "items.jsonl", 20)
    lines = [json.loads(line) for line in items_file.read_text().splitlines()]
    recorded = _run_in_python(work, "from-python", lines, source="items.jsonl",
                              command=["bench.py", "--api-key", "sk-secret"])
    assert recorded.verdict == "passed"
    evaluate(work, "new", items_file)
    first, second = ledger(work)
    assert (first["batchId"], second["batchId"]) == ("from-python", "new")
    for key in ("version", "cases", "items"):
        assert first["dataset"][key] == second["dataset"][key]  # type: ignore[index]
    assert first["dataset"]["file"] == "items.jsonl"  # type: ignore[index]
    assert first["scorers"] == second["scorers"]
    assert first["command"] == ["bench.py", "--api-key", "[REDACTED]"]
    assert first["means"] == second["means"]
    _, out, err = run("compare", "new", "--baseline", "auto", "--store",
                      f"sqlite:{work / 's.db'}")
    assert out.startswith("compare from-python -> new"), (out, err)
    _, out, _ = run("experiments", "--store", f"sqlite:{work / 's.db'}")
    assert "from-python" in out


def test_a_python_batch_on_a_stored_version_is_recorded_as_that_version(work: Path) -> None:
    """With ``dataset=``, the batch records the stored version (name, number, digest) and
    pairs with an ``eval --dataset`` of it."""
    items_file = data(work / "items.jsonl", 12)
    assert run("datasets", "add", "qa", str(items_file), "--store",
               f"sqlite:{work / 's.db'}")[0] == 0

    async def stored() -> tuple[DatasetVersion, list[DatasetItem]]:
        async with DatasetStore(f"sqlite:{work / 's.db'}") as datasets:
            version = await datasets.get("qa")
            return version, [item async for item in datasets.items(version)]

    version, held = anyio.run(stored)
    lines = [item.to_json() for item in held]
    recorded = _run_in_python(work, "py", lines, dataset=version, items=None)
    assert (recorded.dataset_name, recorded.dataset["number"]) == ("qa", 1)
    assert recorded.dataset_version == version.ref.version
    code, _, err = run("eval", str(work / "scorers.py"), "--dataset", "qa", "--store",
                       f"sqlite:{work / 's.db'}", "--batch-id", "cli")
    assert code == 0, err
    _, out, err = run("compare", "cli", "--baseline", "auto", "--store",
                      f"sqlite:{work / 's.db'}")
    assert out.startswith("compare py -> cli"), (out, err)


def test_record_experiment_refuses_what_it_cannot_record(work: Path) -> None:
    """No data, both kinds of data, or a used-up generator: a ValueError saying what to pass;
    nothing recorded."""
    lines = [{"id": "q1", "input": "a", "output": "b"}]
    with pytest.raises(ValueError, match=r"items= .* or dataset="):
        _run_in_python(work, "none", lines, items=None)
    used = iter(lines)
    with pytest.raises(ValueError, match=r"items= gave no item, but batch 'gone' ran 1"):
        _run_in_python(work, "gone", list(used), items=used)
    assert ledger(work) == []
