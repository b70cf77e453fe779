"""scorecore eval --batch-api through the OpenAI fake, and scorecore batches --pending."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scorecore_adapters.batch import BatchJournal
from tests.cli_runs import run

SCORERS = '''
import json, time
from scorecore import JudgeConfig, ScorePromptStep, create_scorer
from scorecore_adapters.batch.fakes import FakeOpenAIBatchAPI
from scorecore_adapters.openai import OpenAIChatModel

def answer(body):
    text = json.dumps(body["messages"])
    return json.dumps({"score": 0.5 if "a1" in text else 0.9})

FAKE = FakeOpenAIBatchAPI(answer, clock=time.monotonic, processing_seconds=0.05)
judge = OpenAIChatModel("gpt-4o-mini", api_key="sk-test-secret-key", client=FAKE.client())
graded = create_scorer(id="graded", description="d", judge=JudgeConfig(
    model=judge, instructions="Grade.",
)).generate_score(ScorePromptStep(description="s", create_prompt=lambda c: f"Rate {c.run.output}"))
'''


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCORECORE_ALLOW_MODEL_REQUESTS", "1")
    (tmp_path / "scorers.py").write_text(SCORERS)
    (tmp_path / "data.jsonl").write_text(
        "\n".join(json.dumps({"id": f"q{i}", "input": "q", "output": f"a{i}"}) for i in range(6))
        + "\n")
    (tmp_path / "prices.toml").write_text('[models."gpt-4o-mini"]\ninput = 1.0\noutput = 4.0\n')
    return tmp_path


def test_eval_batch_api_scores_through_one_batch_and_prints_progress(work: Path) -> None:
    """Six items, --batch-max-size 6: one provider batch; progress and the half-price cost."""
    code, out, err = run("eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db",
                         "--pricing", "prices.toml", "--batch-api", "--batch-max-size", "6",
                         "--batch-max-wait", "0.5s", "--batch-poll", "0.02")
    assert code == 0, out + err
    assert "batch API: 1 batch(es) submitted, 1 in progress, 0 done" in out
    assert re.search(r"batch API: 1 batch\(es\) submitted, 0 in progress, 1 done; "
                     r"6 request\(s\) answered of 6 submitted", out)
    with BatchJournal(work / ".scorecore" / "cache.db") as journal:
        (batch,) = journal.batches()
    assert batch.state == "ended"
    assert batch.counts == {"answered": 6}


def test_batch_api_refuses_a_cache_it_cannot_journal_in(work: Path) -> None:
    """--batch-api with --no-cache is a usage error naming the flag."""
    code, _, err = run("eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db",
                       "--batch-api", "--no-cache")
    assert code == 2
    assert "--batch-api" in err
    assert "--cache sqlite:PATH" in err


def test_a_bad_max_wait_names_the_flag_and_value(work: Path) -> None:
    """--batch-max-wait soon: refused, naming the value."""
    code, _, err = run("eval", "scorers.py", "--data", "data.jsonl", "--batch-api",
                       "--batch-max-wait", "soon")
    assert code == 2
    assert "--batch-max-wait" in err
    assert "'soon'" in err


def test_batches_pending_lists_the_journalled_batches_not_yet_collected(work: Path) -> None:
    """A submitted batch is pending; an ended one is not."""
    with BatchJournal(work / ".scorecore" / "cache.db") as journal:
        journal.prepare("scb_a", provider="openai", base_url="https://api.openai.com/v1",
                        model="gpt-4o-mini", requests=[("scb_a-0", "k0", {"model": "m"}, None)])
        journal.record("scb_a", "batch_123", status="in_progress")
        journal.prepare("scb_b", provider="anthropic", base_url="https://api.anthropic.com",
                        model="claude", requests=[("scb_b-0", "k1", {"model": "m"}, None)])
        journal.finish("scb_b", status="ended",
                       outcomes={"scb_b-0": ("answered", {"status": 200})})
    code, out, _ = run("batches", "--pending")
    assert code == 0
    assert "batch_123" in out
    assert "scb_b" not in out
    assert "1 pending provider batch(es)" in out
    code, out, _ = run("batches", "--pending", "--json")
    (pending,) = json.loads(out)["pending"]
    assert pending["providerBatchId"] == "batch_123"
    assert pending["requests"] == 1


def test_a_deleted_journal_is_a_warning_line(work: Path) -> None:
    """The cache file deleted between two --batch-api runs: the second says so in a
    `warning:` line (its requests may be submitted twice) and still scores."""
    argv = ("eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db",
            "--batch-api", "--batch-max-size", "6", "--batch-max-wait", "0.5s",
            "--batch-poll", "0.02")
    code, out, err = run(*argv)
    assert code == 0, out + err
    assert "warning:" not in out
    for name in ("cache.db", "cache.db-wal", "cache.db-shm"):
        (work / ".scorecore" / name).unlink(missing_ok=True)
    code, out, err = run(*argv)
    assert code == 0, out + err
    (line,) = [line for line in out.splitlines() if line.startswith("warning:")]
    assert "deleted or replaced" in line
    assert "submitted again" in line
