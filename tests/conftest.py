"""Shared test configuration: both anyio backends, hypothesis profiles, the model-request switch
and the session's recursion limit."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from scorecore_adapters import allow_model_requests

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=60)
_RECURSION_LIMIT = sys.getrecursionlimit()

settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every async test runs on both anyio backends."""
    return str(request.param)


@pytest.fixture
def allow_requests() -> Iterator[None]:
    """Model requests allowed for the test (its judges are loopback servers or fakes).

    A module that needs it everywhere says ``pytest.mark.usefixtures("allow_requests")``.
    """
    with allow_model_requests():
        yield


@pytest.fixture(autouse=True)
def _interpreter_recursion_limit() -> None:
    """Each test starts from the recursion limit the session started with.

    mypy's in-process API (the docs and typing tests call it) raises the interpreter's limit to
    2**14 and leaves it there, so a test that checks how a reply nested deeper than the stack is
    handled would pass or fail depending on which tests ran before it in the process.
    """
    sys.setrecursionlimit(_RECURSION_LIMIT)
