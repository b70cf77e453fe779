"""Fixtures the adapters' tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.adapters.http.loopback import LoopbackServer, serve


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    """A provider served on a loopback port, answering what the test scripts."""
    with serve() as srv:
        yield srv
