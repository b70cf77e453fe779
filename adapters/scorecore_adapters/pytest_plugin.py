"""scorecore's pytest plugin: fixtures for scorer tests and readable scorer failures.

Installed with scorecore, it is loaded automatically (entry point ``pytest11``) and does
nothing to tests that do not use it. It offers:

- ``scripted_judge``: a factory of :class:`~scorecore_adapters.testing.ScriptedJudge`
  (``scripted_judge([{"score": 1}], supports_structured_output=True)``);
- ``virtual_runtime``: ``(runtime, clock)``, a :class:`~scorecore.Runtime` in virtual time
  with ids ``"run-1"``, ``"run-2"`` … and its :class:`~scorecore_adapters.testing.VirtualClock`;
- ``memory_store``: a fresh :class:`~scorecore_adapters.testing.InMemoryScoreStore`;
- ``memory_cache``: a fresh :class:`~scorecore_adapters.cache.MemoryJudgeCache`, for
  ``Runtime(meter=JudgeMeter(cache=memory_cache))``;
- ``llama_server_url`` (session-scoped): the base URL of
  :func:`~scorecore_adapters.local.llama_server` serving the bundled local model, started once
  per session and stopped at its end.

Tests marked ``@pytest.mark.real_model`` (and tests using ``llama_server_url``) run the bundled
model for real: without ``llama_cpp`` (the ``local`` extra) they are skipped with the reason,
except when the environment variable ``CI`` is true, where they fail: CI never skips them.

And it makes failures readable: a test that calls ``.unwrap()`` on a failed scorer run fails
with ``UnwrapFailedError: scorer 'x' failed at step …`` (the
:class:`~scorecore.ScorerRunError` message) instead of a bare ``UnwrapFailedError``, and an
``assert`` comparing a failed result shows the failure's scorer, step and cause.

Real model requests stay refused inside tests, as without the plugin (see
:func:`scorecore_adapters.allow_model_requests`).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from scorecore import Runtime
    from scorecore_adapters.cache import MemoryJudgeCache
    from scorecore_adapters.testing import InMemoryScoreStore, ScriptedJudge, VirtualClock

__all__ = [
    "llama_server_url",
    "memory_cache",
    "memory_store",
    "scripted_judge",
    "virtual_runtime",
]

_REAL_MODEL_MARKER = "real_model"
_CI_TRUE = frozenset({"1", "true", "yes", "on"})

# The scorecore modules are imported inside the fixtures and hooks, never when pytest loads
# the plugin: a project that has scorecore installed but does not use it pays nothing.


@pytest.fixture
def scripted_judge() -> Callable[..., ScriptedJudge]:
    """A factory of :class:`~scorecore_adapters.testing.ScriptedJudge` (same arguments)."""
    from scorecore_adapters.testing import ScriptedJudge  # noqa: PLC0415 - see module note

    return ScriptedJudge


@pytest.fixture
def virtual_runtime() -> tuple[Runtime, VirtualClock]:
    """``(runtime, clock)``: a runtime in virtual time with ids ``run-1``, ``run-2`` …"""
    from scorecore_adapters.testing import virtual_runtime as make  # noqa: PLC0415

    return make()


@pytest.fixture
def memory_store() -> InMemoryScoreStore:
    """A fresh, empty :class:`~scorecore_adapters.testing.InMemoryScoreStore`."""
    from scorecore_adapters.testing import InMemoryScoreStore  # noqa: PLC0415 - see module note

    return InMemoryScoreStore()


@pytest.fixture
def memory_cache() -> MemoryJudgeCache:
    """A fresh, empty :class:`~scorecore_adapters.cache.MemoryJudgeCache`."""
    from scorecore_adapters.cache import MemoryJudgeCache  # noqa: PLC0415 - see module note

    return MemoryJudgeCache()


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in _CI_TRUE


def _require_llama_cpp(what: str) -> None:
    """Skip (fail under ``CI=true``) when ``llama_cpp`` is not installed.

    Only a missing package skips: an installed ``llama_cpp`` that fails to import (a broken
    build, a missing shared library) raises as it is.
    """
    try:
        importlib.import_module("llama_cpp")
    except ModuleNotFoundError as exc:
        if exc.name != "llama_cpp":
            raise
        reason = f"{what} needs llama-cpp-python: pip install 'scorecore[local]'"
        if _in_ci():
            pytest.fail(f"{reason} (CI is set: real-model tests never skip in CI)",
                        pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def llama_server_url() -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT/v1``) of llama.cpp's server for the bundled model."""
    _require_llama_cpp("the llama_server_url fixture")
    from scorecore_adapters.local import llama_server  # noqa: PLC0415 - see module note

    with llama_server() as url:
        yield url


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``real_model`` marker (so ``--strict-markers`` accepts it)."""
    config.addinivalue_line(
        "markers",
        f"{_REAL_MODEL_MARKER}: runs the bundled local model for real (needs the local extra; "
        "skipped without llama_cpp, failed instead under CI=true)",
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A ``real_model`` test needs ``llama_cpp``: skip without it (fail under ``CI=true``)."""
    if item.get_closest_marker(_REAL_MODEL_MARKER) is not None:
        _require_llama_cpp(f"the real_model test {item.name}")


def _run_error_of(value: object) -> Any:
    """The :class:`~scorecore.ScorerRunError` inside a failed ``Result``, else ``None``."""
    if "returns" not in sys.modules or "scorecore" not in sys.modules:
        return None
    from returns.result import Failure  # noqa: PLC0415 - see module note

    from scorecore import ScorerRunError  # noqa: PLC0415 - see module note

    if isinstance(value, Failure):
        inner = value.failure()
        if isinstance(inner, ScorerRunError):
            return inner
    return None


def pytest_assertrepr_compare(op: str, left: object, right: object) -> list[str] | None:
    """``assert result == ...`` with a failed scorer run on either side shows why it failed."""
    errors = [(side, e) for side, e in (("left", _run_error_of(left)), ("right",
              _run_error_of(right))) if e is not None]
    if not errors:
        return None
    from scorecore_adapters._assertions import describe_run_error  # noqa: PLC0415

    lines = [f"{left!r} {op} {right!r}"]
    for side, error in errors:
        lines.append(f"the {side} side is a failed scorer run: {error}")
        lines.extend(describe_run_error(error).splitlines())
    return lines


def _leaves(exc: BaseException) -> Iterable[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def _explain_unwrap(exc: BaseException) -> None:
    if "returns" not in sys.modules:
        return
    from returns.primitives.exceptions import UnwrapFailedError  # noqa: PLC0415

    for leaf in _leaves(exc):
        if isinstance(leaf, UnwrapFailedError) and not leaf.args:
            error = _run_error_of(leaf.halted_container)
            if error is not None:
                # returns raises it without a message; pytest's "E" line and the short
                # summary print str(exc), so give it the run error's.
                leaf.args = (str(error),)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Name the scorer failure behind an ``UnwrapFailedError`` that ends a test."""
    try:
        return (yield)
    except BaseException as exc:
        _explain_unwrap(exc)
        raise
