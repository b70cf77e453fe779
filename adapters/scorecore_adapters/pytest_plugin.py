"""scorecore's pytest plugin: fixtures for scorer tests and readable scorer failures.

Installed with scorecore, it is loaded automatically (entry point ``pytest11``) and does
nothing to tests that do not use it. It offers:

- ``scripted_judge``: a factory of :class:`~scorecore_adapters.testing.ScriptedJudge`
  (``scripted_judge([{"score": 1}], supports_structured_output=True)``);
- ``virtual_runtime``: ``(runtime, clock)``, a :class:`~scorecore.Runtime` in virtual time
  with ids ``"run-1"``, ``"run-2"`` … and its :class:`~scorecore_adapters.testing.VirtualClock`;
- ``memory_store``: a fresh :class:`~scorecore_adapters.testing.InMemoryScoreStore`;
- ``memory_cache``: a fresh :class:`~scorecore_adapters.cache.MemoryJudgeCache`, for
  ``Runtime(meter=JudgeMeter(cache=memory_cache))``.

And it makes failures readable: a test that calls ``.unwrap()`` on a failed scorer run fails
with ``UnwrapFailedError: scorer 'x' failed at step …`` (the
:class:`~scorecore.ScorerRunError` message) instead of a bare ``UnwrapFailedError``, and an
``assert`` comparing a failed result shows the failure's scorer, step and cause.

Real model requests stay refused inside tests, as without the plugin (see
:func:`scorecore_adapters.allow_model_requests`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator, Iterable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from scorecore import Runtime
    from scorecore_adapters.cache import MemoryJudgeCache
    from scorecore_adapters.testing import InMemoryScoreStore, ScriptedJudge, VirtualClock

__all__ = ["memory_cache", "memory_store", "scripted_judge", "virtual_runtime"]

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
