"""The local judge on the bundled model, when llama.cpp's process dies (marked ``real_model``).

The load parameters that crash some CPUs are off (read back from the loaded model), a worker
SIGSEGV'd in the middle of a real generation during ``scorecore eval`` loses no item, and a
``llama_server()`` that dies is reported as such, not as a disconnection.
"""

from __future__ import annotations

import ast
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from scorecore import ModelSettings
from scorecore.judge import JudgeMessage, JudgeRequest
from scorecore.judge.retry import is_retryable_error
from scorecore_adapters import allow_model_requests

pytestmark = [pytest.mark.real_model, pytest.mark.anyio]

ROOT = Path(__file__).resolve().parents[3]


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), str(ROOT / "adapters"), os.environ.get("PYTHONPATH", "")])}


def _descendants(pid: int, marker: str) -> list[int]:
    """Processes below ``pid`` whose command line contains ``marker`` (from /proc)."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            commands[int(entry.name)] = command.decode(errors="replace")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found = []
    for child, command in commands.items():
        node = child
        while node in parents and node != pid and node > 1:
            node = parents[node]
        if node == pid and child != pid and marker in command:
            found.append(child)
    return found


@pytest.mark.parametrize("isolation", ["process", "in_process"])
def test_models_load_without_the_extra_buffer_types(isolation: str) -> None:
    """Read back from the loaded model: no weight repacking (the path that faults on AMX
    Xeons), whichever the CPU; repack_weights=True opts back in."""
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    assert LocalModel(isolation=isolation).load_parameters()["use_extra_bufts"] is False  # type: ignore[arg-type]


async def test_in_process_answers_as_the_worker_does(anyio_backend: str) -> None:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    request = JudgeRequest(messages=[JudgeMessage(role="user", content="Say yes.")],
                           settings=ModelSettings(max_output_tokens=6))
    worker = (await LocalModel().generate(request)).unwrap()
    here = (await LocalModel(isolation="in_process").generate(request)).unwrap()
    assert (here.text, here.usage) == (worker.text, worker.usage)


def test_repack_weights_opts_back_in_and_is_a_load_of_its_own() -> None:
    from scorecore_adapters.local import LocalModel  # noqa: PLC0415 - needs the local extra

    # In a worker of its own (another load key), so a CPU it crashes only loses that worker.
    assert LocalModel(repack_weights=True).load_parameters()["use_extra_bufts"] is True
    assert LocalModel().load_parameters()["use_extra_bufts"] is False


def test_the_servers_model_loads_without_the_extra_buffer_types() -> None:
    """The guard that runs llama_server()'s server turns them off too (its own report of the
    parameters read back from the loaded model)."""
    from scorecore_adapters.local import bundled_model_path  # noqa: PLC0415

    guard = subprocess.Popen(  # noqa: S603 - our interpreter
        [sys.executable, "-m", "scorecore_adapters._llama.guard", "--model",
         str(bundled_model_path()), "--host", "127.0.0.1", "--port", "0", "--n_ctx", "512"],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env=_environment(),
    )
    assert guard.stderr is not None
    try:
        lines = []
        for line in guard.stderr:
            lines.append(line)
            if line.startswith("scorecore: model loaded with "):
                params = ast.literal_eval(line.removeprefix("scorecore: model loaded with "))
                assert params["use_extra_bufts"] is False
                break
        else:
            pytest.fail("".join(lines[-20:]))
    finally:
        assert guard.stdin is not None
        guard.stdin.close()
        guard.wait(timeout=30)
        guard.stderr.close()


ITEMS = 6
SCORERS = textwrap.dedent('''
    from scorecore import JudgeConfig, ModelSettings, PromptStep, create_scorer
    from scorecore_adapters.local import LocalModel

    judge = JudgeConfig(model=LocalModel(n_ctx=1024), instructions="You check answers.",
                        model_settings=ModelSettings(max_retries=1, max_output_tokens=200))
    checked = (
        create_scorer(id="checked", description="a judged check", judge=judge)
        .analyze(PromptStep(
            description="verdict",
            output_schema={"type": "object", "required": ["verdict", "why"], "properties": {
                "verdict": {"enum": ["yes", "no"]},
                "why": {"type": "string", "maxLength": 120}}},
            create_prompt=lambda ctx: f"Question: {ctx.run.input}\\nAnswer: {ctx.run.output}\\n"
                                      "Does the answer answer the question? Say why at length.",
        ))
        .generate_score(lambda ctx: 1.0 if ctx.results.analyze_step_result["verdict"] == "yes"
                        else 0.0)
    )
''')


def test_a_worker_killed_mid_generation_loses_no_item_of_scorecore_eval(tmp_path: Path) -> None:
    """SIGSEGV to the worker while it generates: the command goes on (the crash is retried on
    a new worker), every item has exactly one stored row, and it exits normally."""
    scorers = tmp_path / "local_scorers.py"
    scorers.write_text(SCORERS)
    data = tmp_path / "items.jsonl"
    data.write_text("".join(
        f'{{"id": "q{i}", "input": "What is {i} plus {i}?", "output": "{2 * i}"}}\n'
        for i in range(ITEMS)))
    db = tmp_path / "scores.db"
    command = subprocess.Popen(  # noqa: S603 - our interpreter
        [sys.executable, "-m", "scorecore_adapters", "eval", str(scorers), "--data", str(data),
         "--store", f"sqlite:{db}", "--concurrency", "1", "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environment(),
        cwd=tmp_path,
    )
    killed = None
    try:
        deadline = time.monotonic() + 300
        used = 0.0
        while killed is None and command.poll() is None and time.monotonic() < deadline:
            workers = _descendants(command.pid, "scorecore_adapters._llama.worker")
            now = _cpu_seconds(workers[0]) if workers else 0.0
            # Generating: past its load (a fraction of a second of CPU) and busy right now.
            if now > 0.4 and now > used:
                os.kill(workers[0], signal.SIGSEGV)
                killed = workers[0]
            used = now
            time.sleep(0.05)
        out, err = command.communicate(timeout=600)
    finally:
        if command.poll() is None:
            command.kill()
            command.communicate()
    assert killed is not None, f"the worker was never seen generating: {out}{err}"
    assert command.returncode == 0, out + err
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute('SELECT "runId", "scorerId", "status" FROM scorecore_scores '
                            'ORDER BY "runId"').fetchall()
    finally:
        conn.close()
    assert [(run_id.rsplit(":", 1)[-1], scorer, status) for run_id, scorer, status in rows] == [
        (f"q{i}", "checked", "scored") for i in range(ITEMS)]


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# httpx's request body is an async generator; when the server dies while it is being sent,
# httpx abandons it unexhausted, and trio's collector hook warns about that when it is
# collected (on a loaded machine, during this test). The body is httpx's, nothing of ours
# stays open: the judge's client is closed by its async with.
@pytest.mark.filterwarnings(
    "ignore:Async generator 'httpx._content.ByteStream.__aiter__' was garbage collected"
    ":ResourceWarning")
async def test_a_server_that_dies_is_reported_with_its_signal(anyio_backend: str) -> None:
    """An HTTP judge pointed at llama_server() whose server faulted fails with kind "crashed"
    naming the signal, not with a disconnection."""
    from scorecore_adapters.local import llama_server  # noqa: PLC0415
    from scorecore_adapters.openai import OpenAIChatModel  # noqa: PLC0415

    with llama_server(n_ctx=512) as url:
        port = url.rsplit(":", 1)[1].split("/")[0]
        (guard,) = _descendants(os.getpid(), f"--port {port} ")
        request = JudgeRequest(messages=[JudgeMessage(role="user", content="Say hi.")],
                               settings=ModelSettings(max_output_tokens=4))
        async with OpenAIChatModel("smollm2", base_url=url, api_key="none") as judge:
            with allow_model_requests():
                assert (await judge.generate(request)).unwrap().text is not None
                os.kill(guard, signal.SIGSEGV)
                error = (await judge.generate(request)).failure()
    assert error.kind == "crashed"
    assert f"the local server at {url} died: SIGSEGV" in error.message
    assert "Fatal Python error: Segmentation fault" in error.message  # its output's tail
    assert not error.is_retryable
    assert not is_retryable_error(error)  # nothing restarts it: retrying cannot help
