"""LocalModel's worker process, with a fake worker speaking its protocol (fast, no model run).

The fake replies at once, or faults (SIGSEGV) when a message asks it to, or waits for a stop.
Marked ``real_model`` only because LocalModel needs llama_cpp installed to be built.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from scorecore import JudgeConfig, ModelSettings, PromptStep, create_scorer
from scorecore.evals import run_evals
from scorecore.judge import JudgeMessage, JudgeRequest

pytestmark = [pytest.mark.real_model, pytest.mark.anyio]

ROOT = Path(__file__).resolve().parents[3]

# What the fake does is said by the last message's content: "die" faults every time,
# "die-once:PATH" faults unless PATH exists (and creates it), "wait" waits for a stop frame,
# "echo:TEXT" answers TEXT after a short pause; anything else answers {"ok": true}.
FAKE = textwrap.dedent('''
    import json, os, signal, sys, time
    from scorecore_adapters._llama.worker import read_frame, write_frame
    request_fd, reply_fd = int(sys.argv[-2]), int(sys.argv[-1])
    busy = False
    while True:
        message = read_frame(request_fd)
        if message is None:
            os._exit(0)
        if message["op"] == "stop":
            continue
        if message["op"] == "parses":
            write_frame(reply_fd, {"id": message["id"], "parses": True})
            continue
        if message["op"] == "params":
            write_frame(reply_fd, {"id": message["id"], "params": {"use_extra_bufts": False}})
            continue
        content = message["arguments"]["messages"][-1]["content"]
        if content == "die" or (content.startswith("die-once:")
                                and not os.path.exists(content[9:])):
            if content.startswith("die-once:"):
                open(content[9:], "w").close()
            print("fake worker: decoding the next token", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        if content == "wait":
            stop = read_frame(request_fd)
            assert stop == {"op": "stop", "id": message["id"]}, stop
            write_frame(reply_fd, {"id": message["id"], "error": {
                "kind": "timeout", "code": "ETIMEDOUT", "what": "cancelled",
                "exception_type": None, "detail": None}})
            continue
        text = '{"ok": true}'
        if content.startswith("echo:"):
            time.sleep(0.01)
            text = content[5:]
        write_frame(reply_fd, {"id": message["id"], "reply": {
            "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}})
''')


@pytest.fixture
def fake_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from scorecore_adapters._llama import client as worker_client  # noqa: PLC0415

    monkeypatch.setattr(worker_client, "worker_command", lambda: [sys.executable, "-c", FAKE])
    worker_client.close_all()
    yield
    worker_client.close_all()


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"GGUF not really")
    return path


def _request(content: str, **settings: Any) -> JudgeRequest:
    return JudgeRequest(messages=[JudgeMessage(role="user", content=content)],
                        settings=ModelSettings(**settings))


def _worker_pid(model: Any) -> int:
    from scorecore_adapters._llama import client as worker_client  # noqa: PLC0415

    return worker_client.worker_for(model._key).pid


async def test_a_dead_worker_is_a_crashed_error_naming_the_signal_and_its_last_words(
    fake_worker: None, model_file: Path, anyio_backend: str
) -> None:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415

    model = LocalModel(model_file)
    first = _worker_pid(model)
    error = (await model.generate(_request("die"))).failure()
    assert error.kind == "crashed"
    assert error.code == "SIGSEGV"
    assert error.is_retryable
    assert "the local judge's worker died: SIGSEGV" in error.message
    assert "fake worker: decoding the next token" in error.message  # its stderr's tail
    reply = (await model.generate(_request("hello"))).unwrap()  # a new worker answers
    assert reply.text == '{"ok": true}'
    assert _worker_pid(model) != first


@pytest.mark.parametrize("retries", [0, 1])
async def test_a_batch_whose_worker_dies_once_loses_no_item(
    fake_worker: None, model_file: Path, tmp_path: Path, retries: int, anyio_backend: str
) -> None:
    """The worker dies on item b. Retried (the crash is retryable, as any judge error the
    usual retry rules retry), b is scored by a new worker; not retried, b fails with the
    crash as its cause. Either way every item has its one outcome and the others are scored."""
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415

    marker = tmp_path / "died"
    judge = JudgeConfig(model=LocalModel(model_file), instructions="Judge.",
                        model_settings=ModelSettings(max_retries=retries))
    scorer = (
        create_scorer(id="judged", description="d", judge=judge)
        .analyze(PromptStep(
            description="ok?",
            output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}},
                           "required": ["ok"]},
            create_prompt=lambda ctx: (f"die-once:{marker}" if ctx.run.output == "b"
                                       else "fine"),
        ))
        .generate_score(lambda ctx: 1.0 if ctx.results.analyze_step_result["ok"] else 0.0)
    )
    items = [{"id": name, "input": "q", "output": name} for name in ("a", "b", "c")]
    report = await run_evals(items, [scorer], keep_results=True)
    assert marker.exists()  # it did die
    outcomes = {r.item.id: o for r in report.results for o in r.outcomes}
    assert sorted(outcomes) == ["a", "b", "c"]
    assert (outcomes["a"].status, outcomes["c"].status) == ("scored", "scored")
    if retries:
        assert (outcomes["b"].status, outcomes["b"].score) == ("scored", 1.0)
        assert report.passed
    else:
        assert outcomes["b"].status == "failed"
        assert "the local judge's worker died: SIGSEGV" in outcomes["b"].error
        assert "fake worker: decoding the next token" in outcomes["b"].error
        assert not report.passed


async def test_a_cancelled_call_stops_the_workers_generation(
    fake_worker: None, model_file: Path, anyio_backend: str
) -> None:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415

    model = LocalModel(model_file)
    with anyio.move_on_after(0.3):
        await model.generate(_request("wait"))  # the fake waits for the stop frame
    with anyio.fail_after(20):  # the worker is free again: it got the stop
        reply = await model.generate(_request("hello"))
    assert reply.unwrap().text == '{"ok": true}'


def test_calls_from_many_threads_and_event_loops_never_mix_replies(
    fake_worker: None, model_file: Path
) -> None:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415

    models = [LocalModel(model_file), LocalModel(model_file)]  # one worker for both
    got: dict[str, str] = {}

    def loop(index: int, backend: str) -> None:
        async def main() -> None:
            async def ask(model: Any, text: str) -> None:
                got[text] = (await model.generate(_request(f"echo:{text}"))).unwrap().text

            async with anyio.create_task_group() as tg:
                for k in range(5):
                    tg.start_soon(ask, models[k % 2], f"{index}-{k}")

        anyio.run(main, backend=backend)

    threads = [threading.Thread(target=loop, args=(i, ("asyncio", "trio")[i % 2]))
               for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(got) == 20
    assert all(text == reply for text, reply in got.items())


_PARENT = textwrap.dedent('''
    import os, sys, time
    import anyio
    from scorecore_adapters._llama import client as worker_client
    from scorecore_adapters.local import LocalModel
    from scorecore.judge import JudgeMessage, JudgeRequest
    worker_client.worker_command = lambda: [sys.executable, "-c", sys.argv[2]]
    model = LocalModel(sys.argv[1])
    request = JudgeRequest(messages=[JudgeMessage(role="user", content="hi")])
    anyio.run(model.generate, request)
    child = os.fork()
    if child == 0:
        time.sleep(600)
        os._exit(0)
    print(worker_client.worker_for(model._key).pid, child, flush=True)
    time.sleep(600)
''')


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_the_worker_ends_when_its_parent_is_killed_even_after_a_fork(
    fake_worker: None, model_file: Path
) -> None:
    """kill -9 of the process that started the worker ends the worker, although a child it
    forked before (and that lives on) inherited the process's memory and descriptors."""
    parent = subprocess.Popen(  # noqa: S603 - our interpreter
        [sys.executable, "-c", _PARENT, str(model_file), FAKE], stdout=subprocess.PIPE,
        text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(ROOT), str(ROOT / "adapters"), os.environ.get("PYTHONPATH", "")])},
    )
    assert parent.stdout is not None
    worker, child = (int(word) for word in parent.stdout.readline().split())
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        assert _gone(child, 0) is False  # the forked child still runs
        assert _gone(worker, 20), "the worker outlived its parent"
    finally:
        for pid in (worker, child):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        parent.stdout.close()
