"""Tests of the ``scorecore`` command: eval, show, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorecore_adapters.labels import read_labels
from tests.cli_runs import run, stored_columns

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "examples" / "demo_scorers.py"
DEMO_DATA = ROOT / "examples" / "data" / "demo.jsonl"

SCORERS = '''
from scorecore import create_scorer

exact = create_scorer(id="exact", description="d").generate_score(
    lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
half = create_scorer(id="half", description="d").generate_score(lambda ctx: 0.5)
'''

TARGET = '''
async def upper(item):
    return str(item.input).upper()

def broken(item):
    raise RuntimeError("agent down")
'''


@pytest.fixture(autouse=True)
def _no_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's LLM scorer stays skipped in these tests (tests/system/test_demo_real_model.py
    runs it with the local model)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("SCORECORE_DEMO_JUDGE", "none")


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def rows(db: Path) -> list[tuple[Any, ...]]:
    return stored_columns(db, "batchId", "scorerId", "status")


@pytest.fixture
def scorers_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_scorers.py"
    path.write_text(SCORERS)
    return path


def test_demo_passes_and_reports_skipped_llm(tmp_path: Path) -> None:
    """The README demo passes its threshold, reports the LLM scorer skipped, writes a report."""
    db = tmp_path / "demo.sqlite"
    report = tmp_path / "report.json"
    code, out, err = run("eval", str(DEMO), "--data", str(DEMO_DATA), "--store", f"sqlite:{db}",
                         "--threshold", "keyword-coverage=0.5", "--output", str(report),
                         "--batch-id", "demo-1")
    assert code == 0, err
    assert "skipped: llm-faithfulness (SCORECORE_DEMO_JUDGE=none)" in out
    # Skipped is neither scored nor failed: the verdict passes and says what it did not check.
    assert out.splitlines()[-1] == "verdict: passed (skipped, not checked: llm-faithfulness)"
    assert "keyword-coverage" in out
    document = json.loads(report.read_text())
    assert (document["verdict"], document["exitCode"], document["invalidItems"]) == ("passed", 0, 0)
    assert document["totalItems"] == 12
    assert document["skipped"] == {"llm-faithfulness": "SCORECORE_DEMO_JUDGE=none"}
    assert len(rows(db)) == 60  # 5 scorers (3 of the demo's own, 2 built-in) x 12 items
    code, out, _ = run("show", "demo-1", "--store", f"sqlite:{db}")
    assert code == 0
    assert "http-429" in out
    assert out.strip().endswith("60 rows (4 not_scorable, 56 scored)")


def test_failed_threshold_exits_one(tmp_path: Path) -> None:
    """A threshold that is not met makes the command exit 1 and say which one."""
    code, out, _ = run("eval", str(DEMO), "--data", str(DEMO_DATA), "--store",
                       f"sqlite:{tmp_path / 'x.db'}", "--threshold", "answer-match=0.9:1")
    assert code == 1
    assert "failed: threshold answer-match: mean 0.75, needs 0.9..1" in out
    assert "verdict: failed" in out


def test_gate_and_module_selection(tmp_path: Path, scorers_file: Path) -> None:
    """SCORERS:id picks scorers; a gate that is not met exits 1."""
    data = write_jsonl(tmp_path / "d.jsonl", ['{"input": 1, "output": 1, "ground_truth": 1}'])
    code, out, _ = run("eval", f"{scorers_file}:half", "--data", str(data), "--store",
                       f"sqlite:{tmp_path / 'x.db'}", "--gate", "half")
    assert code == 1
    assert "failed: gate half: mean 0.5, needs 1.0" in out
    assert "exact" not in out


def test_target_produces_outputs(tmp_path: Path, scorers_file: Path) -> None:
    """--target module:function produces each output; a raising target fails its items (and,
    nothing being scored, the verdict: exit 1)."""
    (tmp_path / "agent.py").write_text(TARGET)
    data = write_jsonl(tmp_path / "d.jsonl", [
        '{"input": "a", "ground_truth": "A"}', '{"input": "b", "ground_truth": "x"}',
    ])
    db = tmp_path / "x.db"
    code, out, err = run("eval", str(scorers_file), "--data", str(data), "--store", f"sqlite:{db}",
                         "--target", f"{tmp_path / 'agent.py'}:upper", "--threshold", "exact=0.5")
    assert code == 0, err
    assert re.search(r"^exact +0\.500 +2 +0 +0 +>= 0\.5 +pass$", out, re.MULTILINE), out
    code, out, _ = run("eval", str(scorers_file), "--data", str(data), "--store", f"sqlite:{db}",
                       "--target", f"{tmp_path / 'agent.py'}:broken")
    assert code == 1
    assert "2 items, 2 failed as a whole" in out
    assert "verdict: failed — scorer 'exact' has no scored run (2 failed)" in out


def test_malformed_lines_are_recorded_and_exit_two(tmp_path: Path, scorers_file: Path) -> None:
    """Malformed JSONL lines are reported with file and line, the rest runs, exit code 2."""
    data = write_jsonl(tmp_path / "d.jsonl", [
        '{"input": 1, "output": 1, "ground_truth": 1}',
        "",
        '{"input": 2, "output": ',
        "[1, 2]",
        '{"input": 3, "outptu": 3}',
        '{"input": 4, "output": 4, "ground_truth": 4}',
    ])
    db = tmp_path / "x.db"
    code, out, err = run("eval", str(scorers_file), "--data", str(data), "--store",
                         f"sqlite:{db}", "--batch-id", "b")
    assert code == 2
    assert f"scorecore: warning: {data}:3: invalid JSON: Expecting value (column 23)" in err
    assert f"{data}:4: expected a JSON object, got list" in err
    assert f"{data}:5: unknown field 'outptu'" in err
    assert f"scorecore: error: 3 malformed line(s) in {data}" in err
    assert "5 items, 3 failed as a whole" in out
    assert "verdict: error" in out
    assert "verdict: passed" not in out
    statuses = [status for _, scorer, status in rows(db) if scorer == "exact"]
    assert sorted(statuses) == ["failed", "failed", "failed", "scored", "scored"]


def test_resume_by_cli(tmp_path: Path, scorers_file: Path) -> None:
    """--resume RUN completes a stored batch without duplicating rows."""
    data = write_jsonl(tmp_path / "d.jsonl", [f'{{"input": {i}, "output": {i}}}' for i in range(5)])
    db = tmp_path / "x.db"
    assert run("eval", str(scorers_file), "--data", str(data), "--store", f"sqlite:{db}",
               "--batch-id", "r1")[0] == 0
    code, out, _ = run("eval", str(scorers_file), "--data", str(data), "--store", f"sqlite:{db}",
                       "--resume", "r1")
    assert code == 0
    assert out.startswith("resuming r1")
    assert len(rows(db)) == 10


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "missing.py", "--data", "d.jsonl"], "scorers file not found: missing.py"),
        (["eval", "{scorers}", "--data", "missing.jsonl"], "data file not found: missing.jsonl"),
        (["eval", "{scorers}:nope", "--data", "{data}"],
         "unknown scorer 'nope' in {scorers}; available: exact, half"),
        (["eval", "{scorers}", "--data", "{data}", "--threshold", "nope=0.5"],
         "--threshold for unknown scorer 'nope'; scorers: exact, half"),
        (["eval", "{scorers}", "--data", "{data}", "--threshold", "exact=2"],
         "--threshold 'exact=2': Threshold.min must be a finite number in [0, 1], got 2.0"),
        (["eval", "{scorers}", "--data", "{data}", "--store", "sqlite:{tmp}/no/such/x.db"],
         "cannot open store sqlite:{tmp}/no/such/x.db: directory '{tmp}/no/such' does not exist"),
        (["eval", "{scorers}", "--data", "{data}", "--store", "postgresql://u:pw@127.0.0.1:1/x"],
         "cannot open store postgresql://u:***@127.0.0.1:1/x: connection failed"),
        (["eval", "{scorers}", "--data", "{data}", "--store", "redis://x"],
         "unknown store URL 'redis://x'"),
        (["eval", "{scorers}", "--data", "{data}", "--target", "nomodule_xyz:fn"],
         "target module not found: nomodule_xyz"),
        (["eval", "{scorers}", "--data", "{data}", "--concurrency", "0"],
         "--concurrency must be >= 1, got 0"),
        (["show", "nope", "--store", "sqlite:{tmp}/absent.db"],
         "store sqlite:{tmp}/absent.db does not exist"),
        (["frobnicate"], "argument command: invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_are_one_line_exit_two(
    tmp_path: Path, scorers_file: Path, argv: list[str], message: str
) -> None:
    """Every usage or input error is one line on stderr, exit code 2, no traceback."""
    data = write_jsonl(tmp_path / "d.jsonl", ['{"input": 1, "output": 1}'])
    values = {"scorers": str(scorers_file), "data": str(data), "tmp": str(tmp_path)}
    code, _, err = run(*(a.format(**values) for a in argv))
    assert code == 2
    assert err.startswith("scorecore: error: " + message.format(**values)), err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_broken_scorers_module_is_one_line(tmp_path: Path) -> None:
    """A scorers file that raises on import is reported with its location, no traceback."""
    bad = tmp_path / "bad_scorers.py"
    bad.write_text("x = 1\nraise ValueError('oops')\n")
    data = write_jsonl(tmp_path / "d.jsonl", ['{"input": 1, "output": 1}'])
    code, _, err = run("eval", str(bad), "--data", str(data))
    assert code == 2
    assert err == (
        f"scorecore: error: importing scorers {bad} failed: ValueError: oops ({bad}:2)\n"
    )


@pytest.mark.parametrize("value", ["['exact']", "'not ready'", "3"])
def test_skipped_scorers_that_is_not_a_mapping_is_a_usage_error(
    tmp_path: Path, value: str
) -> None:
    """``skipped_scorers`` must map ids to reasons; anything else is one line, exit 2."""
    path = tmp_path / "skips.py"
    path.write_text(SCORERS + f"skipped_scorers = {value}\n")
    data = write_jsonl(tmp_path / "d.jsonl", ['{"input": 1, "output": 1}'])
    code, _, err = run("eval", str(path), "--data", str(data), "--store",
                       f"sqlite:{tmp_path / 'x.db'}")
    assert code == 2
    assert err.startswith(f"scorecore: error: skipped_scorers in {path} must be a mapping"), err
    assert err.count("\n") == 1


def test_a_module_importing_a_missing_module_names_the_missing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's module exists; the one it imports does not: say which, not "not found"."""
    package = tmp_path / "evalpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "scorers_mod.py").write_text("import evalpkg_missing_dependency\n")
    # The missing name is a prefix of the user's module name: still the user's import fails.
    (tmp_path / "evalpkg_missing_dependency_scorers.py").write_text(
        "import evalpkg_missing_dependency\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    data = write_jsonl(tmp_path / "d.jsonl", ['{"input": 1, "output": 1}'])
    for spec in ("evalpkg.scorers_mod", "evalpkg_missing_dependency_scorers"):
        code, _, err = run("eval", spec, "--data", str(data))
        assert code == 2
        assert err.startswith(f"scorecore: error: importing scorers {spec} failed: "
                              f"ModuleNotFoundError: No module named "
                              f"'evalpkg_missing_dependency'"), err
    code, _, err = run("eval", "evalpkg.absent", "--data", str(data))
    assert err == "scorecore: error: scorers module not found: evalpkg.absent\n"


@pytest.fixture
def package_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project whose scorers live in a package ``jurypkg`` (``jurypkg/panel/jury.py``) that
    imports its own package absolutely and relatively; forgotten after the test."""
    root = tmp_path / "project"
    panel = root / "jurypkg" / "panel"
    panel.mkdir(parents=True)
    (root / "jurypkg" / "__init__.py").write_text("")
    (root / "jurypkg" / "common.py").write_text("BASE = 0.5\n")
    (panel / "__init__.py").write_text("")
    (panel / "weights.py").write_text("EXTRA = 0.25\n")
    (panel / "jury.py").write_text(
        "from scorecore import create_scorer\n"
        "from jurypkg.common import BASE\n"
        "from .weights import EXTRA\n"
        "jury = create_scorer(id='jury', description='d').generate_score("
        "lambda ctx: BASE + EXTRA)\n")
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield root
    for name in [n for n in sys.modules if n == "jurypkg" or n.startswith("jurypkg.")]:
        del sys.modules[name]


@pytest.mark.parametrize("absolute", [False, True])
def test_a_scorer_file_inside_a_package_imports_its_package(
    package_project: Path, absolute: bool
) -> None:
    """``scorecore eval jurypkg/panel/jury.py`` works as ``scorecore eval jurypkg.panel.jury``
    does: the file's package and its relative imports resolve, from the project root or with
    an absolute path."""
    data = write_jsonl(package_project / "d.jsonl", ['{"input": 1, "output": 1}'])
    path = package_project / "jurypkg" / "panel" / "jury.py"
    code, out, err = run("eval", str(path) if absolute else "jurypkg/panel/jury.py",
                         "--data", str(data), "--store", f"sqlite:{package_project / 'x.db'}")
    assert code == 0, out + err
    assert re.search(r"jury\s.*0\.750", out), out


def test_a_package_named_like_one_already_imported_loads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scorer file in a package ``tests`` while another ``tests`` package is imported (this
    suite's): the file itself is loaded, as before, instead of a module of the other one."""
    package = tmp_path / "tests"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "my_scorers.py").write_text(SCORERS)
    monkeypatch.setattr(sys, "path", list(sys.path))
    data = write_jsonl(tmp_path / "d.jsonl", ['{"input": 1, "output": 1}'])
    code, out, err = run("eval", str(package / "my_scorers.py"), "--data", str(data),
                         "--store", f"sqlite:{tmp_path / 'x.db'}")
    assert code == 0, out + err
    assert "tests.my_scorers" not in sys.modules


def test_console_script_subprocess(tmp_path: Path) -> None:
    """The installed `scorecore` script runs the demo end to end in a real process."""
    script = Path(sys.executable).parent / "scorecore"
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PYTEST_CURRENT_TEST")}
    done = subprocess.run(  # noqa: S603 - our own console script, fixed arguments
        [str(script), "eval", str(DEMO), "--data", str(DEMO_DATA),
         "--store", f"sqlite:{tmp_path / 'demo.sqlite'}", "--threshold", "keyword-coverage=0.5"],
        capture_output=True, text=True, timeout=60, check=False, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "verdict: passed" in done.stdout
    assert "progress: 12/12 items" in done.stdout


def test_eval_without_store_writes_scorecore_db_in_the_current_directory(
    tmp_path: Path, scorers_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented default: ``scorecore.db`` in the working directory, read by ``show``."""
    data = write_jsonl(tmp_path / "data.jsonl", ['{"input": "a", "output": "a", "id": "1"}'])
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, _, err = run("eval", str(scorers_file), "--data", str(data), "--batch-id", "b1")
    assert code == 0, err
    assert sorted(rows(work / "scorecore.db")) == [("b1", "exact", "scored"),
                                                   ("b1", "half", "scored")]
    code, out, err = run("show", "b1")
    assert code == 0, err
    assert "exact" in out


def test_progress_counts_every_trial(tmp_path: Path, scorers_file: Path) -> None:
    """With --trials 3 over 2 items the progress lines count 6 runs and end at 6/6."""
    data = write_jsonl(tmp_path / "d.jsonl", ['{"input": 1, "output": 1}',
                                              '{"input": 2, "output": 2}'])
    code, out, err = run("eval", str(scorers_file), "--data", str(data), "--store",
                         f"sqlite:{tmp_path / 'x.db'}", "--trials", "3", "--no-cache")
    assert code in (0, 1), err
    progress = [line for line in out.splitlines() if line.startswith("progress:")]
    assert progress[-1] == "progress: 6/6 item trials (0 with failures)"
    assert all(int(p.split()[1].split("/")[1]) == 6 for p in progress)


def test_the_summary_counts_items_and_trials_apart(tmp_path: Path, scorers_file: Path) -> None:
    """--trials 3 on 20 items printed "60 items": it says 20 items x 3 trials."""
    data = write_jsonl(tmp_path / "d.jsonl",
                       [f'{{"input": {i}, "output": {i}, "ground_truth": {i}}}' for i in range(20)])
    code, out, err = run("eval", str(scorers_file), "--data", str(data), "--store",
                         f"sqlite:{tmp_path / 'x.db'}", "--trials", "3", "--no-cache")
    assert code == 0, err
    assert re.search(r"^20 items x 3 trials, 0 item trial\(s\) failed as a whole, ", out,
                     re.MULTILINE), out
    assert "60 items" not in out


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ("sqlite:{tmp}/s.db",
         "--store sqlite:{tmp}/s.db is a SQLite file, which one local worker only can write: "
         "give --workers 1, or --store postgresql://… (which every worker can reach) with "
         "--workers 2"),
        ("sqlite::memory:",
         "--store sqlite::memory: would keep the rows inside a Ray actor, which ends with the "
         "batch"),
    ],
)
def test_engine_ray_refuses_a_store_it_cannot_use_before_starting_ray(
    tmp_path: Path, scorers_file: Path, monkeypatch: pytest.MonkeyPatch, store: str,
    message: str,
) -> None:
    """A SQLite store with --workers 2 (or in memory) is a usage error naming the command's
    flags, given before Ray starts (which takes seconds), with nothing stored."""
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")

    def no_start(*args: object, **kwargs: object) -> None:
        raise AssertionError("Ray was started")

    monkeypatch.setattr(ray, "init", no_start)
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    data = write_jsonl(tmp_path / "d.jsonl", ['{"input": 1, "output": 1}'])
    code, _, err = run("eval", str(scorers_file), "--data", str(data), "--engine", "ray",
                       "--workers", "2", "--store", store.format(tmp=tmp_path), "--no-cache")
    assert code == 2
    assert err.startswith("scorecore: error: " + message.format(tmp=tmp_path)), err
    assert "store_url" not in err
    assert "concurrency" not in err
    assert not (tmp_path / "s.db").exists()


DEMO_LABELS = ROOT / "examples" / "data" / "demo_labels.jsonl"


def test_the_demo_ships_labels_for_its_judged_items() -> None:
    """``examples/data/demo_labels.jsonl`` is in calibrate's format and labels every demo item
    with a reference answer (the faithfulness scorer's context), for llm-faithfulness; the
    Makefile's demo passes it to ``eval --labels``."""
    labels = read_labels(DEMO_LABELS)
    items = [json.loads(line) for line in DEMO_DATA.read_text().splitlines() if line.strip()]
    assert set(labels) == {item["id"] for item in items if item.get("ground_truth")}
    assert all(isinstance(v, bool) for v in labels.values())
    lines = [json.loads(line) for line in DEMO_LABELS.read_text().splitlines()]
    assert {line["scorer"] for line in lines} == {"llm-faithfulness"}
    assert all(line["note"] for line in lines)
    recipe = (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "--labels examples/data/demo_labels.jsonl" in recipe


def test_demo_with_labels_and_no_judge_says_there_is_nothing_to_measure(tmp_path: Path) -> None:
    """With the LLM scorer skipped, ``--labels`` measures no function scorer: one line says no
    LLM-judged scorer ran, and the demo still passes."""
    code, out, err = run("eval", str(DEMO), "--data", str(DEMO_DATA), "--store",
                         f"sqlite:{tmp_path / 'demo.sqlite'}", "--threshold",
                         "keyword-coverage=0.5", "--labels", str(DEMO_LABELS))
    assert code == 0, err + out
    assert (f"agreement with the labels in {DEMO_LABELS}: no LLM-judged scorer ran "
            "(llm-faithfulness skipped)\n") in out
