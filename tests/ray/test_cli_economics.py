"""``scorecore eval --engine ray`` with ``--cache`` and ``--pricing``: a PostgreSQL cache shared
by the workers and across runs, the local engine's cost lines, and the default SQLite cache
left out (with a note) when several workers cannot share it."""

from __future__ import annotations

import io
import json
import re
import uuid
from pathlib import Path

import pytest

from scorecore_adapters.cli import main
from tests.ray import _judged
from tests.ray.conftest import RAY_WARNINGS

pytestmark = [pytest.mark.usefixtures("ray_cluster"), RAY_WARNINGS]

N = 130  # three blocks of 64: work for both workers


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scorers.py").write_text(
        "from tests.ray._judged import scorers as make\n\n"
        f"scorers = make({str(tmp_path / 'calls.log')!r})\n")
    items = _judged.items(N, uuid.uuid4().hex)
    (tmp_path / "data.jsonl").write_text("\n".join(json.dumps(i) for i in items) + "\n")
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "prices.toml").write_text(
        f'[models."{_judged.MODEL}"]\ninput = 0.15\noutput = 0.6\n')
    return tmp_path


def _eval(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["eval", "scorers.py", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _calls(work: Path) -> int:
    return _judged.calls(str(work / "calls.log"))


def _judge_line(out: str) -> str:
    found = re.search(r"^judge graded: .*$", out, re.MULTILINE)
    assert found is not None, out
    return found.group(0)


def test_a_postgres_cache_is_shared_by_ray_workers_across_runs(
    work: Path, pg_url: str, batch_id: str
) -> None:
    """Two workers fill the PostgreSQL cache; the next run asks no judge and prints the hits
    and savings. The cost line is the local engine's."""
    local = _eval("--data", "data.jsonl", "--store", "sqlite:local.db", "--no-cache",
                  "--pricing", "prices.toml")
    assert local[0] == 0, local
    asked = _calls(work)
    assert asked == N + 2  # every item, the two repeats included (no cache)
    common = ["--data", "data.jsonl", "--store", pg_url, "--engine", "ray", "--workers", "2",
              "--cache", pg_url, "--pricing", "prices.toml"]
    first = _eval(*common, "--batch-id", batch_id)
    assert first[0] == 0, first
    assert "note:" not in first[1]
    filled = _calls(work) - asked
    assert N <= filled <= N + 2  # each answer once (a repeat may race its first on another worker)
    assert f"cache {N + 2 - filled} hit(s), {filled} miss(es)" in first[1]
    cost = re.search(r"judge cost: (\$[0-9.]+)", local[1])
    assert cost is not None
    if filled == N + 2:
        assert _judge_line(first[1]) == _judge_line(local[1])
    second = _eval(*common, "--batch-id", f"{batch_id}-2")
    assert second[0] == 0, second
    assert _calls(work) == asked + filled  # no judge call
    assert f"judge cost: $0.0000; cache {N + 2} hit(s), 0 miss(es)" in second[1]
    assert f"saved {cost.group(1)}" in second[1]


def test_the_default_sqlite_cache_is_left_out_with_several_workers(
    work: Path, pg_url: str, batch_id: str
) -> None:
    """--workers 2 with the default (SQLite) cache: one note saying why, then no cache."""
    code, out, err = _eval("--data", "empty.jsonl", "--store", pg_url, "--engine", "ray",
                           "--workers", "2", "--batch-id", batch_id)
    assert code == 0, err
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1
    assert "without the judge cache" in notes[0]
    assert "sqlite:.scorecore/cache.db" in notes[0]
    assert "postgresql://" in notes[0]
    assert not (work / ".scorecore" / "cache.db").exists()


def test_the_default_sqlite_cache_serves_one_local_worker(work: Path) -> None:
    """One local worker uses the default SQLite cache: a second run asks no judge."""
    for batch in ("one", "two"):
        code, out, err = _eval("--data", "data.jsonl", "--store", "sqlite:s.db", "--engine",
                               "ray", "--batch-id", batch)
        assert code == 0, err
        assert "note:" not in out
    assert _calls(work) == N  # the first run's distinct answers only
    assert (work / ".scorecore" / "cache.db").exists()
