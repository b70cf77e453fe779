"""The command line against hostile input: any JSONL content, a missing PostgreSQL driver.

Whatever bytes a dataset holds, ``scorecore eval`` returns an exit code (0/1/2 as documented)
and never prints a traceback; a line it cannot score is a per-line warning, a failed item and
exit 2. The ``--output`` report agrees with the exit code.
"""

from __future__ import annotations

import importlib.abc
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecore.evals import StoreError
from scorecore_adapters.cli import MAX_NESTING
from scorecore_adapters.storage import PostgresScoreStore, open_store
from tests.cli_runs import run, stored_columns
from tests.strategies import JsonlLine, jsonl_lines

SCORERS = '''
from scorecore import create_scorer

exact = create_scorer(id="exact", description="d").generate_score(
    lambda ctx: float(ctx.run.output == ctx.run.ground_truth))
half = create_scorer(id="half", description="d").generate_score(lambda ctx: 0.5)
'''


def stored(db: Path) -> list[tuple[Any, ...]]:
    return stored_columns(db, "scorerId", "status", "metadata")


def evaluate(work: Path, raw: bytes, *extra: str) -> tuple[int, str, str, dict[str, Any]]:
    """Run ``scorecore eval`` over a dataset of ``raw`` bytes; the code, out, err and report."""
    scorers = work / "scorers.py"
    scorers.write_text(SCORERS)
    data = work / "data.jsonl"
    data.write_bytes(raw)
    report = work / "report.json"
    code, out, err = run("eval", str(scorers), "--data", str(data), "--store",
                         f"sqlite:{work / 'x.db'}", "--output", str(report), *extra)
    document = json.loads(report.read_text()) if report.exists() else {}
    return code, out, err, document


@given(lines=st.lists(jsonl_lines, min_size=1, max_size=6))
def test_any_jsonl_content_gives_an_exit_code_never_a_traceback(
    lines: Sequence[JsonlLine],
) -> None:
    """Any bytes: an exit code as documented, never a traceback; every non-blank line is one
    item with a row per scorer; exactly the lines known to be unreadable are warned about (by
    line number), and exit 2 and the report's verdict say so."""
    raw = b"\n".join(line.raw for line in lines) + b"\n"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        code, out, err, report = evaluate(work, raw, "--threshold", "half=0.4")
        rows = stored(work / "x.db")
    assert "Traceback" not in out + err
    warned = err.count("scorecore: warning: ")
    texts = raw.decode("utf-8", "replace").split("\n")
    items = sum(1 for text in texts if text.strip())
    # The checks pass when every line was scored: an unreadable line is a failed item, which
    # fails them (max_failures defaults to 0), and no line at all is an empty batch.
    checks = "passed" if items and not warned else "failed"
    assert code == (2 if warned else 0 if checks == "passed" else 1), err
    assert report["exitCode"] == code
    assert report["verdict"] == ("error" if warned else checks)
    assert report["checksVerdict"] == checks
    assert report["invalidItems"] == warned
    assert report["totalItems"] == items
    assert len(rows) == 2 * items
    # Lines made of one generated line each (no newline inside) can be checked one by one.
    if all(b"\n" not in line.raw for line in lines):
        for number, line in enumerate(lines, start=1):
            if line.malformed is None or not line.raw.decode("utf-8", "replace").strip():
                continue
            assert (f"data.jsonl:{number}: " in err) is line.malformed, (number, err)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"input": "\\ud800", "output": 1}',
         "field 'input': lone surrogate '\\ud800' in a string (not valid Unicode text)"),
        (b'{"input": {"k\\udfff": 1}, "output": 1}',
         "field 'input': lone surrogate '\\udfff' in a string (not valid Unicode text)"),
        (b'{"input": "a", "output": "b\\u0000"}',
         "field 'output': NUL character in a string (PostgreSQL cannot store it)"),
        (b'{"input": ' + b"[" * 100_000 + b"}",
         f"invalid JSON: nested deeper than {MAX_NESTING} levels"),
        (b'{"input": ' + b"[" * 200 + b"]" * 200 + b', "output": 1}',
         f"field 'input': nested deeper than {MAX_NESTING} levels"),
        (b'{"input": ' + b"9" * 5000 + b', "output": 1}',
         "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion: "
         "value has 5000 digits"),
    ],
    ids=["lone surrogate", "surrogate in a key", "NUL", "100k [", "200 deep", "5000 digits"],
)
def test_unreadable_lines_are_warnings_failed_items_and_exit_two(
    tmp_path: Path, line: bytes, message: str
) -> None:
    """The lines from the issue: a one-line warning, failed rows naming it, exit 2 (not 1)."""
    good = b'{"input": 1, "output": 1, "ground_truth": 1}'
    code, out, err, report = evaluate(tmp_path, good + b"\n" + line + b"\n")
    data = tmp_path / "data.jsonl"
    assert code == 2
    assert err == (f"scorecore: warning: {data}:2: {message}\n"
                   f"scorecore: error: 1 malformed line(s) in {data} (recorded as failed items)\n")
    assert "verdict: error" in out
    assert (report["verdict"], report["exitCode"], report["invalidItems"]) == ("error", 2, 1)
    statuses = sorted((scorer, status) for scorer, status, _ in stored(tmp_path / "x.db"))
    assert statuses == [("exact", "failed"), ("exact", "scored"),
                        ("half", "failed"), ("half", "scored")]
    errors = [json.loads(meta).get("error") for _, status, meta in stored(tmp_path / "x.db")
              if status == "failed"]
    assert errors == [f"{data}:2: {message}"] * 2


def test_nesting_up_to_the_limit_is_scored_and_stored(tmp_path: Path) -> None:
    """A line nested exactly MAX_NESTING levels deep is a normal item: scored and stored."""
    depth = MAX_NESTING - 1  # the line's object is level 1
    line = '{"input": ' + "[" * depth + "]" * depth + ', "output": 1, "ground_truth": 1}'
    code, _, err, report = evaluate(tmp_path, line.encode() + b"\n")
    assert code == 0, err
    assert report["verdict"] == "passed"
    assert [status for _, status, _ in stored(tmp_path / "x.db")] == ["scored", "scored"]


def test_report_verdict_agrees_with_exit_code(tmp_path: Path) -> None:
    """--output: verdict and exitCode are 0/"passed", 1/"failed", 2/"error" like the command."""
    good = b'{"input": 1, "output": 1, "ground_truth": 1}\n'
    cases = [
        (good, ("--threshold", "half=0.4"), 0, "passed", "passed"),
        (good, ("--threshold", "half=0.9"), 1, "failed", "failed"),
        # The malformed line fails one item: tolerated here, so only the line makes it "error".
        (good + b"not json\n", ("--threshold", "half=0.4", "--max-failures", "2"), 2, "error",
         "passed"),
        (good + b"not json\n", ("--threshold", "half=0.9"), 2, "error", "failed"),
    ]
    for number, (raw, extra, code, verdict, checks) in enumerate(cases):
        work = tmp_path / str(number)
        work.mkdir()
        got, out, _, report = evaluate(work, raw, *extra)
        assert (got, report["exitCode"], report["verdict"], report["checksVerdict"]) == (
            code, code, verdict, checks)
        assert out.splitlines()[-1].startswith(f"verdict: {verdict}"), out


# --------------------------------------------------------------------------- no psycopg


class _NoPsycopg(importlib.abc.MetaPathFinder):
    """An import hook that makes psycopg fail like an installed one without libpq does."""

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name == "psycopg" or name.startswith("psycopg."):
            raise ImportError("no pq wrapper available")


@pytest.fixture(params=["not installed", "broken install"])
def no_psycopg(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """psycopg cannot be imported: absent (None in sys.modules) or failing in an import hook."""
    for name in [n for n in sys.modules if n == "psycopg" or n.startswith("psycopg.")]:
        monkeypatch.delitem(sys.modules, name)
    if request.param == "not installed":
        monkeypatch.setitem(sys.modules, "psycopg", None)
        return "import of psycopg halted"
    monkeypatch.setattr(sys, "meta_path", [_NoPsycopg(), *sys.meta_path])
    return "no pq wrapper available"


def test_open_store_without_psycopg_is_store_error(no_psycopg: str) -> None:
    """open_store("postgresql://...") raises StoreError naming the extra, never the password."""
    with pytest.raises(StoreError) as info:
        open_store("postgresql://me:hunter2@db/scores")
    message = str(info.value)
    assert "pip install 'scorecore[postgres]'" in message
    assert no_psycopg in message
    assert "hunter2" not in message
    assert info.value.operation == "open"
    assert info.value.store == "postgresql://me:***@db/scores"


@pytest.mark.anyio
async def test_postgres_store_open_without_psycopg_is_store_error(
    anyio_backend: str, no_psycopg: str
) -> None:
    """A PostgresScoreStore built directly fails to open with the same StoreError."""
    with pytest.raises(StoreError, match=r"pip install 'scorecore\[postgres\]'"):
        await PostgresScoreStore("postgresql://me:pw@db/scores").open()


@pytest.mark.parametrize("command", ["eval", "show"])
def test_cli_without_psycopg_is_one_line_exit_two(
    tmp_path: Path, no_psycopg: str, command: str
) -> None:
    """--store postgresql://... without the [postgres] extra: one line naming it, exit 2."""
    scorers = tmp_path / "scorers.py"
    scorers.write_text(SCORERS)
    data = tmp_path / "d.jsonl"
    data.write_text('{"input": 1, "output": 1}\n')
    argv = (["eval", str(scorers), "--data", str(data)] if command == "eval" else ["show", "b"])
    code, out, err = run(*argv, "--store", "postgresql://me:hunter2@db/scores")
    assert code == 2
    assert err.startswith("scorecore: error: store postgresql://me:***@db/scores needs the "
                          "PostgreSQL driver psycopg")
    assert err.endswith(": pip install 'scorecore[postgres]'\n")
    assert err.count("\n") == 1
    assert "hunter2" not in out + err


def test_a_utf8_bom_before_the_first_line_is_ignored(tmp_path: Path) -> None:
    """A dataset saved by an editor that writes a UTF-8 BOM scores its first line too."""
    lines = ['{"input": 1, "output": 1, "ground_truth": 1}', '{"input": 2, "output": 2}']
    code, _, err, document = evaluate(tmp_path, b"\xef\xbb\xbf" + "\n".join(lines).encode())
    assert "warning" not in err, err
    assert code in (0, 1)
    assert [s for s, _, _ in stored(tmp_path / "x.db")].count("half") == 2
    assert document
