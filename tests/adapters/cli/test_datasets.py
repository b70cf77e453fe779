"""``scorecore datasets`` (add, list, show, diff, from-traces) and ``eval --dataset``,
``--data`` recorded as a version, ``--sample/--stratify/--seed``."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.cli_runs import run

ROOT = Path(__file__).resolve().parents[3]
TRACES = ROOT / "tests" / "traces" / "fixtures"

SCORERS = '''
from scorecore import create_scorer

exact = create_scorer(id="exact", description="d").generate_score(
    lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
'''


def jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def qa(n: int, *, answer: str = "4") -> list[dict[str, object]]:
    return [{"id": f"q{i}", "input": f"{i}+{i}?", "output": answer, "ground_truth": "4",
             "extra": {"category": "math" if i % 4 else "geo"}} for i in range(n)]


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:{tmp_path / 'scores.db'}"


def listed(store: str) -> list[dict[str, object]]:
    code, out, err = run("datasets", "list", "--store", store, "--json")
    assert code == 0, err
    return list(json.loads(out))


def test_add_stores_a_version_and_the_same_content_again_is_that_version(
        tmp_path: Path, store: str) -> None:
    """The first add is v1; the same file again is still v1 (said so); a changed file v2."""
    data = jsonl(tmp_path / "qa.jsonl", qa(3))
    code, out, err = run("datasets", "add", "qa", str(data), "--store", store)
    assert (code, err) == (0, "")
    assert out.startswith("stored qa@v1 (")
    assert "3 item(s)" in out
    code, out, _ = run("datasets", "add", "qa", str(data), "--store", store)
    assert code == 0
    assert out.startswith("already stored: qa@v1 (")
    jsonl(data, qa(3, answer="5"))
    code, out, _ = run("datasets", "add", "qa", str(data), "--store", store)
    assert out.startswith("stored qa@v2 (")
    assert [(v["name"], v["number"], v["items"]) for v in listed(store)] == [
        ("qa", 1, 3), ("qa", 2, 3)]


def test_a_file_added_again_is_its_version_unless_read_as_another_format(
        tmp_path: Path, store: str) -> None:
    """The same bytes again are that version (under another name too); the same text read
    as another format is read as that format (found by the file's digest, how it is read is
    part of the key)."""
    data = jsonl(tmp_path / "qa.jsonl", qa(3))
    assert run("datasets", "add", "qa", str(data), "--store", store)[0] == 0
    code, out, _ = run("datasets", "add", "copy", str(data), "--store", store)
    assert (code, out.split(" (")[0]) == (0, "stored copy@v1")
    code, out, err = run("datasets", "add", "qa", str(data), "--store", store)
    assert out.startswith("already stored: qa@v1 (")
    as_csv = tmp_path / "qa.csv"
    as_csv.write_text("id,input\nq0,1\n")
    as_jsonl = tmp_path / "qa2.jsonl"
    as_jsonl.write_bytes(as_csv.read_bytes())
    assert run("datasets", "add", "csv", str(as_csv), "--store", store)[0] == 0
    code, _, err = run("datasets", "add", "csv", str(as_jsonl), "--store", store)
    assert code != 0
    assert "qa2.jsonl:1" in err


def test_csv_and_parquet_hold_the_same_items_as_jsonl(tmp_path: Path, store: str) -> None:
    """A CSV file and a Parquet file with the JSONL file's items are the same version."""
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    rows = [{"id": "a", "input": "2+2?", "ground_truth": "4", "extra.topic": "math"},
            {"id": "b", "input": "capital?", "ground_truth": "Paris", "extra.topic": "geo"}]
    (tmp_path / "qa.csv").write_text(
        "id,input,ground_truth,extra.topic\na,2+2?,4,math\nb,capital?,Paris,geo\n")
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "qa.parquet")
    jsonl(tmp_path / "qa.jsonl", [
        {"id": "a", "input": "2+2?", "ground_truth": "4", "extra": {"topic": "math"}},
        {"id": "b", "input": "capital?", "ground_truth": "Paris", "extra": {"topic": "geo"}}])
    versions = []
    for name in ("qa.jsonl", "qa.csv", "qa.parquet"):
        code, out, err = run("datasets", "add", "qa", str(tmp_path / name), "--store", store,
                             "--json")
        assert code == 0, err
        versions.append(json.loads(out)["version"])
    assert len(set(versions)) == 1


@pytest.mark.parametrize(("name", "content", "message"), [
    ("dup.jsonl", b'{"id": "a", "input": 1}\n{"id": "b", "input": 2}\n{"id": "a", "input": 3}\n',
     "dup.jsonl:3: field 'id': duplicate id 'a', first at line 1"),
    ("float.jsonl", b'{"id": "a", "input": 1}\n{"id": 1.5, "input": 2}\n',
     "float.jsonl:2: field 'id': must be a non-empty string (or a whole number), got 1.5"),
    ("noid.jsonl", b'{"id": "a", "input": 1}\n{"input": 2}\n',
     "noid.jsonl:2: field 'id': no 'id'"),
    ("array.jsonl", b'{"id": "a", "input": 1}\n[1, 2]\n',
     "array.jsonl:2: expected a JSON object, got list"),
    ("latin1.jsonl", b'{"id": "a", "input": 1}\n{"id": "b", "input": "caf\xe9"}\n',
     "latin1.jsonl:2: not UTF-8 text (byte 0xe9 at column 26)"),
    ("short.csv", b"id,input,output\na,q,x\nb,q\n",
     "short.csv:3: 2 cells, but the header (line 1) names 3 columns"),
    ("unknown.jsonl", b'{"id": "a", "input": 1, "colour": "red"}\n',
     "unknown.jsonl:1: unknown field 'colour'"),
])
def test_bad_input_is_one_error_naming_file_line_and_field_and_stores_nothing(
        tmp_path: Path, store: str, name: str, content: bytes, message: str) -> None:
    """Duplicate ids, ids that are not strings, missing ids, lines that are not objects, a
    line that is not UTF-8, CSV rows of another shape, a field eval cannot read: exit 2, one
    line naming the file, the line and the field, and no version stored."""
    path = tmp_path / name
    path.write_bytes(content)
    code, _, err = run("datasets", "add", "qa", str(path), "--store", store)
    assert code == 2
    assert err.startswith(f"scorecore: error: {tmp_path / name}"), err
    assert message in err
    assert "Traceback" not in err
    assert listed(store) == []


def test_show_and_diff(tmp_path: Path, store: str) -> None:
    """``show`` names the version and its size (``--items``: the items as JSON lines);
    ``diff`` lists added, removed and changed ids."""
    data = jsonl(tmp_path / "qa.jsonl", qa(3))
    run("datasets", "add", "qa", str(data), "--store", store)
    rows = qa(3)
    rows[1]["output"] = "5"
    jsonl(data, [*rows[1:], {"id": "new", "input": "?"}])
    run("datasets", "add", "qa", str(data), "--store", store)
    code, out, _ = run("datasets", "show", "qa@v1", "--store", store)
    assert code == 0
    assert out.splitlines()[0].startswith("qa@v1 (")
    assert "3 item(s)" in out
    code, out, _ = run("datasets", "show", "qa", "--store", store, "--items")
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["new", "q1", "q2"]
    code, out, _ = run("datasets", "diff", "qa@v1", "qa@v2", "--store", store, "--json")
    assert code == 0
    assert json.loads(out) == {"old": json.loads(out)["old"], "new": json.loads(out)["new"],
                               "added": ["new"], "removed": ["q0"], "changed": ["q1"],
                               "same": 1}
    code, out, _ = run("datasets", "diff", "qa@v1", "qa@v2", "--store", store)
    assert "added (1): new" in out
    assert "removed (1): q0" in out
    assert "changed (1): q1" in out
    code, _, err = run("datasets", "show", "qa@v7", "--store", store)
    assert code == 2
    assert "no dataset version 'qa@v7'" in err


def test_from_traces_turns_mastra_and_otlp_agent_runs_into_items(tmp_path: Path,
                                                                  store: str) -> None:
    """Each agent run of a Mastra JSON trace or an OTLP file is an item with input, output,
    the expected trajectory it took, and the trace it came from."""
    code, out, err = run("datasets", "from-traces", str(TRACES / "agent_weather.json"),
                         "weather", "--store", store, "--json")
    assert code == 0, err
    assert json.loads(out)["items"] == 1
    code, out, _ = run("datasets", "show", "weather", "--store", store, "--items")
    item = json.loads(out)
    assert item["id"] == "trace-weather-1-agent-1"
    assert item["output"][0]["content"]["content"] == "Sunny today, rain tomorrow."
    tools = [s.get("name") for s in item["expected_trajectory"]]
    assert "forecast-tool" in tools
    code, out, err = run("datasets", "from-traces", str(TRACES / "otlp" / "genai_agent.json"),
                         "otlp", "--store", store, "--json")
    assert code == 0, err
    assert json.loads(out)["items"] >= 1


def test_eval_runs_on_a_stored_version_and_says_which(tmp_path: Path, store: str) -> None:
    """``eval --dataset qa`` runs the latest version; the output and the report name it."""
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    data = jsonl(tmp_path / "qa.jsonl", qa(4))
    run("datasets", "add", "qa", str(data), "--store", store)
    report = tmp_path / "report.json"
    code, out, err = run("eval", str(scorers), "--dataset", "qa", "--store", store,
                         "--output", str(report))
    assert code == 0, (out, err)
    assert "dataset: qa@v1 (" in out
    document = json.loads(report.read_text())
    assert document["dataset"]["name"] == "qa"
    assert document["dataset"]["number"] == 1
    assert document["totalItems"] == 4


def test_eval_data_records_the_file_as_an_unnamed_version(tmp_path: Path, store: str) -> None:
    """``--data FILE`` still works, and the batch says which content it ran on: the same
    digest ``datasets add`` gives the file."""
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    data = jsonl(tmp_path / "qa.jsonl", qa(4))
    report = tmp_path / "report.json"
    code, out, err = run("eval", str(scorers), "--data", str(data), "--store", store,
                         "--output", str(report))
    assert code == 0, (out, err)
    recorded = json.loads(report.read_text())["dataset"]
    assert recorded["name"] is None
    assert f"dataset: unnamed version {recorded['version'][:12]}" in out
    _, out, _ = run("datasets", "add", "qa", str(data), "--store", store, "--json")
    assert json.loads(out)["version"] == recorded["version"]


def _sampled(tmp_path: Path, store: str, batch: str, *flags: str) -> list[str]:
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    code, out, err = run("eval", str(scorers), "--dataset", "qa", "--store", store,
                         "--batch-id", batch, "--output", str(tmp_path / "sampled.json"),
                         *flags)
    assert code == 0, (out, err)
    # closing(): a connection's own with-block commits but leaves it open (Python 3.13 warns).
    with closing(sqlite3.connect(store.removeprefix("sqlite:"))) as conn:
        runs = conn.execute('SELECT DISTINCT "runId" FROM scorecore_scores WHERE '
                            '"batchId" = ?', (batch,)).fetchall()
    return sorted(run_id.split(":", 1)[1] for (run_id,) in runs)


def test_a_seeded_stratified_sample_is_reproducible_and_proportional(tmp_path: Path,
                                                                     store: str) -> None:
    """The same seed picks the same items; each category gives its share; the batch records
    the sample."""
    data = jsonl(tmp_path / "qa.jsonl", qa(40))  # 10 geo, 30 math
    run("datasets", "add", "qa", str(data), "--store", store)
    flags = ("--sample", "8", "--stratify", "category", "--seed", "1")
    first = _sampled(tmp_path, store, "b1", *flags)
    assert first == _sampled(tmp_path, store, "b2", *flags)
    assert len(first) == 8
    geo = [i for i in first if int(i[1:]) % 4 == 0]
    assert len(geo) == 2
    assert first != _sampled(tmp_path, store, "b3", "--sample", "8", "--stratify", "category",
                             "--seed", "2")
    document = json.loads((tmp_path / "sampled.json").read_text())
    assert document["dataset"]["sample"] == {"size": 8, "stratify": "category", "seed": 2}


def test_a_data_file_no_dataset_can_hold_still_runs_and_says_why_unrecorded(
        tmp_path: Path, store: str) -> None:
    """A repeated id: eval runs the file as before (the repeat is a failed item) and its
    dataset line says why no version was recorded."""
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    rows = qa(3)
    data = jsonl(tmp_path / "qa.jsonl", [*rows, rows[0]])
    report = tmp_path / "report.json"
    code, out, _ = run("eval", str(scorers), "--data", str(data), "--store", store,
                       "--output", str(report))
    assert code == 1  # the repeated id fails its item
    assert "dataset: not recorded as a version (" in out
    assert "duplicate id 'q0', first at line 1" in out
    assert json.loads(report.read_text())["dataset"] is None
    assert listed(store) == []


def test_sampling_options_need_a_sample(tmp_path: Path, store: str) -> None:
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    data = jsonl(tmp_path / "qa.jsonl", qa(3))
    code, _, err = run("eval", str(scorers), "--data", str(data), "--store", store,
                       "--stratify", "category")
    assert code == 2
    assert "--stratify and --seed describe a sample: give --sample N" in err


def test_split_stores_seeded_stratified_parts(tmp_path: Path, store: str) -> None:
    """``split qa train=0.75 test=0.25 --stratify category`` stores qa-train and qa-test: every
    item in one part, each category in the same shares, the same seed the same parts."""
    data = jsonl(tmp_path / "qa.jsonl", qa(40))  # 10 geo, 30 math
    run("datasets", "add", "qa", str(data), "--store", store)
    code, out, err = run("datasets", "split", "qa", "train=0.75", "test=0.25", "--stratify",
                         "category", "--seed", "3", "--store", store, "--json")
    assert code == 0, err
    parts = json.loads(out)
    # geo: 7.5 / 2.5, math: 22.5 / 7.5; equal remainders go to the part named first
    assert (parts["train"]["name"], parts["train"]["items"]) == ("qa-train", 8 + 23)
    assert (parts["test"]["name"], parts["test"]["items"]) == ("qa-test", 2 + 7)
    _, test_items, _ = run("datasets", "show", "qa-test", "--store", store, "--items")
    ids = [json.loads(line)["id"] for line in test_items.splitlines()]
    assert sum(1 for i in ids if int(i[1:]) % 4 == 0) == 2
    _, again, _ = run("datasets", "split", "qa", "train=0.75", "test=0.25", "--stratify",
                      "category", "--seed", "3", "--store", store, "--json")
    assert json.loads(again)["test"]["version"] == parts["test"]["version"]
    code, _, err = run("datasets", "split", "qa", "train=0.7", "test=0.2", "--store", store)
    assert code == 2
    assert "sum to 1" in err


def test_the_ledger_records_the_version_and_pairs_it_with_the_file(tmp_path: Path,
                                                                   store: str) -> None:
    """A batch on ``--dataset qa`` records qa@v1 (and its sample) in the experiment ledger,
    with the same items (by case) as a batch on the file that version came from."""
    from scorecore_adapters.cli._experiments import ledger_dataset, ledger_items  # noqa: PLC0415

    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    data = jsonl(tmp_path / "qa.jsonl", qa(6))
    run("datasets", "add", "qa", str(data), "--store", store)
    for batch, source in (("on-file", ("--data", str(data))), ("on-version", ("--dataset", "qa")),
                          ("sampled", ("--dataset", "qa", "--sample", "2"))):
        code, out, err = run("eval", str(scorers), *source, "--store", store,
                             "--batch-id", batch)
        assert code == 0, (out, err)
    recorded = ledger_dataset(store, "on-version")
    assert recorded is not None
    assert (recorded["name"], recorded["number"]) == ("qa", 1)
    assert ledger_items(store, "on-version") == ledger_items(store, "on-file")
    assert ledger_dataset(store, "on-file")["cases"] == recorded["cases"]  # type: ignore[index]
    sampled = ledger_items(store, "sampled")
    assert len(sampled) == 2
    assert sampled.items() <= ledger_items(store, "on-file").items()
    assert ledger_dataset(store, "sampled")["sample"] == {  # type: ignore[index]
        "size": 2, "stratify": None, "seed": 0}
