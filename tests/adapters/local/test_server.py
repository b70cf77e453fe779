"""llama_server: llama.cpp's OpenAI-compatible server started, answering and stopped for real
(marked ``real_model``: skipped without llama_cpp, failed instead under ``CI=true``)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import httpx
import pytest

from scorecore import ScorerDefinitionError

pytestmark = pytest.mark.real_model

SCHEMA = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}


def test_the_fixture_serves_the_bundled_model(llama_server_url: str) -> None:
    """The session fixture's URL answers /models and a chat completion constrained by a
    schema (json_object with schema: llama.cpp's own structured mode) with valid JSON."""
    assert llama_server_url.startswith("http://127.0.0.1:")
    assert llama_server_url.endswith("/v1")
    models = httpx.get(f"{llama_server_url}/models", timeout=10).json()
    assert [m["id"] for m in models["data"]] == ["SmolLM2-135M-Instruct.Q4_1"]
    reply = httpx.post(f"{llama_server_url}/chat/completions", timeout=120, json={
        "model": "anything",
        "messages": [{"role": "user", "content": "Rate 'Paris is in France' from 0 to 1."}],
        "response_format": {"type": "json_object", "schema": SCHEMA},
        "max_tokens": 32, "temperature": 0,
    }).json()
    content = json.loads(reply["choices"][0]["message"]["content"])
    assert isinstance(content["score"], int | float)
    assert reply["usage"]["completion_tokens"] > 0


def test_the_server_stops_when_the_block_ends() -> None:
    from scorecore_adapters.local import llama_server  # noqa: PLC0415 - needs the local extra

    with llama_server(model_alias="judge", n_ctx=512) as url:
        assert httpx.get(f"{url}/models", timeout=10).json()["data"][0]["id"] == "judge"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=2)


def test_a_server_that_cannot_start_says_why(tmp_path: Path) -> None:
    """A file llama.cpp cannot load: the server exits, and the error quotes its output."""
    from scorecore_adapters.local import LlamaServerError, llama_server  # noqa: PLC0415

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model")
    with pytest.raises(LlamaServerError) as caught, llama_server(junk, startup_timeout=60):
        pass
    error = caught.value
    assert "llama_cpp.server exited with code" in str(error)
    assert "--- llama_cpp.server output (last lines) ---" in str(error)
    assert error.output_tail.strip()
    assert error.output_tail in str(error)


@pytest.mark.parametrize(("option", "value", "says"), [
    ("n_ctx", 0, "llama_server.n_ctx must be an int >= 1, got 0"),
    ("port", 70000, "llama_server.port must be an int from 1 to 65535 or None, got 70000"),
    ("startup_timeout", 0, "llama_server.startup_timeout must be a number > 0, got 0"),
    ("extra_args", "--verbose", "llama_server.extra_args must be a sequence of str"),
    ("repack_weights", "yes", "llama_server.repack_weights must be a bool, got 'yes'"),
])
def test_bad_options_are_refused_before_anything_starts(
    option: str, value: object, says: str
) -> None:
    from scorecore_adapters.local import llama_server  # noqa: PLC0415 - needs the local extra

    with pytest.raises(ScorerDefinitionError) as caught, llama_server(**{option: value}):
        pass
    assert str(caught.value).startswith(says)


def _commands(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The command lines llama_server starts (the real server still starts)."""
    import subprocess  # noqa: PLC0415

    from scorecore_adapters._llama import server as server_module  # noqa: PLC0415 - needs the local extra

    started: list[list[str]] = []
    real_popen = subprocess.Popen

    def popen(command: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        started.append(list(command))
        return real_popen(command, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(server_module.subprocess, "Popen", popen)
    return started


def test_the_server_penalises_repeats_over_the_window_local_model_uses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """llama-cpp-python's server looks back 64 tokens for its repeat penalty, too short for the
    cycle of a small model listing the same verdict again and again until the output cap (a
    format failure): llama_server asks for LocalModel's 256 unless extra_args say otherwise."""
    from scorecore_adapters.local import llama_server  # noqa: PLC0415 - needs the local extra

    started = _commands(monkeypatch)
    with llama_server(n_ctx=512) as url:
        assert httpx.get(f"{url}/models", timeout=10).status_code == 200
    with llama_server(n_ctx=512, extra_args=["--last_n_tokens_size", "64"]):
        pass
    default, chosen = started
    assert default[default.index("--last_n_tokens_size") + 1] == "256"
    assert chosen.count("--last_n_tokens_size") == 1
    assert chosen[chosen.index("--last_n_tokens_size") + 1] == "64"


_PARENT = """
import os, sys, time
from scorecore_adapters.local import llama_server
with llama_server(n_ctx=512) as url:
    child = os.fork()  # a child that outlives its parent must not keep the server alive
    if child == 0:
        time.sleep(600)
        os._exit(0)
    print(url, child, flush=True)
    time.sleep(600)
"""


def test_the_server_stops_when_the_process_that_started_it_is_killed() -> None:
    """kill -9 of the process holding ``llama_server()`` leaves no server behind, even when
    that process had forked a child that lives on: the server watches a pipe from its parent
    and exits when the pipe closes (the forked child does not hold it)."""
    import signal  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import time  # noqa: PLC0415

    forked: list[int] = []
    parent = subprocess.Popen(  # noqa: S603 - our interpreter
        [sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        url, child = parent.stdout.readline().split()
        forked.append(int(child))
        assert url.startswith("http://127.0.0.1:"), url
        assert httpx.get(f"{url}/models", timeout=10).status_code == 200
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/models", timeout=2)
            except httpx.ConnectError:
                break  # gone
            if time.monotonic() > deadline:
                port = url.rsplit(":", 1)[1].split("/")[0]
                subprocess.run(["pkill", "-f", "--", f"--port {port} "], check=False)  # noqa: S603,S607
                pytest.fail(f"the server at {url} still answers 30 s after its parent was killed")
            time.sleep(0.5)
    finally:
        for pid in forked:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()


def test_a_port_taken_before_the_server_binds_it_is_chosen_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The free port chosen can be taken before the server binds it: the server's "address
    already in use" makes llama_server choose another port and start again."""
    import socket  # noqa: PLC0415

    from scorecore_adapters._llama import server as server_module  # noqa: PLC0415 - needs the local extra
    from scorecore_adapters.local import llama_server  # noqa: PLC0415

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        chosen: list[int] = []
        free_port = server_module.free_port

        def first_busy(host: str) -> int:
            chosen.append(busy if not chosen else free_port(host))
            return chosen[-1]

        monkeypatch.setattr(server_module, "free_port", first_busy)
        with llama_server(n_ctx=512, startup_timeout=60) as url:
            assert url == f"http://127.0.0.1:{chosen[-1]}/v1"
            assert httpx.get(f"{url}/models", timeout=10).status_code == 200
    assert len(chosen) == 2
    assert chosen[0] == busy


def test_a_port_named_by_the_caller_and_taken_is_an_error_that_says_so() -> None:
    """With ``port=`` given there is no other port to try: the error quotes the server's
    "address already in use"."""
    import socket  # noqa: PLC0415

    from scorecore_adapters.local import LlamaServerError, llama_server  # noqa: PLC0415

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        with pytest.raises(LlamaServerError) as caught, llama_server(
            port=busy, n_ctx=512, startup_timeout=60
        ):
            pass
    assert "address already in use" in caught.value.output_tail.lower()
