"""Shared test configuration: both anyio backends, hypothesis profiles, the model-request switch."""

from __future__ import annotations

import os
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
