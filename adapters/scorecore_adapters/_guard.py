"""The switch that keeps real HTTP judges from running inside a test suite by accident.

A test suite that forgets to inject a fake judge should fail fast and for free, not spend
money on a provider. So, while pytest runs a test (it sets ``PYTEST_CURRENT_TEST``), the HTTP
judges of :mod:`scorecore_adapters.openai` and :mod:`scorecore_adapters.anthropic` answer
``Failure(JudgeError(code="model_requests_disabled"))`` without touching the network, unless
requests were allowed explicitly.

Precedence, first match wins:

1. the innermost active :func:`allow_model_requests` block (or :func:`set_allow_model_requests`);
2. the environment variable ``SCORECORE_ALLOW_MODEL_REQUESTS`` (``1``/``true``/``yes`` allow,
   ``0``/``false``/``no`` refuse), for suites that run live integration tests on purpose;
3. refuse while ``PYTEST_CURRENT_TEST`` is set, allow otherwise.

The setting is process-wide (like pydantic-ai's ``ALLOW_MODEL_REQUESTS`` and
``stamina.set_testing``), not per task: it is meant for test set-up, not for production
control flow.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Imported when a refusal is built: pytest loads this package for scorecore's plugin, and
    # a test suite that never uses scorecore should not pay for importing it.
    from scorecore.judge import JudgeError

__all__ = [
    "ALLOW_MODEL_REQUESTS_ENV",
    "allow_model_requests",
    "model_requests_allowed",
    "refusal",
    "set_allow_model_requests",
]

ALLOW_MODEL_REQUESTS_ENV = "SCORECORE_ALLOW_MODEL_REQUESTS"

# ``None`` means "decide from the environment"; see the module docstring.
_override: bool | None = None

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def model_requests_allowed() -> bool:
    """Whether HTTP judges may send requests right now.

    >>> with allow_model_requests():
    ...     model_requests_allowed()
    True
    >>> with allow_model_requests(False):
    ...     model_requests_allowed()
    False
    """
    if _override is not None:
        return _override
    env = os.environ.get(ALLOW_MODEL_REQUESTS_ENV, "").strip().lower()
    if env in _TRUE:
        return True
    if env in _FALSE:
        return False
    return "PYTEST_CURRENT_TEST" not in os.environ


def set_allow_model_requests(allow: bool | None) -> None:
    """Set the switch process-wide: ``True`` allows, ``False`` refuses, ``None`` resets.

    Prefer :func:`allow_model_requests`, which restores the previous value.
    """
    global _override  # noqa: PLW0603 - the switch is deliberately process-wide, see module doc
    _override = allow


@contextmanager
def allow_model_requests(allow: bool = True) -> Iterator[None]:
    """Allow (or, with ``False``, refuse) HTTP judge requests inside the block.

    The previous setting is restored on exit, so blocks nest.

    >>> with allow_model_requests():
    ...     with allow_model_requests(False):
    ...         model_requests_allowed()
    ...     model_requests_allowed()
    False
    True
    """
    previous = _override
    set_allow_model_requests(allow)
    try:
        yield
    finally:
        set_allow_model_requests(previous)


def refusal(model_id: str, provider: str) -> JudgeError | None:
    """The error a judge returns when requests are refused, or ``None`` when they are allowed."""
    if model_requests_allowed():
        return None
    from scorecore.judge import JudgeError  # noqa: PLC0415 - see the import note above

    if _override is not None:
        where = "by allow_model_requests(False)"
    elif os.environ.get(ALLOW_MODEL_REQUESTS_ENV, "").strip().lower() in _FALSE:
        where = f"by {ALLOW_MODEL_REQUESTS_ENV}"
    else:
        where = "inside a test (PYTEST_CURRENT_TEST is set)"
    return JudgeError(
        kind="unknown",
        code="model_requests_disabled",
        message=(
            f"Requests to {provider} model {model_id!r} are disabled {where}, so a test suite "
            "never calls a paid API by accident. Use a fake judge from "
            "scorecore_adapters.testing, or allow real requests with "
            "`with scorecore_adapters.allow_model_requests(): ...` or by setting "
            f"{ALLOW_MODEL_REQUESTS_ENV}=1."
        ),
        is_retryable=False,
    )
