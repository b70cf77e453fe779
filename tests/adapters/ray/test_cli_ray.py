"""``scorecore eval --engine ray`` gives the in-process command's report, exit code and rows."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

from scorecore_adapters.cli import main
from scorecore_adapters.storage import open_store
from tests.adapters.ray import _scorers
from tests.adapters.ray.conftest import RAY_WARNINGS

pytestmark = [pytest.mark.usefixtures("ray_cluster"), RAY_WARNINGS]

_VOLATILE = ("durationSeconds", "store")


def _dataset(tmp_path: Path, n: int) -> tuple[Path, Path]:
    scorers = tmp_path / "scorers.py"
    scorers.write_text("from tests.adapters.ray._scorers import make\n\nscorers = make()\n")
    data = tmp_path / "data.jsonl"
    lines = [json.dumps(item) for item in _scorers.items(n)]
    lines.insert(3, "{not json")  # a malformed line: a failed item and exit 2, both engines
    data.write_text("\n".join(lines) + "\n")
    return scorers, data


def _eval(*argv: str) -> tuple[int, dict[str, Any], str, str]:
    out, err = io.StringIO(), io.StringIO()
    output = Path(argv[argv.index("--output") + 1])
    # The judge cache is off on Ray: both engines ask every judge.
    code = main(["eval", *argv, "--no-cache"], out=out, err=err)
    document = json.loads(output.read_text()) if output.exists() else {}
    for key in _VOLATILE:
        document.pop(key, None)
    return code, document, out.getvalue(), err.getvalue()


def test_engine_ray_matches_the_local_engine(tmp_path: Path) -> None:
    """Same scorers, target and data: the same JSON report, exit code, malformed-line warning
    and stored rows (the target named the same)."""
    scorers, data = _dataset(tmp_path, 120)
    target = tmp_path / "target.py"
    target.write_text("def answer(item):\n    return f'answer {len(item.input) % 11}'\n")
    common = [str(scorers), "--data", str(data), "--batch-id", "b1", "--threshold",
              "exact=0.5", "--target", f"{target}:answer"]
    local = _eval(*common, "--store", f"sqlite:{tmp_path}/local.db",
                  "--output", str(tmp_path / "local.json"))
    ray = _eval(*common, "--store", f"sqlite:{tmp_path}/ray.db", "--engine", "ray",
                "--output", str(tmp_path / "ray.json"))
    assert ray[0] == local[0] == 2  # the malformed line
    assert ray[1] == local[1]
    assert ray[1]["failedItems"] >= 2
    assert ray[3] == local[3]  # the same warnings, once each
    assert "verdict: error" in ray[2]
    rows = {name: _stored(f"sqlite:{tmp_path}/{name}.db", "b1") for name in ("local", "ray")}
    assert rows["ray"] == rows["local"]
    assert {r["entity_id"] for r in rows["ray"]} == {"scorecore_user_target:answer"}


def _stored(url: str, batch_id: str) -> list[dict[str, Any]]:
    async def read() -> list[dict[str, Any]]:
        async with open_store(url) as store:
            return [attrs.asdict(r) for r in await store.list_run(batch_id)]

    rows = anyio.run(read)
    for row in rows:
        del row["created_at"], row["updated_at"]
        for step in (row["metadata"] or {}).get("judge", {}).values():
            for execution in step["executions"]:
                del execution["durationMs"], execution["durationSeconds"]
    return rows


def test_engine_ray_refuses_sqlite_with_several_workers(tmp_path: Path) -> None:
    """--workers 2 on SQLite is a usage error naming the fix, and nothing is stored."""
    scorers, data = _dataset(tmp_path, 5)
    code, _, _, err = _eval(str(scorers), "--data", str(data), "--store",
                            f"sqlite:{tmp_path}/s.db", "--engine", "ray", "--workers", "2",
                            "--output", str(tmp_path / "r.json"))
    assert code == 2
    assert "one local worker" in err
    assert "postgresql://" in err
    # the command's flags, not the API's
    assert "--workers" in err
    assert "--store" in err
    assert "store_url" not in err
    assert "concurrency" not in err


STANDALONE_SCORERS = """
from scorecore import create_scorer

scorers = [create_scorer(id="length", description="d").generate_score(
    lambda ctx: min(1.0, len(str(ctx.run.output)) / 10))]
"""


def test_rays_info_lines_stay_out_of_the_output(tmp_path: Path, ray_cluster: str) -> None:
    """The command run as a user runs it (a process of its own, here joining the tests'
    cluster through RAY_ADDRESS) prints its own lines only: none of Ray's INFO log lines
    (connecting, dataset plans, progress) on stdout or stderr."""
    (tmp_path / "scorers.py").write_text(STANDALONE_SCORERS)
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({"input": f"q{i}", "output": "a" * i}) + "\n" for i in range(4)))
    env = {**os.environ, "RAY_ADDRESS": ray_cluster, "RAY_USAGE_STATS_ENABLED": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "scorecore_adapters", "eval", "scorers.py", "--data",
         "data.jsonl", "--store", "sqlite:s.db", "--engine", "ray", "--no-cache"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "verdict: passed" in done.stdout
    noise = [line for line in (done.stdout + done.stderr).splitlines()
             if re.search(r"\bINFO\b", line)]
    assert not noise, noise


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--trials", "2", "--budget-tokens", "9"],
         "--budget-tokens, --trials: not supported with --engine ray"),
        (["--workers", "0"], "--workers must be >= 1, got 0"),
    ],
)
def test_engine_ray_refuses_what_it_does_not_run(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    """Flags Ray does not honour yet are usage errors, not a silently different batch."""
    scorers, data = _dataset(tmp_path, 5)
    code, _, _, err = _eval(str(scorers), "--data", str(data), "--engine", "ray", *flags,
                            "--store", f"sqlite:{tmp_path}/s.db",
                            "--output", str(tmp_path / "r.json"))
    assert (code, message in err) == (2, True), err
    assert not (tmp_path / "s.db").exists()


def test_engine_ray_on_postgres_with_two_workers(tmp_path: Path, pg_url: str,
                                                 batch_id: str) -> None:
    """Two workers sharing PostgreSQL: the local engine's report; resume adds no row."""
    scorers, data = _dataset(tmp_path, 300)  # 300 items, a repeat, a non-item, a bad line
    local = _eval(str(scorers), "--data", str(data), "--batch-id", batch_id, "--store",
                  f"sqlite:{tmp_path}/local.db", "--output", str(tmp_path / "local.json"))
    ray = _eval(str(scorers), "--data", str(data), "--batch-id", batch_id, "--store", pg_url,
                "--engine", "ray", "--workers", "2", "--output", str(tmp_path / "ray.json"))
    assert (ray[0], ray[1]) == (local[0], local[1])
    stored = _count(pg_url, batch_id)
    assert stored == (300 + 3 - 1) * 3  # every line but the repeated id, three scorers each
    again = _eval(str(scorers), "--data", str(data), "--resume", batch_id, "--store", pg_url,
                  "--engine", "ray", "--workers", "2", "--output", str(tmp_path / "again.json"))
    assert again[1]["scorers"] == local[1]["scorers"]
    assert _count(pg_url, batch_id) == stored


def _count(url: str, batch_id: str) -> int:
    async def count() -> int:
        async with open_store(url) as store:
            return len(await store.list_run(batch_id))

    return anyio.run(count)
