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
from tests.adapters.ray import _judged
from tests.adapters.ray.conftest import RAY_WARNINGS

pytestmark = [pytest.mark.usefixtures("ray_cluster"), RAY_WARNINGS]

N = 130  # three blocks of 64: work for both workers


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scorers.py").write_text(
        "from tests.adapters.ray._judged import scorers as make\n\n"
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


def test_a_postgres_cache_is_shared_by_ray_workers_across_runs(
    work: Path, pg_url: str, batch_id: str
) -> None:
    """A run fills the PostgreSQL cache; two Ray workers then ask no judge, and print the hits
    and what they saved: the first run's cost under the same --pricing."""
    cache = ["--cache", pg_url, "--pricing", "prices.toml"]
    local = _eval("--data", "data.jsonl", "--store", "sqlite:local.db", *cache)
    assert local[0] == 0, local
    assert _calls(work) == N  # each distinct answer once; the two repeats hit the cache
    assert f"cache 2 hit(s), {N} miss(es)" in local[1]
    cost = re.search(r"judge cost: (\$[0-9.]+)", local[1])
    assert cost is not None
    assert cost.group(1) != "$0.0000"
    ray = _eval("--data", "data.jsonl", "--store", pg_url, "--engine", "ray", "--workers", "2",
                "--batch-id", batch_id, *cache)
    assert ray[0] == 0, ray
    assert "note:" not in ray[1]
    assert _calls(work) == N  # no judge call on either worker
    assert f"judge cost: $0.0000; cache {N + 2} hit(s), 0 miss(es)" in ray[1]
    saved = re.search(r"judge cost: .*saved (\$[0-9.]+)", ray[1])
    assert saved is not None, ray[1]
    local_saved = re.search(r"judge cost: .*saved (\$[0-9.]+)", local[1])
    assert local_saved is not None
    # The Ray run saved what the local run paid, plus what its two in-run hits saved.
    paid = float(cost.group(1)[1:]) + float(local_saved.group(1)[1:])
    assert float(saved.group(1)[1:]) == pytest.approx(paid, abs=2e-4)


def test_the_default_sqlite_cache_is_left_out_with_several_workers(
    work: Path, pg_url: str, batch_id: str
) -> None:
    """--workers 2 with the default (SQLite) cache: one note saying why, then no cache (an
    empty dataset, for speed: its verdict fails, since nothing was scored)."""
    code, out, err = _eval("--data", "empty.jsonl", "--store", pg_url, "--engine", "ray",
                           "--workers", "2", "--batch-id", batch_id)
    assert code == 1, err
    assert "verdict: failed" in out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert len(notes) == 1
    assert "without the judge cache" in notes[0]
    assert "sqlite:.scorecore/cache.db" in notes[0]
    assert "postgresql://" in notes[0]
    assert not (work / ".scorecore" / "cache.db").exists()


def test_the_default_sqlite_cache_serves_one_local_worker(work: Path) -> None:
    """One local worker uses the default SQLite cache: after a local run filled it, the Ray
    run asks no judge."""
    code, out, err = _eval("--data", "data.jsonl", "--store", "sqlite:local.db")
    assert code == 0, err
    assert _calls(work) == N
    code, out, err = _eval("--data", "data.jsonl", "--store", "sqlite:s.db", "--engine", "ray",
                           "--batch-id", "one")
    assert code == 0, err
    assert "note:" not in out
    assert _calls(work) == N  # every answer came from .scorecore/cache.db
    assert f"cache {N + 2} hit(s), 0 miss(es)" in out
