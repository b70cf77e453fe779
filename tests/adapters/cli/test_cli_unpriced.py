"""Without --pricing, judge cost is "unpriced" on a cold run and on a warm (cached) one alike."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from scorecore_adapters.cli import main
from tests.adapters.cli.test_cli_economics import SCORERS


def _eval(*argv: str) -> str:
    out = io.StringIO()
    code = main(["eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db",
                 *argv], out=out, err=io.StringIO())
    assert code == 0, out.getvalue()
    return out.getvalue()


def _judge_lines(out: str) -> list[str]:
    """The cost lines (not the per-model call and token line, which has no cost in it)."""
    return [line for line in out.splitlines()
            if line.startswith("judge ") and not line.startswith("judge model ")]


def test_a_warm_run_without_pricing_says_unpriced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cold run said "unpriced"; the warm one said "$0.0000 … saving $0.0000". Both say
    unpriced: nothing was priced, so neither a cost nor a saving is known."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ECON_LOG", str(tmp_path / "calls.log"))
    (tmp_path / "scorers.py").write_text(SCORERS)
    (tmp_path / "data.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "input": "q", "output": f"a{i}"}) + "\n"
                for i in range(4)))
    cold = _judge_lines(_eval("--batch-id", "cold"))
    assert cold == ["judge graded: unpriced over 4 call(s), 0 cache hit(s) saving unpriced",
                    "judge cost: unpriced; cache 0 hit(s), 4 miss(es), saved unpriced"]
    warm = _judge_lines(_eval("--batch-id", "warm", "--output", "warm.json"))
    assert warm == ["judge graded: unpriced over 0 call(s), 4 cache hit(s) saving unpriced",
                    "judge cost: unpriced; cache 4 hit(s), 0 miss(es), saved unpriced"]
    economics = json.loads((tmp_path / "warm.json").read_text())["economics"]
    assert (economics["costUsd"], economics["scorers"][0]["costUsd"]) == (None, None)
