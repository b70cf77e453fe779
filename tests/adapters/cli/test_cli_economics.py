"""scorecore eval: the default judge cache, --no-cache, --pricing, budgets and --trials."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from scorecore_adapters.cache import SqliteJudgeCache
from scorecore_adapters.cli import _economics as cli_economics
from scorecore_adapters.cli import main
from tests.cli_runs import eval_folder
from tests.cli_runs import run_eval as run

SCORERS = '''
import os
from returns.result import Success
from scorecore import JudgeConfig, ModelSettings, ScorePromptStep, create_scorer
from scorecore.judge import JudgeResponse, JudgeUsage

class LoggingJudge:
    model_id = "logging-judge"
    provider = "test"
    supports_structured_output = False

    async def generate(self, request, /):
        with open(os.environ["ECON_LOG"], "a") as log:
            log.write("call\\n")
        return Success(JudgeResponse(text='{"score": 0.8}',
                                     usage=JudgeUsage(input_tokens=100, output_tokens=100)))

graded = create_scorer(id="graded", description="d", judge=JudgeConfig(
    model=LoggingJudge(), instructions="Grade.",
    model_settings=ModelSettings(max_output_tokens=100),
)).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: f"Rate {c.run.output}"))
'''


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ECON_LOG", str(tmp_path / "calls.log"))
    eval_folder(tmp_path, SCORERS, (f"a{i}" for i in range(4)))
    (tmp_path / "prices.toml").write_text('[models."logging-judge"]\ninput = 1.0\noutput = 10.0\n')
    return tmp_path


def calls(work: Path) -> int:
    log = work / "calls.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_the_default_cache_makes_a_rerun_free(work: Path) -> None:
    """Second eval: no judge call, the savings printed; --no-cache asks again."""
    code, out, _ = run("--pricing", "prices.toml")
    assert code == 0, out
    assert calls(work) == 4
    assert (work / ".scorecore" / "cache.db").exists()
    assert "judge cost: $0.0044; cache 0 hit(s), 4 miss(es)" in out
    code, out, _ = run("--pricing", "prices.toml")
    assert calls(work) == 4
    assert "judge cost: $0.0000; cache 4 hit(s), 0 miss(es), saved $0.0044" in out
    run("--no-cache")
    assert calls(work) == 8


def test_a_hard_budget_stops_and_a_resume_finishes(work: Path) -> None:
    """--budget-usd stops runs (exit 1, BudgetExhausted); --resume with more finishes them."""
    code, out, _ = run("--pricing", "prices.toml", "--budget-usd", "0.003",
                       "--batch-id", "b1", "--max-failures", "0")
    assert code == 1, out
    assert "budget: spent $" in out
    assert "of $0.0030 (hard)" in out
    assert "BudgetExhausted" in out or "judge budget exhausted" in out
    first = calls(work)
    assert first == 2  # a call's worst case is ~$0.0015, each costs $0.0011
    code, out, _ = run("--pricing", "prices.toml", "--budget-usd", "5", "--resume", "b1",
                       "--max-failures", "0", "--output", "r.json")
    assert code == 0, out
    assert calls(work) == 4
    report = json.loads((work / "r.json").read_text())
    assert report["economics"]["budget"]["maxCostUsd"] == 5
    assert report["economics"]["cacheMisses"] == 4 - first


def test_trials_are_printed_and_asked_n_times(work: Path) -> None:
    """--trials 3 asks the judge three times per item and prints the spread."""
    code, out, _ = run("--trials", "3", "--no-cache")
    assert code == 0, out
    assert calls(work) == 12
    assert "trials graded: mean 0.800 over 3 trials, per-item std dev 0.000, " \
           "0 item(s) changed verdict" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--budget-usd", "1"], "--budget-usd needs --pricing FILE"),
    (["--pricing", "missing.toml"], "--pricing: pricing file 'missing.toml'"),
    (["--cache", "redis://x"], "--cache: unknown cache URL"),
    (["--trials", "0"], "expected an integer >= 1, got '0'"),
    (["--budget-usd", "-1", "--pricing", "prices.toml"], "expected a number >= 0"),
])
def test_bad_flags_are_usage_errors(work: Path, argv: list[str], message: str) -> None:
    """Exit 2 with a message naming the flag, before any judge call."""
    code, out, err = run(*argv)
    assert code == 2
    assert message in err + out
    assert calls(work) == 0


@pytest.mark.parametrize(("name", "text"), [
    ("deep.json", "[" * 100_000 + "]" * 100_000),
    ("deep-object.json", '{"models": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001),
    ("deep.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n"),
    ("huge.json", '{"m": {"input": ' + "9" * 5_000 + ', "output": 1}}'),
])
def test_a_pricing_file_no_parser_can_read_is_one_usage_error(
    work: Path, name: str, text: str
) -> None:
    """A pricing file nested too deeply to parse (or with a number too long to read) is one
    line naming the file, exit 2, before any judge call: never a RecursionError traceback."""
    (work / name).write_text(text)
    code, out, err = run("--pricing", name)
    assert code == 2
    assert err.startswith(f"scorecore: error: --pricing: pricing file {name!r}")
    assert err.count("\n") == 1
    assert "Traceback" not in err + out
    assert calls(work) == 0


def test_show_prints_each_scorers_fingerprint(work: Path) -> None:
    """scorecore show names the fingerprint its rows recorded (and --json lists it)."""
    code, _, _ = run("--batch-id", "b1", "--no-cache")
    assert code == 0
    out, err = io.StringIO(), io.StringIO()
    assert main(["show", "b1", "--store", "sqlite:s.db"], out=out, err=err) == 0
    printed = re.search(r"fingerprint graded: ([0-9a-f]{12}) \(4 rows\)$", out.getvalue(), re.M)
    assert printed is not None, out.getvalue()
    out = io.StringIO()
    assert main(["show", "b1", "--store", "sqlite:s.db", "--json"], out=out, err=err) == 0
    (fingerprint,) = json.loads(out.getvalue())["fingerprints"]["graded"]
    assert fingerprint.startswith(printed.group(1))
    assert len(fingerprint) == 64


def test_show_prints_how_each_scorers_replies_were_structured(work: Path) -> None:
    """scorecore show says which structured-output mode the judge executions used (this judge
    has no native structured output, so the core wrote the schema into the prompt)."""
    assert run("--batch-id", "b1", "--no-cache")[0] == 0
    out, err = io.StringIO(), io.StringIO()
    assert main(["show", "b1", "--store", "sqlite:s.db"], out=out, err=err) == 0
    assert "structured output graded: prompt (4 executions)" in out.getvalue().splitlines()
    out = io.StringIO()
    assert main(["show", "b1", "--store", "sqlite:s.db", "--json"], out=out, err=err) == 0
    assert json.loads(out.getvalue())["structuredOutput"] == {"graded": {"prompt": 4}}


def test_the_command_closes_its_cache(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's connections are closed when eval is done (not left to the GC)."""
    opened: list[SqliteJudgeCache] = []

    def spy(url: str) -> SqliteJudgeCache:
        cache = SqliteJudgeCache(url.removeprefix("sqlite:"))
        opened.append(cache)
        return cache

    monkeypatch.setattr(cli_economics, "open_cache", spy)
    code, _, _ = run()
    assert code == 0
    (cache,) = opened
    assert cache._reader is None  # closed (it was opened by the run's judge calls)
    assert (work / ".scorecore" / "cache.db").exists()


def test_a_batch_without_judge_calls_prints_no_cost_line(work: Path) -> None:
    """Code scorers only: no judge was asked, so no cost or cache line clutters the summary."""
    (work / "scorers.py").write_text(
        "from scorecore import create_scorer\n"
        "exact = create_scorer(id='exact', description='d').generate_score(lambda c: 1.0)\n"
    )
    code, out, _ = run()
    assert code == 0, out
    assert "exact" in out
    assert "judge cost" not in out
    code, out, _ = run("--no-cache")
    assert "judge cost" not in out


def test_a_cache_that_cannot_be_opened_is_a_usage_error(work: Path) -> None:
    """--cache in a directory that cannot exist: exit 2 naming the cache, no judge asked."""
    (work / "blocker").write_text("a file, so blocker/cache.db cannot be created")
    code, out, err = run("--cache", "sqlite:blocker/cache.db")
    assert code == 2, out
    assert "cannot open the judge cache" in err
    assert "blocker/cache.db" in err
    assert calls(work) == 0


def test_eval_names_the_judge_model_its_calls_tokens_and_rate(work: Path) -> None:
    """Each judge model that answered gets a line: calls, tokens in/out, tokens per second;
    a rerun answered from the cache made no call, so it has no such line."""
    code, out, _ = run()
    assert code == 0, out
    line = next(x for x in out.splitlines() if x.startswith("judge model "))
    assert line.startswith(
        "judge model test logging-judge: 4 call(s), 800 tokens (400 in, 400 out); ")
    rate, total = re.search(
        r"; ([\d.,]+) output tokens/s, ([\d.,]+) tokens/s over the batch's [\d.]+ s$", line
    ).groups()  # type: ignore[union-attr]
    assert float(total.replace(",", "")) == pytest.approx(
        2 * float(rate.replace(",", "")), rel=1e-3)
    code, out, _ = run()
    assert code == 0, out
    assert "judge model " not in out
