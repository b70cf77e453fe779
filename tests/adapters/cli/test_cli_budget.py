"""scorecore eval: --max-output-tokens, refusals as one cause, usage errors said out loud."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from scorecore_adapters.cli import main
from tests.cli_runs import eval_folder, run_eval

SCORERS = '''
import json, os
from returns.result import Success
from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.judge import JudgeResponse, JudgeUsage

DEFAULT_USAGE = '{"input_tokens": 50, "output_tokens": 20}'

class CapJudge:
    """Logs the cap each request carries; answers within it (or with JUDGE_USAGE)."""
    model_id = "cap-judge"
    provider = "test"
    supports_structured_output = False

    async def generate(self, request, /):
        with open(os.environ["CAP_LOG"], "a") as log:
            log.write(f"{request.settings.max_output_tokens}\\n")
        usage = json.loads(os.environ.get("JUDGE_USAGE", DEFAULT_USAGE))
        cap = request.settings.max_output_tokens
        if usage["output_tokens"] > 0:  # a judge keeping to its cap
            usage["output_tokens"] = min(usage["output_tokens"], cap)
        return Success(JudgeResponse(text='{"score": 0.8}', usage=JudgeUsage(**usage)))

graded = create_scorer(id="graded", description="d", judge=JudgeConfig(
    model=CapJudge(), instructions="Grade.",
)).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: f"Rate {c.run.output}"))
'''

ITEMS = 59


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CAP_LOG", str(tmp_path / "caps.log"))
    eval_folder(tmp_path, SCORERS, (f"answer {i}" + "!" * i for i in range(ITEMS)))
    (tmp_path / "prices.toml").write_text('[models."cap-judge"]\ninput = 1.0\noutput = 10.0\n')
    return tmp_path


def run(*argv: str) -> tuple[int, str, str]:
    return run_eval("--no-cache", *argv)


def caps(work: Path) -> list[int]:
    log = work / "caps.log"
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def test_the_default_cap_is_sent_and_max_output_tokens_replaces_it(work: Path) -> None:
    """Without the flag every request carries 1,024; --max-output-tokens N sends N."""
    code, out, _ = run()
    assert code == 0, out
    assert set(caps(work)) == {1024}
    (work / "caps.log").unlink()
    code, out, _ = run("--max-output-tokens", "64")
    assert code == 0, out
    assert set(caps(work)) == {64}
    assert len(caps(work)) == ITEMS


@pytest.mark.parametrize("bad", ["0", "-5", "1.5", "many"])
def test_a_bad_max_output_tokens_is_a_usage_error(work: Path, bad: str) -> None:
    """Exit 2 naming the flag and the value; nothing asked."""
    code, out, err = run("--max-output-tokens", bad)
    assert code == 2, out
    assert "--max-output-tokens" in err
    assert repr(bad) in err
    assert caps(work) == []


def test_budget_refusals_are_one_cause_that_says_what_to_change(
    work: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Refused calls with different amounts are one group in eval, show and the report."""
    # A call reserves ~$0.0105 (its prompt and 1,024 output tokens at $10 per million) and
    # costs ~$0.005: a $0.05 budget admits 8 calls and refuses the rest, each refusal with
    # its own amounts (the prompts differ in length).
    monkeypatch.setenv("JUDGE_USAGE", '{"input_tokens": 50, "output_tokens": 500}')
    _, out, _ = run("--pricing", "prices.toml", "--budget-usd", "0.05", "--batch-id", "b1",
                       "--max-failures", "100", "--concurrency", "1")
    asked = len(caps(work))
    refused = ITEMS - asked
    assert 0 < asked < 10, out
    assert f"top failure causes ({refused} failed scorer run(s) in 1 group(s)):" in out
    assert re.search(rf"^\s+{refused} x budget exhausted at generate_score in graded", out,
                     re.MULTILINE), out
    assert "judge budget exhausted: max_cost_usd=0.05 (raise it, --budget-usd, or lower the " \
           "output cap, --max-output-tokens" in out
    shown = io.StringIO()
    assert main(["show", "b1", "--store", "sqlite:s.db", "--json"], out=shown,
                err=io.StringIO()) == 0
    (group,) = json.loads(shown.getvalue())["failureCauses"]
    assert group["count"] == refused
    # Every run still keeps its own amounts.
    failures = io.StringIO()
    main(["show", "b1", "--store", "sqlite:s.db", "--failures"], out=failures,
         err=io.StringIO())
    assert len(re.findall(r"the call reserves up to 0\.01\d+ with 1,024 output tokens",
                          failures.getvalue())) == refused
    # Lowering the cap is what the message said to do: fewer calls are refused.
    run("--pricing", "prices.toml", "--budget-usd", "0.05", "--max-output-tokens", "100",
        "--max-failures", "100", "--concurrency", "1")
    assert len(caps(work)) - asked > asked


def test_usage_errors_are_printed(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replies with negative token counts: the summary says so and how they were charged."""
    monkeypatch.setenv("JUDGE_USAGE", '{"input_tokens": -1000000, "output_tokens": -5}')
    code, out, _ = run("--pricing", "prices.toml", "--output", "r.json")
    assert code == 0, out
    assert (f"judge usage: {ITEMS} reply(ies) reported token counts that cannot be right "
            f"(negative, fractional or absurd); each was charged at its worst case") in out
    report = json.loads((work / "r.json").read_text())
    assert report["economics"]["usageErrors"] == ITEMS
    assert report["economics"]["spentUsd"] > 0


SLOW_SCORERS = '''
import anyio.lowlevel
from returns.result import Success
from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore.judge import JudgeResponse, JudgeUsage

class SlowJudge:
    """Answers after letting the other runs' calls start, spending 50 input and 20 output
    tokens."""
    model_id = "cap-judge"
    provider = "test"
    supports_structured_output = False

    async def generate(self, request, /):
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        return Success(JudgeResponse(text='{"score": 0.8}',
                                     usage=JudgeUsage(input_tokens=50, output_tokens=20)))

graded = create_scorer(id="graded", description="d", judge=JudgeConfig(
    model=SlowJudge(), instructions="Grade.",
)).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: f"Rate {c.run.output}"))
'''


def test_concurrency_one_and_eight_spend_and_refuse_the_same(work: Path) -> None:
    """16 calls under --budget-usd 0.002 at gpt-4o-mini's prices: a call reserves its 1,024
    output tokens ($0.0006) but spends $0.00002, so all 16 fit one after another; at the default
    concurrency 8 they wait for each other instead of being refused."""
    (work / "scorers.py").write_text(SLOW_SCORERS)
    (work / "data.jsonl").write_text("".join(
        json.dumps({"id": f"q{i}", "input": "q", "output": f"answer {i}"}) + "\n"
        for i in range(16)))
    (work / "prices.toml").write_text('[models."cap-judge"]\ninput = 0.15\noutput = 0.6\n')
    lines = {}
    for concurrency in ("1", "8"):
        code, out, err = run("--pricing", "prices.toml", "--budget-usd", "0.002",
                             "--concurrency", concurrency)
        assert code == 0, out + err
        (budget,) = [line for line in out.splitlines() if "budget" in line]
        lines[concurrency] = budget
    assert lines["1"] == lines["8"]
    assert "refused" not in lines["8"]
