"""One writer process per batch journal: a second process on the same file is refused with a
clear message (it submits nothing), and a kill of the holder releases the file."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from returns.result import Failure, Success

from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore_adapters._guard import allow_model_requests
from scorecore_adapters.batch import BatchJournal, OpenAIBatchModel
from scorecore_adapters.batch.fakes import FakeOpenAIBatchAPI
from scorecore_adapters.cli import main
from scorecore_adapters.testing import VirtualClock
from tests.adapters.cli.test_batch import SCORERS

ROOT = Path(__file__).resolve().parents[3]

_HOLDER = textwrap.dedent('''
    import sys, time
    from scorecore_adapters.batch import BatchJournal
    journal = BatchJournal(sys.argv[1])
    assert journal.claim() is None
    print("held", flush=True)
    time.sleep(600)
''')


@contextmanager
def held(path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the journal at ``path`` (SIGKILLed at the end if alive)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'adapters'}"}
    child = subprocess.Popen(  # noqa: S603 - this interpreter and a fixed script
        [sys.executable, "-c", _HOLDER, str(path)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "held"
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


def _request() -> JudgeRequest:
    return JudgeRequest(messages=[JudgeMessage(role="user", content="item 1")])


def _judge(path: Path, fake: FakeOpenAIBatchAPI, clock: VirtualClock) -> OpenAIBatchModel:
    # Given as a path, the journal is the judge's own: aclose() closes its connection too.
    return OpenAIBatchModel("judge-model", journal=str(path), client=fake.client(),
                            api_key="sk-test-secret-key", clock=clock, sleep=clock.sleep,
                            max_batch_size=1, max_wait=1.0, poll_interval=60.0)


@pytest.mark.anyio
async def test_a_second_process_is_refused_and_a_killed_holder_releases_the_journal(
    anyio_backend: str, tmp_path: Path,
) -> None:
    """While another process writes the journal, a judge on the same file fails its calls
    with a message naming the file and the process, and sends nothing; once that process is
    killed (-9), the file is free."""
    path = tmp_path / "cache.db"
    clock = VirtualClock()
    fake = FakeOpenAIBatchAPI(lambda body: '{"score": 1}', clock=clock)
    with allow_model_requests():
        with held(path) as holder:
            judge = _judge(path, fake, clock)
            refused = await judge.generate(_request())
            assert isinstance(refused, Failure)
            error = refused.failure()
            assert error.code == "journal_in_use"
            assert not error.is_retryable
            assert str(path) in error.message
            assert f"process {holder.pid}" in error.message
            assert fake.calls == []
            await judge.aclose()
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()
        judge = _judge(path, fake, clock)
        answered = await judge.generate(_request())
        assert isinstance(answered, Success)
        assert json.loads(answered.unwrap().text) == {"score": 1}
        assert len(fake.submitted) == 1
        await judge.aclose()


def test_journals_of_one_process_share_the_claim(tmp_path: Path) -> None:
    """Two journal objects of one process on one file both write (the lock is the process's);
    closing one keeps the other's claim."""
    path = tmp_path / "cache.db"
    first, second = BatchJournal(path), BatchJournal(path)
    assert first.claim() is None
    assert second.claim() is None
    first.close()
    assert second.claim() is None
    second.prepare("job1", provider="openai", base_url="http://x", model="m",
                   requests=[("job1-0", "k", {"model": "m"}, None)])
    assert [b.job for b in second.batches()] == ["job1"]
    second.close()


def test_reading_the_journal_needs_no_claim(tmp_path: Path) -> None:
    """A reader (``scorecore batches --pending``) reads while another process writes."""
    path = tmp_path / "cache.db"
    writer = BatchJournal(path)
    writer.prepare("job1", provider="openai", base_url="http://x", model="m",
                   requests=[("job1-0", "k", {"model": "m"}, None)])
    writer.close()
    with held(path):
        reader = BatchJournal(path)
        assert [b.job for b in reader.batches()] == ["job1"]
        assert reader.claim() is not None
        reader.close()


def test_eval_batch_api_on_a_journal_in_use_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """scorecore eval --batch-api on a --cache another process is writing: exit 2, and the
    message says which file, which process and what to do."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCORECORE_ALLOW_MODEL_REQUESTS", "1")
    (tmp_path / "scorers.py").write_text(SCORERS)
    (tmp_path / "data.jsonl").write_text(
        json.dumps({"id": "q0", "input": "q", "output": "a0"}) + "\n")
    (tmp_path / ".scorecore").mkdir()
    with held(tmp_path / ".scorecore" / "cache.db") as holder:
        out, err = io.StringIO(), io.StringIO()
        code = main(["eval", "scorers.py", "--data", "data.jsonl", "--store", "sqlite:s.db",
                     "--batch-api", "--batch-max-wait", "0.1s"], out=out, err=err)
    assert code == 2, out.getvalue() + err.getvalue()
    assert f"in use by process {holder.pid}" in err.getvalue()
    assert "--cache" in err.getvalue()
