"""One chat completion with llama-cpp-python, as plain data: the part of the local judge that
runs native code.

Shared by :class:`scorecore_adapters.local.LocalModel` in process (``isolation="in_process"``)
and by its worker process (:mod:`scorecore_adapters._llama.worker`), so it imports nothing of
scorecore, and ``llama_cpp`` only where it is used. A call's outcome is a JSON-able mapping:
``{"reply": <llama-cpp-python's reply>}`` or ``{"error": {"kind", "code", "what",
"exception_type", "detail"}}``, which the judge turns into its ``Result``.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Final, cast, final

if TYPE_CHECKING:  # the local extra; imported where it is used
    from llama_cpp import Llama

DEFAULT_SEED: Final = 0
# Greedy decoding makes a small model repeat itself (the same list item until the output cap);
# a light penalty on tokens repeated within the last 256 breaks those loops. Measured on the
# bundled model: a typed reply with a list of findings looped to the 1,024-token cap without a
# penalty and ended in 75 tokens at 1.1; answer_relevancy's verdicts still looped with llama.cpp's
# default window of 64 tokens (the cycle is longer) and ended in 122 tokens with 256.
DEFAULT_REPEAT_PENALTY: Final = 1.1
PENALTY_WINDOW: Final = 256


@dataclass(frozen=True)
class LoadKey:
    """What a loaded model is shared by: the file and every option that changes the load."""

    path: str
    n_ctx: int
    n_threads: int | None
    chat_format: str | None
    repack_weights: bool
    # Token log-probabilities need llama.cpp to keep the logits of every position (n_ctx x
    # vocabulary floats): only a model asked for them is loaded that way.
    logits_all: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadKey:
        return cls(path=str(data["path"]), n_ctx=int(data["n_ctx"]),
                   n_threads=None if data["n_threads"] is None else int(data["n_threads"]),
                   chat_format=None if data["chat_format"] is None else str(data["chat_format"]),
                   repack_weights=bool(data["repack_weights"]),
                   logits_all=bool(data.get("logits_all", False)))


# --- the load parameters ----------------------------------------------------------------------
#
# llama.cpp's CPU backend may move a model's weights into "extra buffer types" when it loads
# them: layouts repacked for the CPU it finds (AMX tiles on recent Xeons, interleaved blocks on
# ARM and AVX2). A build compiled for its own CPU (-march=native, llama-cpp-python's default)
# repacks Q4_1 weights for AMX, and on an Intel Xeon with AMX the first matrix product then
# faults (SIGSEGV in ggml_backend_amx_mul_mat), ending the process. The model's
# ``use_extra_bufts`` field turns that path off; llama-cpp-python's ``Llama`` has no argument
# for it and loads inside ``__init__`` from ``llama_model_default_params()``, so the defaults
# that function returns are changed while a model loads.

_PARAMS_LOCK = threading.Lock()


def _without_extra_buffers(default: Callable[[], Any]) -> Callable[[], Any]:
    def params() -> Any:
        found = default()
        if hasattr(type(found), "use_extra_bufts"):  # builds before the field never repack
            found.use_extra_bufts = False
        return found

    return params


@contextlib.contextmanager
def load_parameters(*, repack_weights: bool) -> Iterator[None]:
    """Inside the block, models load with ``use_extra_bufts`` off unless ``repack_weights``.

    Process-wide while it lasts (a module attribute of llama-cpp-python), so loads are
    serialised on a lock; another thread's ``Llama(...)`` inside the block loads the same way.
    """
    if repack_weights:
        yield
        return
    import llama_cpp.llama_cpp as low  # noqa: PLC0415 - the local extra

    with _PARAMS_LOCK:
        default = low.llama_model_default_params
        low.llama_model_default_params = _without_extra_buffers(default)
        try:
            yield
        finally:
            low.llama_model_default_params = default


def never_repack() -> None:
    """Load every model of this process without extra buffer types (the server's guard)."""
    import llama_cpp.llama_cpp as low  # noqa: PLC0415 - the local extra

    low.llama_model_default_params = _without_extra_buffers(low.llama_model_default_params)


def used_load_parameters(llama: Llama) -> dict[str, Any]:
    """The load parameters a model was loaded with, read back from it (for tests and errors)."""
    params = llama.model_params
    return {"use_extra_bufts": bool(getattr(params, "use_extra_bufts", False)),
            "n_gpu_layers": int(params.n_gpu_layers)}


# --- the loaded model -------------------------------------------------------------------------


class Stopped(Exception):  # noqa: N818 - internal signal raised inside llama.cpp's loop
    """Raised between two tokens to end a generation (timeout or cancellation)."""


def _never() -> None:
    return None


@final
class Loaded:
    """A model loaded once per process, with the lock that serialises its calls.

    ``check`` is called between two generated tokens of the current call (set under the
    lock): it raises :class:`Stopped` to end the generation. It reaches llama-cpp-python's
    loop as a stopping criterion, which runs in Python (a logits processor runs inside a
    C callback, where an exception is only printed).
    """

    __slots__ = ("check", "llama", "lock")

    def __init__(self, llama: Llama) -> None:
        self.llama = llama
        self.lock = threading.Lock()
        self.check: Callable[[], None] = _never
        create_completion: Callable[..., Any] = llama.create_completion

        def criterion(_input_ids: Any, _logits: Any) -> bool:
            self.check()
            return False

        from llama_cpp.llama import StoppingCriteriaList  # noqa: PLC0415 - the local extra

        # The chat handler passes its own stopping criteria (end-of-turn tokens): add ours.
        def with_check(*args: Any, stopping_criteria: Any = None, **kwargs: Any) -> Any:
            criteria = StoppingCriteriaList([*(stopping_criteria or ()), criterion])
            return create_completion(*args, stopping_criteria=criteria, **kwargs)

        # The instance's own attribute, so create_chat_completion's handler calls it.
        # (Through Any: typed as a method when llama-cpp-python is installed, Any when not.)
        cast(Any, llama).create_completion = with_check


_LOADED: dict[LoadKey, Loaded] = {}
_LOADING = threading.Lock()
_VOCABS: dict[str, Any] = {}  # GGUF path -> a vocabulary-only llama_cpp model (to parse grammars)
_PARSES: dict[tuple[str, str], bool] = {}
_VOCAB_LOCK = threading.Lock()


def loaded(key: LoadKey) -> Loaded:
    """The model for ``key``, loaded on first use and kept for the process."""
    with _LOADING:
        found = _LOADED.get(key)
        if found is None:
            import llama_cpp  # noqa: PLC0415 - the local extra, only needed here
            # Half the cores by default, for prompts too: llama.cpp's threads spin while they
            # wait, and on a busy machine every core made it several times slower (measured:
            # 2.5 instead of 10-30 tokens/s on 2 shared cores).
            threads = key.n_threads or max(1, (os.cpu_count() or 1) // 2)
            with load_parameters(repack_weights=key.repack_weights):
                llama = llama_cpp.Llama(
                    model_path=key.path, n_ctx=key.n_ctx, n_threads=threads,
                    n_threads_batch=threads, chat_format=key.chat_format, seed=DEFAULT_SEED,
                    last_n_tokens_size=PENALTY_WINDOW, verbose=False,
                    logits_all=key.logits_all,
                )
            found = _LOADED[key] = Loaded(llama)
        return found


def grammar_parses(path: str, grammar: str) -> bool:
    """Whether llama.cpp's own parser accepts ``grammar`` (for ``path``'s vocabulary).

    llama.cpp crashes on a grammar it cannot parse, rather than failing the call, so every
    grammar is parsed here first, once: with a vocabulary-only load of the GGUF file.
    """
    with _VOCAB_LOCK:
        known = _PARSES.get((path, grammar))
        if known is not None:
            return known
        import llama_cpp  # noqa: PLC0415 - the local extra, only needed here
        from llama_cpp import _internals as internals  # noqa: PLC0415
        vocab_model = _VOCABS.get(path)
        if vocab_model is None:
            params = llama_cpp.llama_model_default_params()
            params.vocab_only = True
            if hasattr(type(params), "use_extra_bufts"):
                params.use_extra_bufts = False  # no weights are read; nothing to repack
            vocab_model = _VOCABS[path] = internals.LlamaModel(
                path_model=path, params=params, verbose=False
            )
        sampler = llama_cpp.llama_sampler_init_grammar(
            vocab_model.vocab, grammar.encode("utf-8"), b"root"
        )
        if sampler is not None:
            llama_cpp.llama_sampler_free(sampler)
        _PARSES[(path, grammar)] = parses = sampler is not None
        return parses


# --- one call ---------------------------------------------------------------------------------


def _error(kind: str, code: str | None, what: str,
           exc: BaseException | None = None) -> dict[str, Any]:
    return {"error": {
        "kind": kind, "code": code, "what": what,
        "exception_type": type(exc).__name__ if exc is not None else None,
        "detail": f"{exc!s:.500}" if exc is not None else None,
    }}


def complete(
    key: LoadKey, arguments: Mapping[str, Any], grammar: str | None, timeout: float | None,
    stop: threading.Event,
) -> dict[str, Any]:
    """Load (once) and run the model for one chat completion; the outcome as plain data.

    ``arguments`` are ``create_chat_completion``'s keyword arguments but the grammar, given as
    its GBNF text. ``stop`` (set by another thread) and ``timeout`` (seconds, from when the
    model starts on this call) end the generation at its next token.
    """
    try:
        model = loaded(key)
    except Exception as exc:  # noqa: BLE001 - a load failure is a value
        return _error("unknown", "model_load_failed", f"could not load {key.path}", exc)
    with model.lock:
        if stop.is_set():
            return _error("unknown", "cancelled", "cancelled")
        from llama_cpp.llama_grammar import LlamaGrammar  # noqa: PLC0415 - the local extra

        llama_grammar = None
        if grammar is not None:
            if not grammar_parses(key.path, grammar):
                return _error("bad_request", "schema_unsupported",
                              "llama.cpp could not parse the grammar converted from the output "
                              "schema")
            llama_grammar = LlamaGrammar.from_string(grammar, verbose=False)
        deadline = None if timeout is None else time.monotonic() + timeout

        def between_tokens() -> None:
            if stop.is_set():
                raise Stopped("cancelled")
            if deadline is not None and time.monotonic() > deadline:
                raise Stopped(f"no reply within {timeout:g} s")

        model.check = between_tokens
        try:
            reply = model.llama.create_chat_completion(**{"grammar": llama_grammar, **arguments})
        except Stopped as stopped:
            return _error("timeout", "ETIMEDOUT", str(stopped))
        except ValueError as exc:
            if "exceed context window" in str(exc):
                return _error(
                    "context_length", "context_length_exceeded",
                    f"the prompt does not fit the context of {key.n_ctx} tokens "
                    f"(raise LocalModel(n_ctx=...))", exc,
                )
            return _error("bad_request", None, "llama.cpp refused the call", exc)
        except TypeError as exc:  # an unknown keyword in ModelSettings.extra
            return _error("bad_request", None, "llama.cpp refused the call", exc)
        except Exception as exc:  # noqa: BLE001 - the adapter boundary
            return _error("unknown", None, "llama.cpp failed", exc)
        finally:
            model.check = _never
    if arguments.get("logprobs"):
        _plain_logprobs(reply)
    return {"reply": reply}


# What OpenAI writes for a token the sampler could never pick (JSON has no -inf).
_IMPOSSIBLE: Final = -9999.0


def _plain_logprobs(reply: Any) -> None:
    """Make the reply's log-probabilities plain JSON floats, in place: llama.cpp gives numpy
    floats (and -inf for impossible tokens), which the worker's frames cannot carry."""
    for choice in reply.get("choices") or ():
        content = (choice.get("logprobs") or {}).get("content") or ()
        alternatives = (alt for item in content for alt in item.get("top_logprobs") or ())
        for entry in (*content, *alternatives):
            number = float(entry["logprob"])
            entry["logprob"] = number if math.isfinite(number) else _IMPOSSIBLE
